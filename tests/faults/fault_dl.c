/* The library fault_prog dlopen()s halfway through the run: its frames must
 * be named by symbol (fault_dl_hot, fault_dl_leaf) in sprof-fold's output
 * from the MAPPING the runtime records after the dlopen. */
#include <stdint.h>
#include <time.h>

uint64_t fault_dl_hot(uint64_t x, double secs);

__attribute__((noinline)) uint64_t fault_dl_leaf(uint64_t x)
{
    for (int i = 0; i < 2000; i++) x = x * 2862933555777941757ull + 3037000493ull;
    __asm__ volatile("" : "+r"(x));
    return x;
}

uint64_t fault_dl_hot(uint64_t x, double secs)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        x = fault_dl_leaf(x);
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
    return x;
}
