/* rperf's Ruby busy-wait case (its benchmark/accuracy `rw` scenarios), in
 * Spinel's shape: 40 methods, sp_Wait_<i>, each waiting out its time by
 * reading its thread's CPU clock until that much has passed. That clock is
 * read by a system call (never in the vDSO), so most of each method's CPU is
 * kernel time: with perf_event at paranoid 2 and kernel time unsampled, a
 * port of this case scored rperf's metric at 6.7-11.7 %. As in rperf's
 * generator, each method has its own length (13-98 units) and about 30 % of
 * them are called 3-10 times; the calls run in one shuffled order. Scored
 * as the others (worst share error) and with rperf's metric. */
#include "acc_truth.h"

#include <stddef.h>

enum { METHODS = 40, MAX_CALLS = METHODS * 10 };
static int64_t method_ns[METHODS + 1];
static int method_calls[METHODS + 1];

/* The wait reads the clock until `ns` have passed; the salt keeps the bodies
 * apart (nothing for the compiler to fold into one). */
#define METHOD(i)                                                                                  \
    static ACC_METHOD void sp_Wait_##i(int64_t ns)                                                 \
    {                                                                                              \
        int64_t t0 = acc_cpu_ns(), t = t0;                                                         \
        uint64_t polls = 0;                                                                        \
        while (t - t0 < ns) {                                                                      \
            polls += 0x51ed + i;                                                                   \
            t = acc_cpu_ns();                                                                      \
        }                                                                                          \
        acc_sink += polls;                                                                         \
        method_ns[i] += t - t0;                                                                    \
    }
#define TEN(d) METHOD(d##0) METHOD(d##1) METHOD(d##2) METHOD(d##3) METHOD(d##4) \
               METHOD(d##5) METHOD(d##6) METHOD(d##7) METHOD(d##8) METHOD(d##9)
METHOD(1) METHOD(2) METHOD(3) METHOD(4) METHOD(5) METHOD(6) METHOD(7) METHOD(8) METHOD(9)
TEN(1) TEN(2) TEN(3)
METHOD(40)
#define REF(i) sp_Wait_##i,
#define REFS(d) REF(d##0) REF(d##1) REF(d##2) REF(d##3) REF(d##4) \
                REF(d##5) REF(d##6) REF(d##7) REF(d##8) REF(d##9)
static void (*const methods[METHODS + 1])(int64_t) = {
    NULL, REF(1) REF(2) REF(3) REF(4) REF(5) REF(6) REF(7) REF(8) REF(9) REFS(1) REFS(2) REFS(3) REF(40)};

static unsigned next_rand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    unsigned seed = 20260320;
    int units[METHODS + 1], calls[MAX_CALLS], n = 0;
    long total_units = 0;
    for (int i = 1; i <= METHODS; i++) {
        units[i] = 13 + (int)(next_rand(&seed) % 86);
        int repeat = next_rand(&seed) % 10 < 3 ? 3 + (int)(next_rand(&seed) % 8) : 1;
        for (int k = 0; k < repeat; k++)
            calls[n++] = i;
        method_calls[i] = repeat;
        total_units += (long)units[i] * repeat;
    }
    for (int k = n - 1; k > 0; k--) {
        int j = (int)(next_rand(&seed) % (unsigned)(k + 1)), t = calls[k];
        calls[k] = calls[j], calls[j] = t;
    }
    /* 1.6 budgets: at 4 kHz a call is 13-98 periods long, as rperf's calls at
     * its 1 kHz, and a perfect sampler (a grid) scores rperf's metric at
     * ~0.5 % (simulated), as on acc_methods50 */
    double unit_ns = 1.6 * acc_budget_s() * 1e9 / (double)total_units;
    for (int k = 0; k < n; k++)
        methods[calls[k]]((int64_t)(units[calls[k]] * unit_ns));
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_rperf_methods("sp_Wait_", METHODS, method_ns, method_calls);
    acc_truth("total", total);
    return 0;
}
