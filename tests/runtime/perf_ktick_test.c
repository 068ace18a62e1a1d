/* perf_event with the tick kernel sampler (runtime-stub/src/sampling/
 * perf_ktick.c) on its own, simulated in 10 us steps of a thread's CPU:
 * user code A, user code B, and B's page faults (20-300 us in the kernel),
 * sampled every 1 ms of CPU by the event (an overflow in kernel mode is
 * dropped) and by a 4 ms tick (wall time: not in step with the CPU). The
 * user samples' periods, scaled to the CPU the tick left to user mode,
 * cover the thread's CPU, and A's share is its truth, where
 *  - the kernel time is independent of the timer (the scale stays 1);
 *  - each sample costs 60 us of interrupt in the kernel right after it,
 *    which drops no overflow and which the tick finds (a period per sample
 *    covered ~104 %: that time counted twice);
 *  - the phase kicks restart the period every 1-3 ms of user CPU, dropping
 *    the one under way (a period per sample covered ~80 %). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "unit_check.h"

struct sprof_globals g_sprof;


static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    return sprof_xorshift64(&rng);
}

struct result {
    double cover, a_share, a_truth, plain_cover;
};

static struct result simulate(uint64_t interrupt_ns, int kicks)
{
    static struct sprof_thread t;
    memset(&t, 0, sizeof t);
    const uint64_t step = 10000, period = 1000000, tick = 4000000, total = 60ull * 1000000000ull;
    uint64_t now = 0, next_sample = period, next_tick = tick, next_kick = 2000000, last_sample = 0, last_signal = 0;
    uint64_t user_cpu = 0, truth_a = 0, w_a = 0, w_b = 0, plain = 0, ticked = 0, left = 0, interrupt = 0;
    int stretch = 2, tick_in_kernel = 0; /* 0: A, 1: B, 2: B's fault */
    while (now < total) {
        if (!interrupt && !left) { /* A, then B and its fault, at random */
            stretch = stretch == 1 ? 2 : (int)(rnd() % 2);
            left = stretch == 2 ? 20000 + rnd() % 280000 : step + rnd() % 1000000;
            left -= left % step;
        }
        int in_kernel = interrupt || stretch == 2, in_a = !interrupt && stretch == 0;
        if (!in_kernel && tick_in_kernel) { /* a tick that found the kernel signals on the way out */
            sprof_perf_ktick_kernel(&t, now - last_signal);
            w_b += now - last_signal; /* a fault of B's, or an interrupt: B or A's, 1:1 */
            ticked += now - last_signal;
            last_signal = now;
            tick_in_kernel = 0;
        }
        now += step;
        if (interrupt) interrupt -= step;
        else left -= left < step ? left : step;
        if (in_a) truth_a += step;
        if (!in_kernel) user_cpu += step;
        if (now >= next_sample) { /* the event's timer: dropped in the kernel */
            if (!in_kernel) {
                uint64_t w = sprof_perf_ktick_weight(&t, period, now - last_sample);
                if (in_a) w_a += w;
                else w_b += w;
                plain += period;
                last_sample = now;
                interrupt = interrupt_ns;
            }
            next_sample += period;
        }
        if (kicks && !in_kernel && user_cpu >= next_kick) { /* the period under way dropped */
            next_sample = now + period;
            next_kick = user_cpu + 1000000 + rnd() % 2000001;
        }
        if (now >= next_tick) {
            if (in_kernel) tick_in_kernel = 1;
            else last_signal = now; /* a user-mode tick records nothing */
            next_tick += tick - 500000 + rnd() % 1000000;
        }
    }
    struct result r;
    r.cover = (double)(w_a + w_b) / (double)now;
    r.a_share = (double)w_a / (double)(w_a + w_b);
    r.a_truth = (double)truth_a / (double)now;
    r.plain_cover = (double)(plain + ticked) / (double)now;
    return r;
}

int main(void)
{
    struct {
        const char *what;
        uint64_t interrupt_ns;
        int kicks;
    } cases[] = {{"independent kernel time", 0, 0}, {"60 us interrupts", 60000, 0}, {"phase kicks", 0, 1}};
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct result r = simulate(cases[i].interrupt_ns, cases[i].kicks);
        char what[128];
        printf("%s: weights cover %.1f %% (a period per sample: %.1f %%); A %.2f %% for %.2f %%\n", cases[i].what,
               100 * r.cover, 100 * r.plain_cover, 100 * r.a_share, 100 * r.a_truth);
        snprintf(what, sizeof what, "%s: the weights cover the CPU", cases[i].what);
        check(r.cover > 0.99 && r.cover < 1.01, what, r.cover);
        snprintf(what, sizeof what, "%s: A's share within 0.6 pp", cases[i].what);
        check(r.a_share > r.a_truth - 0.006 && r.a_share < r.a_truth + 0.006, what, r.a_share - r.a_truth);
    }
    return failures ? 1 : 0;
}
