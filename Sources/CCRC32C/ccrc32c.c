// CRC-32C with the CPU's own instructions: the one piece of the checksum that Swift cannot express, since
// Swift has no portable access to target-specific intrinsics. The table-driven code in StrataFormat/CRC32C.swift
// stays the reference and the fallback; both give the same value for every input (tested).
#include "ccrc32c.h"

#include <string.h>

#if defined(__x86_64__)

/// shiftN[k][v]: the register state after N zero bytes, starting from state `v << 8k` (the register update is
/// linear over GF(2), so a state's shift is the XOR of its four bytes' shifts).
static uint32_t shift256[4][256];
static uint32_t shift512[4][256];

static inline uint32_t shift(uint32_t table[4][256], uint32_t state) {
    return table[0][state & 0xFF] ^ table[1][(state >> 8) & 0xFF] ^ table[2][(state >> 16) & 0xFF] ^ table[3][state >> 24];
}

__attribute__((target("sse4.2")))
static uint32_t feed_zeros(uint32_t state, size_t count) {
    uint64_t crc = state;
    for (size_t i = 0; i < count; i += 8) crc = __builtin_ia32_crc32di(crc, 0);
    return (uint32_t)crc;
}

static void make_shift_tables(void) {
    for (int k = 0; k < 4; k++) {
        for (uint32_t v = 0; v < 256; v++) {
            shift256[k][v] = feed_zeros(v << (8 * k), 256);
            shift512[k][v] = feed_zeros(v << (8 * k), 512);
        }
    }
}

__attribute__((target("sse4.2")))
static uint32_t update_sse42(uint32_t state, const unsigned char *p, size_t length) {
    uint64_t crc = state;
    // Three independent streams hide the instruction's 3-cycle latency on long inputs (pages, log records).
    while (length >= 3 * 256) {
        uint64_t crc1 = 0, crc2 = 0;
        const unsigned char *p1 = p + 256, *p2 = p + 512;
        for (int i = 0; i < 256; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p1 + i, 8);
            memcpy(&w2, p2 + i, 8);
            crc = __builtin_ia32_crc32di(crc, w0);
            crc1 = __builtin_ia32_crc32di(crc1, w1);
            crc2 = __builtin_ia32_crc32di(crc2, w2);
        }
        // The register is linear in its state: after the three blocks it equals the first stream's state carried
        // over 512 zero bytes, plus the second's over 256, plus the third's.
        crc = (uint64_t)(shift(shift512, (uint32_t)crc) ^ shift(shift256, (uint32_t)crc1) ^ (uint32_t)crc2);
        p += 3 * 256;
        length -= 3 * 256;
    }
    while (length >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __builtin_ia32_crc32di(crc, word);
        p += 8;
        length -= 8;
    }
    uint32_t c = (uint32_t)crc;
    while (length > 0) {
        c = __builtin_ia32_crc32qi(c, *p);
        p++;
        length--;
    }
    return c;
}

int ccrc32c_hardware_available(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("sse4.2")) return 0;
    make_shift_tables();
    return 1;
}

uint32_t ccrc32c_hardware_update(uint32_t state, const void *bytes, size_t length) {
    return update_sse42(state, (const unsigned char *)bytes, length);
}

#else

int ccrc32c_hardware_available(void) { return 0; }

uint32_t ccrc32c_hardware_update(uint32_t state, const void *bytes, size_t length) {
    (void)bytes;
    (void)length;
    return state;
}

#endif
