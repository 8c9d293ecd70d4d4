#ifndef CPREFETCH_H
#define CPREFETCH_H

/// Asks the CPU to bring the cache line holding `address` closer, for reading, without waiting and without faulting
/// (a hint: any address is allowed, an unmapped one is ignored). Swift has no access to the compiler's builtin.
static inline void cprefetch_read(const void *address) { __builtin_prefetch(address, 0, 3); }

/// As ``cprefetch_read``, for a line about to be written (fetched ready to be changed).
static inline void cprefetch_write(const void *address) { __builtin_prefetch(address, 1, 3); }

#endif
