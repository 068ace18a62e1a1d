/* Compiled with -fomit-frame-pointer: a leaf that keeps no frame record, so
 * the return address into its caller sits at [sp] and rbp still points at
 * the caller's caller's record. */
#include <stdint.h>

__attribute__((noinline)) uint64_t rt_frameless_leaf(uint64_t x, int n)
{
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 17);
    return x;
}
