/* A fast non-cryptographic 64-bit hash over bytes, for the aggregation
 * tables (raw samples, frames, stacks). Internal to offline-tools/lib. */
#ifndef SPROF_HASH64_H
#define SPROF_HASH64_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t sprof_mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ull;
    x ^= x >> 32;
    return x;
}

static inline uint64_t sprof_hash64(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t a = 0x9e3779b97f4a7c15ull ^ len, b = 0xc2b2ae3d27d4eb4full;
    while (len >= 16) {
        uint64_t x, y;
        memcpy(&x, p, 8);
        memcpy(&y, p + 8, 8);
        a = (a ^ x) * 0xff51afd7ed558ccdull;
        b = (b ^ y) * 0xc4ceb9fe1a85ec53ull;
        a = (a << 31) | (a >> 33);
        b = (b << 29) | (b >> 35);
        p += 16;
        len -= 16;
    }
    while (len >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        a = ((a ^ x) * 0xff51afd7ed558ccdull);
        a = (a << 31) | (a >> 33);
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t x = 0;
        memcpy(&x, p, len);
        b = (b ^ x) * 0xc4ceb9fe1a85ec53ull;
    }
    return sprof_mix64(a ^ (b * 0x9e3779b97f4a7c15ull));
}

#endif
