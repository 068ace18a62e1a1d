/* Fixture for the fold integration test: a 50-deep recursion whose leaf
 * burns CPU either in a frameless leaf of our own ("frameless") or inside
 * glibc's memcmp/malloc/free, which keep no frame pointers ("glibc").
 * Built with -O2 -fno-omit-frame-pointer -momit-leaf-frame-pointer so the
 * leaf is frameless like gcc's small leaves. Runs ~`seconds` of CPU. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 50

static volatile uint64_t sink;
static char *buf_a, *buf_b;

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* frameless: no calls, no frame record */
__attribute__((noinline)) uint64_t leaf_spin(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t i = 0; i < 200000; i++)
        x = x * 6364136223846793005ull + (i ^ (x >> 29));
    return x;
}

__attribute__((noinline)) uint64_t leaf_glibc(uint64_t n)
{
    uint64_t acc = n;
    for (int i = 0; i < 200; i++) {
        acc += (uint64_t)memcmp(buf_a, buf_b, 1 << 16);
        void *p = malloc(64 + (size_t)(i & 7) * 16);
        acc += (uintptr_t)p & 0xff;
        free(p);
    }
    return acc;
}

static int use_glibc;

__attribute__((noinline)) uint64_t recurse(int depth, uint64_t n)
{
    uint64_t r;
    if (depth == 0)
        r = use_glibc ? leaf_glibc(n) : leaf_spin(n);
    else
        r = recurse(depth - 1, n + (uint64_t)depth);
    sink += r; /* work after the call: no tail call */
    return r ^ (uint64_t)depth;
}

int main(int argc, char **argv)
{
    use_glibc = argc > 1 && strcmp(argv[1], "glibc") == 0;
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    buf_a = calloc(1, 1 << 16);
    buf_b = calloc(1, 1 << 16);
    if (!buf_a || !buf_b)
        return 1;
    double end = cpu_seconds() + seconds;
    uint64_t n = 0;
    /* the clock is a syscall: read it rarely so the driver loop stays a
     * negligible share of the samples */
    do {
        for (int i = 0; i < 64; i++)
            n += recurse(DEPTH - 1, n);
    } while (cpu_seconds() < end);
    printf("%llu\n", (unsigned long long)n);
    return 0;
}
