/* Built with -fomit-frame-pointer (see CMakeLists.txt): a call chain whose
 * frames have no frame records, so the runtime's frame-pointer walk meets
 * rbp used as a general register. */
#include <stdint.h>
#include <time.h>

uint64_t fault_nofp_entry(uint64_t x, double secs);

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t nofp_leaf(uint64_t x)
{
    /* enough live values that rbp gets allocated as a plain register */
    uint64_t a = x, b = x ^ 0x9e3779b97f4a7c15ull, c = x + 7, d = x * 3, e = x >> 3, f = ~x;
    for (int i = 0; i < 2000; i++) {
        a = a * 6364136223846793005ull + b;
        b ^= a >> 7;
        c += b * d;
        d = (d << 5) ^ c;
        e += d ^ f;
        f = f * 31 + e;
        __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
    }
    return a ^ b ^ c ^ d ^ e ^ f;
}

__attribute__((noinline)) static uint64_t nofp_mid(uint64_t x)
{
    uint64_t r = nofp_leaf(x) + 1;
    __asm__ volatile("" : "+r"(r));
    return r;
}

__attribute__((noinline)) uint64_t fault_nofp_entry(uint64_t x, double secs)
{
    double t0 = mono();
    while (mono() - t0 < secs) {
        x = nofp_mid(x) + 1;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
