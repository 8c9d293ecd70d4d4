#ifndef CCRC32C_H
#define CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU computes CRC-32C in hardware (x86-64 SSE 4.2, or the ARMv8 CRC extension).
int ccrc32c_hardware_available(void);

/// Continues a CRC-32C over `length` bytes with the CPU's CRC instructions. `state` is the running register
/// value (already inverted by the caller, as in the table-driven Swift code). Only call it when
/// `ccrc32c_hardware_available()` returned non-zero.
uint32_t ccrc32c_hardware_update(uint32_t state, const void *bytes, size_t length);

#endif
