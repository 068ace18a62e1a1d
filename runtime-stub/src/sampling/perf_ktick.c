/* perf_event with the tick kernel sampler: each stretch of CPU counted once.
 *
 * At perf_event_paranoid >= 2 the event samples user mode only: its timer
 * fires every period of the thread's CPU (both modes), and the kernel drops
 * the overflows that come in kernel mode. The tick kernel sampler
 * (kernel_sampler.c) records the kernel's time as KERNEL samples, each
 * weighted by the thread's CPU since the previous tick in the proportion
 * the tick charged to the kernel. A user sample stands for one period:
 * where the kernel's time is independent of the timer, the dropped
 * overflows are its share of the periods, and the user samples' periods
 * add up to the user time. Two things break that:
 *  - kernel time that follows the timer: each sample's own interrupt (and
 *    its signal, for a thread walked live or kicked) never drops an
 *    overflow, yet the tick finds it: counted twice. A busy loop making no
 *    system call, on a loaded CI machine whose ticks charged a quarter of
 *    its CPU to the kernel, had weights covering 126 % of its CPU. (Such
 *    ticks, neither a system call nor a fault, are no longer recorded at
 *    all: kernel_sampler.c. Their time is in the advance, not the kernel
 *    sum, and the scale gives it to the user samples.);
 *  - the phase kicks (perf_phase.c): each drops the period under way,
 *    half a period on average, which no sample stands for.
 * Taking the tick's time off the user samples after it (each its own
 * advance less what the tick recorded since) gave an exact total but a
 * biased split: the tick's weight covers its whole interval, before the
 * sample that pays for it, so what it over-counts is paid by the next
 * samples, in whatever code comes next (acc_pagefault: the code after the
 * faults 1-1.5 pp low, 0.1-0.6 before).
 *
 * So the user samples keep their periods, all scaled alike: per thread,
 * the CPU the task clock counted over its samples less the kernel time the
 * tick recorded, against the periods the samples were taken at. Where the
 * kernel time is independent of the timer the scale is 1 (its noise is the
 * tick's); what follows the timer, or what a kick drops, is spread over the
 * user samples as evenly as it came. The scale is taken every 16 samples
 * from the sums since the thread started, halved past 4,096 periods (a
 * change in the program is followed within a few seconds), and makes up
 * what the samples so far were given too little or too much. */
#include "rt_internal.h"

enum {
    SCALE_EVERY = 16,    /* samples between two scales (the first after 16) */
    SETTLED = 256,       /* samples after which the scale may go further from 1 */
    SPREAD = 256,        /* samples over which what is owed is made up */
    HALVE_PERIODS = 4096 /* periods summed before the ratio's sums are halved */
};

/* Writer, draining the thread's ring: a KERNEL sample of the tick's. */
void sprof_perf_ktick_kernel(struct sprof_thread *t, uint64_t ns)
{
    t->ktick_kernel_ns += ns;
    t->ktick_owed_ns -= (int64_t)ns;
}

/* Writer: the weight of a user sample taken at period_ns (the thread's CPU
 * for one period of the task clock) whose task clock advanced by
 * advance_ns (in CPU time) since the previous one. The scale is the
 * ratio of the sums (the user CPU per period), plus what the samples so
 * far were given too little or too much against the user CPU counted to
 * date (a scale learnt from the past lags a program whose kernel share
 * changes: 95 % of acc_pagefault's CPU covered), made up over the next
 * SPREAD samples. */
uint64_t sprof_perf_ktick_weight(struct sprof_thread *t, uint64_t period_ns, uint64_t advance_ns)
{
    t->ktick_advance_ns += advance_ns;
    t->ktick_periods_ns += period_ns;
    t->ktick_owed_ns += (int64_t)advance_ns;
    t->ktick_n++;
    if (t->ktick_n % SCALE_EVERY == 0 && t->ktick_periods_ns && period_ns) {
        uint64_t user = t->ktick_advance_ns > t->ktick_kernel_ns ? t->ktick_advance_ns - t->ktick_kernel_ns : 0;
        double s = (double)user / (double)t->ktick_periods_ns;
        s += (double)t->ktick_owed_ns / ((double)period_ns * SPREAD);
        /* a few ticks' noise (each tick's weight is its whole interval, 4
         * ms at 250 Hz) never zeroes the user samples, nor a thread's
         * first ones, with the fewest ticks behind them */
        double lo = t->ktick_n < SETTLED ? 0.5 : 0.25;
        if (s < lo) s = lo;
        if (s > 1.0 / lo) s = 1.0 / lo;
        t->ktick_scale_q16 = (uint32_t)(s * 65536.0 + 0.5);
        if (t->ktick_periods_ns > HALVE_PERIODS * period_ns) {
            t->ktick_advance_ns /= 2;
            t->ktick_kernel_ns /= 2;
            t->ktick_periods_ns /= 2;
        }
    }
    uint32_t q = t->ktick_scale_q16;
    uint64_t w = q ? (period_ns * q + 32768u) >> 16 : period_ns;
    t->ktick_owed_ns -= (int64_t)w;
    return w;
}
