/* perf_event: each thread's sample period.
 *
 * Two things move it away from the nominal 1 s / hz of the thread's CPU:
 *
 * - The delivered rate (perf_event_paranoid 2, user mode only): the kernel
 *   skips a sample whose timer fires while the thread is in kernel mode
 *   (on this VM ~1 % of a CPU-bound thread's time, more for syscall-heavy
 *   code). The next sample's weight carries that CPU time, so the profile
 *   is not biased, but fewer samples arrive than asked: the base period is
 *   shortened by the fraction skipped (never below half the nominal one).
 *   The same measurement makes up for the periods the phase kicks drop
 *   (perf_phase.c) while they land, with kernel mode sampled too.
 *
 * - Phase dithering. The event's timer fires every period, always at the
 *   same phase of anything that repeats with a period commensurate with
 *   it, and the kernel's tick is one: a signal handler driven by a CPU
 *   timer (setitimer ITIMER_VIRTUAL/PROF, timer_create on a CPU clock)
 *   runs right after a tick, for a stretch the samples then never (or
 *   always) see. Measured: a handler that took 11 % of the CPU after every
 *   4 ms tick got 0.3 % of the samples at 1 kHz (perf record -e cpu-clock
 *   -F 1000: 0.15 %); the cpuclock pacer, whose due points are drawn at
 *   random, gave it 12 %. So the writer sets each thread's period to the
 *   base one changed by 0.1-0.3 % either way, at random, once it has 16
 *   samples and again every SPROF_PERF_DITHER_SAMPLES (1024) samples, the
 *   next change the opposite of the last. A period that far off the tick's
 *   divisors walks the samples' phase across the spacing of the tick's
 *   phases they could land at (one period) N |d| >= 1 times per window of
 *   N samples; setting it (PERF_EVENT_IOC_PERIOD) also restarts the timer
 *   where the thread is. The change is kept small because the samples
 *   weight counts samples: a method that runs within one window is counted
 *   at 1/(1+d) of its time (3-9 % changes every 128 samples: rperf's metric
 *   for acc_methods50 2.5 % instead of 0.5 %); the cpu weight, the task
 *   clock's advance, is exact either way. The opposite pairs keep a run's
 *   rate from wandering with its draws. Each setting loses the timer's
 *   partial period (half a period on average, 1/(2 x 1024) of the
 *   samples): the periods are that much shorter, from the count of the
 *   window that just ended, 1024 at least (where the delivered-rate adjustment runs, it
 *   sees that loss as skipped periods and makes up for it itself).
 *
 * Writer thread, io_lock held. */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <time.h>

#include "rt_internal.h"

enum {
    DITHER_FIRST = 16,     /* samples before a thread's first change */
    DITHER_MIN_PPM = 1000, /* the period moves by 0.1-0.3 % of the base one */
    DITHER_SPAN_PPM = 2000,
    ADJUST_WINDOW = 200,   /* samples per delivered-rate look */
};

static uint64_t dither_rng;

static uint64_t next_random(void)
{
    if (!dither_rng) dither_rng = sprof_now_ns(CLOCK_MONOTONIC) | 1;
    return sprof_xorshift64(&dither_rng);
}

/* The next change of a thread's period, in millionths of the base period:
 * a fresh draw, or the opposite of the previous one. */
int32_t sprof_perf_dither_next(int32_t *pending, uint64_t r)
{
    if (*pending) {
        int32_t d = *pending;
        *pending = 0;
        return d;
    }
    int32_t by = DITHER_MIN_PPM + (int32_t)((r >> 1) % (DITHER_SPAN_PPM + 1));
    int32_t d = (r & 1) ? by : -by;
    *pending = -d;
    return d;
}

uint64_t sprof_perf_dithered(uint64_t base, int32_t ppm)
{
    uint64_t by = base * (uint64_t)(ppm < 0 ? -(int64_t)ppm : ppm) / 1000000; /* base < 2^44 ns */
    uint64_t p = ppm < 0 ? base - by : base + by;
    return p < 10000 ? 10000 : p; /* the kernel's floor for hrtimer sampling */
}

static uint64_t base_period(const struct sprof_thread *t)
{
    return t->perf_base_period ? t->perf_base_period : g_sprof.period_ns;
}

/* The period that delivers one sample per base period over a window of
 * `window` samples and the restart's lost half period: base x 2n/(2n+1). */
uint64_t sprof_perf_restart_base(uint64_t base, uint64_t window)
{
    return window ? base - base / (2 * window + 1) : base;
}

/* perf_phase.c's mean stretch of CPU between two phase kicks: every other
 * period at 1 kHz or less (a kick costs the thread a signal and three
 * ioctls: ~16 us on the PVM guest measured here), no more than ~500 a
 * second of CPU above. */
uint64_t sprof_perf_phase_mean_ns(void)
{
    uint64_t k = 2 * g_sprof.period_ns;
    return k < 2000000ull ? 2000000ull : k;
}

/* The sampling period that delivers one sample per base of CPU when a
 * kick drops half a period on average every k of CPU. */
uint64_t sprof_perf_phase_base(uint64_t base, uint64_t k)
{
    return base - base * base / (2 * k + base);
}

/* Where the rate delivered is measured and the base period follows it
 * (adjust_base): at paranoid 2 without kernel sampling (the kernel's time
 * is skipped periods), and while a thread's phase kicks land (each drops
 * half a period on average; how often they come is the program's: the
 * phase event counts user mode only, so a program half in the kernel is
 * kicked every ~4 ms, not 2, and a period shortened for 2 ms delivered 111
 * % of the asked rate on template, one measured from the kicks' spacing
 * 96-98 % on the corpus). With the tick kernel sampler, whose skipped
 * periods are the kernel's, a sample's CPU is its period scaled to user
 * mode's CPU (perf_ktick.c): the rate per CPU second of user mode. */
static int rate_measured(const struct sprof_thread *t)
{
    return g_sprof.ksample == SPROF_KSAMPLE_NONE || t->phase_live;
}

static void set_period(struct sprof_thread *t, uint64_t base)
{
    /* the next window's count: the last one's, or at least the usual one
     * (the first setting comes after 16 samples) */
    uint64_t n = t->perf_dither_n > SPROF_PERF_DITHER_SAMPLES ? t->perf_dither_n : SPROF_PERF_DITHER_SAMPLES;
    uint64_t run = rate_measured(t) ? base : sprof_perf_restart_base(base, n);
    uint64_t want = sprof_perf_dithered(run, sprof_perf_dither_next(&t->perf_dither_pending, next_random()));
    int fd = sprof_fd_checked(&t->perf_fd);
    if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_PERIOD, &want) == 0) {
        t->perf_period = want;
        t->perf_base_period = base;
    }
    t->perf_dither_n = 0;
}

/* The fraction of periods that produced a sample in the window: below 1,
 * the base period shrinks so that the rate delivered is the rate asked. */
static void adjust_base(struct sprof_thread *t)
{
    const uint64_t nominal = g_sprof.period_ns;
    if (t->perf_win_n < ADJUST_WINDOW || !t->perf_win_cpu) return;
    double kept = (double)t->perf_win_periods / (double)t->perf_win_cpu;
    t->perf_win_n = t->perf_win_cpu = t->perf_win_periods = 0;
    if (kept > 1.0) kept = 1.0;
    uint64_t want = (uint64_t)((double)nominal * kept);
    if (want < nominal / 2) want = nominal / 2;
    uint64_t cur = base_period(t), diff = want > cur ? want - cur : cur - want;
    if (diff * 500 < nominal) return; /* within 0.2 %: leave it */
    set_period(t, want);
}

/* The thread's sampled CPU since its phase kicks were last seen to move. */
static void note_phase(struct sprof_thread *t, uint64_t task_clock_ns)
{
    if (t->phase_fd < 0) return;
    t->phase_quiet_ns += task_clock_ns;
}

/* Do the thread's phase kicks land? A thread that keeps the signal
 * blocked (a worker that blocks every signal) takes none: its period then
 * goes back to the nominal one, or it would deliver a quarter more samples
 * than asked at 1 kHz; while they land it is shorter. Judged per drain
 * (the samples come in batches, after the fact): no kick while the thread
 * ran 4 mean stretches of CPU. */
static int phase_live(struct sprof_thread *t)
{
    if (t->phase_fd < 0) return 0;
    uint64_t kicks = atomic_load_explicit(&t->phase_kicks, memory_order_relaxed);
    if (kicks != t->phase_kicks_seen) {
        g_sprof.phase_kicks += kicks - t->phase_kicks_seen; /* STATS */
        t->phase_kicks_seen = kicks;
        t->phase_quiet_ns = 0;
    }
    return t->phase_quiet_ns < 4 * sprof_perf_phase_mean_ns();
}

/* A phase kick's record (perf_phase.c): the part of a period its restart
 * dropped, counted as that much of a sample. */
void sprof_perf_period_note_part(struct sprof_thread *t, uint64_t task_clock_ns)
{
    note_phase(t, task_clock_ns);
    t->perf_win_cpu += task_clock_ns;
    t->perf_win_periods += task_clock_ns;
}

/* A sample dropped as sprof's own work: CPU of the thread no sample
 * stands for, which the delivered rate counts. */
void sprof_perf_period_note_lost(struct sprof_thread *t, uint64_t task_clock_ns)
{
    t->perf_win_cpu += task_clock_ns;
}

void sprof_perf_period_note(struct sprof_thread *t, uint64_t task_clock_ns)
{
    note_phase(t, task_clock_ns);
    t->perf_win_cpu += task_clock_ns;
    t->perf_win_periods += sprof_perf_period_now(t);
    t->perf_win_n++;
    t->perf_dither_n++;
}

void sprof_perf_period_update(struct sprof_thread *t)
{
    if (t->perf_fd < 0) return;
    if (rate_measured(t)) adjust_base(t); /* the kicks' dropped periods too */
    int live = phase_live(t);
    if (live != t->phase_live) {
        /* The kicks began to land, or stopped: the base period with or
         * without their share, from which the measurement goes on (the
         * share at the mean spacing of the kicks: a start, measured next) */
        t->phase_live = (uint8_t)live;
        /* (none where the kicks' records count what they drop) */
        t->perf_base_period = !live ? 0 : t->kicks ? base_period(t)
                                                   : sprof_perf_phase_base(base_period(t), sprof_perf_phase_mean_ns());
        t->perf_win_n = t->perf_win_cpu = t->perf_win_periods = 0;
        set_period(t, base_period(t));
        return;
    }
    /* the first change once the thread has a few samples: one that ends
     * within a period or two (3,000 short threads) is not worth an ioctl
     * and the interrupt of its CPU it costs */
    if ((!t->perf_period && t->perf_dither_n >= DITHER_FIRST) || t->perf_dither_n >= SPROF_PERF_DITHER_SAMPLES)
        set_period(t, base_period(t));
}
