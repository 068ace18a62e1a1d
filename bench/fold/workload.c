/* Benchmark workload: 32 functions calling each other ~25 deep along a few
 * hundred distinct paths, CPU burnt in a leaf. Used twice by run.sh: as
 * the real binary (and symmap) behind the synthetic sprof trace, and as the
 * program `perf record -g` samples for the side-by-side figures. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
typedef uint64_t (*fn_t)(uint64_t seed, int depth);
extern fn_t table[32];

__attribute__((noinline)) static uint64_t burn(uint64_t x)
{
    for (int i = 0; i < 2000; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* next function: one of two, chosen by a bit of the seed (so each seed is a path) */
#define FN(i)                                                                  \
    __attribute__((noinline)) uint64_t fn_##i(uint64_t seed, int depth)        \
    {                                                                          \
        if (depth <= 0)                                                        \
            return burn(seed + i);                                             \
        int next = (i * 7 + 3 + (int)((seed >> (depth & 7)) & 1) * 11) & 31;   \
        uint64_t r = table[next](seed, depth - 1);                             \
        sink += r;                                                             \
        return r ^ i;                                                          \
    }
FN(0) FN(1) FN(2) FN(3) FN(4) FN(5) FN(6) FN(7) FN(8) FN(9) FN(10) FN(11) FN(12) FN(13) FN(14)
FN(15) FN(16) FN(17) FN(18) FN(19) FN(20) FN(21) FN(22) FN(23) FN(24) FN(25) FN(26) FN(27)
FN(28) FN(29) FN(30) FN(31)

fn_t table[32] = { fn_0, fn_1, fn_2, fn_3, fn_4, fn_5, fn_6, fn_7, fn_8, fn_9, fn_10,
                   fn_11, fn_12, fn_13, fn_14, fn_15, fn_16, fn_17, fn_18, fn_19, fn_20,
                   fn_21, fn_22, fn_23, fn_24, fn_25, fn_26, fn_27, fn_28, fn_29, fn_30, fn_31 };

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    double end = cpu_seconds() + seconds;
    uint64_t n = 0, i = 0;
    do {
        for (int k = 0; k < 64; k++, i++)
            n += table[i & 31]((i * 2654435761u) & 0xff, 24); /* 256 seeds x 32 roots */
    } while (cpu_seconds() < end);
    printf("%llu\n", (unsigned long long)n);
    return 0;
}
