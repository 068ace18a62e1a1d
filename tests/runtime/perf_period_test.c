/* perf_event's dithered sample period (runtime-stub/src/sampling/
 * perf_period.c) on its own: the changes come in opposite pairs of
 * 0.1-0.3 %, and samples taken with them, restarted every 1024 samples as the writer
 * does, see a stretch that follows the kernel's tick (a CPU timer's signal
 * handler) in proportion to its length, where a fixed period sees it at
 * one phase only; the rate stays the asked one. Simulated in CPU time:
 * no event is opened. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "rt_internal.h"
#include "unit_check.h"

struct sprof_globals g_sprof;

int sprof_fd_checked(int *fd)
{
    return *fd;
}


static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    return sprof_xorshift64(&rng);
}

enum { TICK = 4000000, HANDLER = 100000, PERIOD = 250000, WINDOW = SPROF_PERF_DITHER_SAMPLES };

/* share of samples within HANDLER ns after each tick, and samples per
 * PERIOD of CPU; dither: the writer's new period every WINDOW samples (its
 * restart lands somewhere in the next period: the partial one is lost) */
static void simulate(int dither, double *share, double *rate)
{
    int32_t pending = 0;
    uint64_t t = rnd() % TICK, period = PERIOD, n = 0, in = 0, since = 0;
    const uint64_t end = 400ull * 1000000000ull; /* 400 s of CPU: 1.6 M samples */
    uint64_t next = t + period;
    while (next < end) {
        t = next;
        n++;
        if (t % TICK < HANDLER) in++;
        next = t + period;
        if (dither && ++since == WINDOW) {
            since = 0;
            uint64_t restart = t + rnd() % period;
            period = sprof_perf_dithered(sprof_perf_restart_base(PERIOD, WINDOW),
                                         sprof_perf_dither_next(&pending, rnd()));
            next = restart + period;
        }
    }
    *share = (double)in / (double)n;
    *rate = (double)n * PERIOD / (double)end;
}

/* perf_phase.c's kicks: the sampling event restarted at stretches of CPU
 * uniform in [K/2, 3K/2], its period shortened to P x 2K / (2K + P): the
 * samples per CPU second are still 1 / P. */
static double kicked_rate(uint64_t period)
{
    g_sprof.period_ns = period;
    uint64_t k = sprof_perf_phase_mean_ns(), pa = sprof_perf_phase_base(period, k);
    uint64_t now = 0, next_sample = pa, next_kick = k / 2 + rnd() % (k + 1), samples = 0, end = 2000000000000ull;
    while (now < end) {
        if (next_sample <= next_kick) {
            now = next_sample;
            samples++;
            next_sample = now + pa;
        } else {
            now = next_kick;
            next_sample = now + pa; /* PERF_EVENT_IOC_PERIOD: the period under way is dropped */
            next_kick = now + k / 2 + rnd() % (k + 1);
        }
    }
    return (double)samples * (double)period / (double)end;
}

int main(void)
{
    int32_t pending = 0, lo = 1 << 30, hi = 0, unpaired = 0;
    for (int i = 0; i < 10000; i++) {
        int32_t a = sprof_perf_dither_next(&pending, rnd()), b = sprof_perf_dither_next(&pending, rnd());
        int32_t m = a < 0 ? -a : a;
        if (b != -a) unpaired++;
        if (m < lo) lo = m;
        if (m > hi) hi = m;
    }
    check(unpaired == 0, "each change is followed by its opposite", unpaired);
    check(lo >= 1000 && hi <= 3000 && hi - lo > 1800, "changes span 0.1-0.3 % of the period", hi / 1e6);
    check(sprof_perf_dithered(1000000, 50000) == 1050000 && sprof_perf_dithered(1000000, -50000) == 950000,
          "a change of +-5 % of 1 ms", (double)sprof_perf_dithered(1000000, 50000));
    check(sprof_perf_dithered(10000, -3000) == 10000, "never below the kernel's 10 us floor",
          (double)sprof_perf_dithered(10000, -3000));

    double share, rate, truth = (double)HANDLER / TICK;
    simulate(0, &share, &rate);
    check(share < 0.001 || share > 0.06, "a fixed period sees the after-tick stretch at one phase", share);
    simulate(1, &share, &rate);
    check(share > truth - 0.002 && share < truth + 0.002, "dithered: the stretch's share is its length's (2.5 %)",
          share);
    check(rate > 0.997 && rate < 1.003, "dithered: the asked rate", rate);

    /* the phase kicks: one kick every 2 periods (2 ms at least) of CPU */
    g_sprof.period_ns = 1000000;
    check(sprof_perf_phase_mean_ns() == 2000000 && sprof_perf_phase_base(1000000, 2000000) == 800000,
          "1 kHz: kicks every 2 ms, the period 0.8 ms", (double)sprof_perf_phase_base(1000000, 2000000));
    g_sprof.period_ns = 100000;
    check(sprof_perf_phase_mean_ns() == 2000000, "10 kHz: kicks every 2 ms", (double)sprof_perf_phase_mean_ns());
    for (uint64_t p = 100000; p <= 10000000; p *= 10) {
        double r = kicked_rate(p);
        check(r > 0.995 && r < 1.005, "kicked: the asked rate", r);
    }
    g_sprof.period_ns = PERIOD;

    /* the writer's bookkeeping: a thread with no event keeps its period */
    struct sprof_thread t = {0};
    t.perf_fd = -1;
    g_sprof.period_ns = PERIOD;
    t.perf_dither_n = 500;
    sprof_perf_period_update(&t);
    check(t.perf_period == 0, "no event: no period set", (double)t.perf_period);
    return failures ? 1 : 0;
}
