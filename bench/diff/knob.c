/* The real-change program of bench/diff/aa.sh: three functions with a fixed
 * amount of work each (not a time budget, so a slower function makes the
 * whole run longer, as a real regression does). Built twice: -DSLOWER_PCT=0
 * (before) and -DSLOWER_PCT=3 (after: parse_rows does 3 % more work).
 * Split (before): parse_rows ~40 %, score_rows ~35 %, write_rows ~25 %. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef SLOWER_PCT
#define SLOWER_PCT 0
#endif

static volatile uint64_t sink;

static __attribute__((noinline)) uint64_t spin(uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < n; i++)
        seed = seed * 6364136223846793005u + 1442695040888963407u;
    return seed;
}

static __attribute__((noinline)) void parse_rows(uint64_t n) { sink ^= spin(n * 40 * (100 + SLOWER_PCT) / 100, 1); }
static __attribute__((noinline)) void score_rows(uint64_t n) { sink ^= spin(n * 35, 2); }
static __attribute__((noinline)) void write_rows(uint64_t n) { sink ^= spin(n * 25, 3); }

int main(int argc, char **argv)
{
    uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 200;
    for (uint64_t r = 0; r < rounds; r++) {
        parse_rows(100000);
        score_rows(100000);
        write_rows(100000);
    }
    printf("%llu\n", (unsigned long long)sink);
    return 0;
}
