/* Ground truth for the accuracy programs (tests/accuracy/README.md).
 * Every program prints, on stdout:
 *   truth NAME NS   CPU ns spent inside function NAME (inclusive), or for a
 *                   NAME in brackets ([syscall], [page fault], [kernel]) in
 *                   samples whose leaf is such a kernel frame
 *   truth_low NAME NS  the truth of NAME is a range: at least NS, at most
 *                   its truth line (where part of it cannot be measured)
 *   truth total NS  CPU ns of everything the scope functions ran
 *   scope FUNC      the profile's denominator: weight of the stacks holding
 *                   any scope function ("*" = every stack)
 *   score rperf     also score rperf's mean relative error over the methods
 *   calls NAME N    method NAME was called N times (where rperf's metric is
 *                   scored: its expected noise follows from the calls' ends)
 * Methods measure themselves with CLOCK_THREAD_CPUTIME_ID (a system call) around
 * batches of >= ~50 us, never around each small step. */
#ifndef ACC_TRUTH_H
#define ACC_TRUTH_H
#include <stdint.h>

/* A Spinel-style top-level method: its own frame, never merged with another
 * (clang has no noclone and makes no constant-propagated clones either). */
#if defined(__has_attribute) && __has_attribute(noclone)
#define ACC_METHOD __attribute__((noinline, noclone))
#else
#define ACC_METHOD __attribute__((noinline))
#endif

/* Reads the mode ("quick" as argv[1], or SPROF_ACCURACY_QUICK=1) and
 * calibrates acc_spin. */
void acc_setup(int argc, char **argv);
/* CPU seconds the case aims at: 1.5 in full mode, 0.3 in quick mode. */
double acc_budget_s(void);
/* acc_spin units that take about `us` microseconds of CPU here. */
uint64_t acc_units(double us);
/* This thread's CPU time (user + system), ns. */
int64_t acc_cpu_ns(void);
/* The CPU a method's frame ran since t0 = acc_cpu_ns() at its start. The
 * frame holds both clock reads whole, the interval only the part of the
 * first after the clock was sampled and the part of the second before it:
 * one read in all is missing, added back here (its cost measured by
 * acc_setup). A read is a system call: 1.4 us on a PVM guest, ~1 % of a
 * 150 us method call, which put every method of acc_io and acc_stdio
 * 0.6-0.9 pp above its truth in the profiles of every mechanism. */
int64_t acc_span_ns(int64_t t0);
/* CLOCK_MONOTONIC, ns (vDSO, ~20 ns): for steps too short for acc_cpu_ns */
int64_t acc_mono_ns(void);
void acc_truth(const char *name, int64_t ns);
void acc_truth_low(const char *name, int64_t ns);
void acc_scope(const char *func);
/* func is nothing but system calls: nearly all of its weight in a profile
 * must end in a kernel leaf ([syscall ...]), not in its own user code */
void acc_kernel_only(const char *func);
/* The truth and call-count lines of methods PREFIX1..PREFIXn (ns[i] and
 * calls[i], i = 1..n) and "score rperf": rperf's metric over them. */
void acc_rperf_methods(const char *prefix, int n, const int64_t *ns, const int *calls);

extern volatile uint64_t acc_sink;

/* Compute work with no closed form; `salt` differs per caller so that no two
 * methods have identical bodies (GCC cannot fold them into one). */
static inline __attribute__((always_inline)) void acc_spin(uint64_t units, uint64_t salt)
{
    uint64_t x = salt;
    for (uint64_t i = 0; i < units; i++) {
        x = x * 6364136223846793005ULL + salt;
        x ^= x >> 29;
    }
    acc_sink += x;
}
#endif
