/* perf_event: the samples' phase, drawn afresh every few periods.
 *
 * The event's timer fires every period of the thread's CPU, on a grid. A
 * program whose loop repeats in about the period (or a whole fraction of
 * it) is then sampled at the same few points of its loop, run after run of
 * samples: acc_deep, a ~0.95-1.0 ms round of a 500-deep recursion and a
 * flat loop, read 60-72 % deep at 1 kHz where its truth is 56 % (and 56 %
 * at 900, 1,100 or 10,000 Hz). The phase dithering (perf_period.c) moves
 * the grid by a few us per sample, too slowly against a loop whose samples
 * do not all cost the same: each deep sample (a longer stack copy) shifts
 * the grid back by its own cost, and the samples dwell where they cost
 * most. The cpuclock pacer draws each sample at random within its period
 * and has no such lock.
 *
 * Here each thread that has run past its period's first change (16
 * samples) also has a second task-clock event, user mode only, no ring,
 * which signals the thread (F_SETOWN_EX, F_SETSIG, O_ASYNC, as
 * perf_assist.c) after a random stretch of its CPU, uniform in [K/2, 3K/2],
 * and is then disabled (armed for one overflow: a thread that keeps the
 * signal blocked has one pending, never a queue of real-time signals).
 * Its handler restarts the sampling event's period from that moment
 * (PERF_EVENT_IOC_PERIOD restarts the timer: the period under way is
 * dropped), draws the next stretch and arms the event again: a fresh
 * phase, at a point of the thread's CPU that no loop of the program can
 * stay in step with. The signal comes in user mode only (the event
 * excludes the kernel), so it never interrupts a system call; it lands
 * where the thread runs, and the three ioctls are on the thread's own
 * events (no cross-CPU call).
 *
 * The dropped part of the period under way (half a period on average) is
 * made up by a shorter period while the kicks land: P x 2K / (2K + P) to
 * start with, then the delivered rate measured (perf_period.c: the base
 * period's adjustment, and the check that the kicks land). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

/* A stretch uniform in [K/2, 3K/2] from *rng (seeded here if 0). Each
 * thread's handler has its own; the writer draws the first stretches from
 * another. */
static uint64_t draw(uint64_t *rng, uint32_t tid)
{
    uint64_t k = sprof_perf_phase_mean_ns();
    if (!*rng) *rng = (sprof_now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)tid << 32)) | 1;
    return k / 2 + sprof_xorshift64(rng) % (k + 1);
}

static uint64_t writer_rng; /* writer only */

/* Writer (io_lock held), after a drain: thread t's phase event, once the
 * thread has run past the period's first change (16 samples: a thread
 * that ends within a few periods is not worth it; opening and arming an
 * event for a running thread each interrupt its CPU), armed for one
 * overflow, its signal owned by t. Where it cannot be had (no descriptor
 * left, the signal taken) the thread is sampled on the event's grid alone.
 * With the tick kernel sampler too: there the user samples' periods are
 * scaled to the CPU the task clock counted less the tick's kernel time,
 * which holds the periods the kicks drop (perf_ktick.c; when a user sample
 * stood for one period unscaled, they were counted nowhere: a busy loop's
 * weights covered 81 % of its CPU). */
void sprof_perf_phase_begin(struct sprof_thread *t)
{
    if (t->phase_tried || !g_sprof.cfg.perf_phase || !t->perf_period || t->perf_fd < 0)
        return;
    t->phase_tried = 1;
    if (!g_sprof.sig && sprof_signal_install() != 0) return;
    if (!sprof_signal_still_ours()) return;
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = draw(&writer_rng, t->tid);
    a.exclude_kernel = 1; /* its signal lands in user mode: no system call interrupted */
    a.exclude_hv = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return;
    /* owned first: the signal names the descriptor O_ASYNC was set on */
    sprof_fd_adopt(fd, &t->phase_fd, SPROF_FD_PERF);
    fd = sprof_fd_checked(&t->phase_fd);
    if (sprof_perf_signal_owner(fd, (pid_t)t->tid) != 0) {
        sprof_fd_close(&t->phase_fd);
        return;
    }
    /* One overflow, then the event disables itself until the handler arms
     * it again: a thread that keeps the signal blocked has one kick
     * pending, never a queue of them (a real-time signal queues each). */
    atomic_store_explicit(&t->phase_on, 1, memory_order_relaxed);
    if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0) {
        atomic_store_explicit(&t->phase_on, 0, memory_order_relaxed);
        sprof_fd_close(&t->phase_fd);
    }
    /* its period is shortened once its kicks are seen (perf_period.c) */
}

/* No more kicks for the thread (it ends, the runtime stops, or the program
 * took the signal over); its handler does not arm the event again. */
void sprof_perf_phase_disable(struct sprof_thread *t)
{
    atomic_store_explicit(&t->phase_on, 0, memory_order_relaxed);
    int fd = sprof_fd_checked(&t->phase_fd);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

void sprof_perf_phase_close(struct sprof_thread *t)
{
    atomic_store_explicit(&t->phase_on, 0, memory_order_relaxed);
    sprof_fd_close(&t->phase_fd);
}

/* Signal handler, on the thread: is this its kick (the phase event's last
 * overflow: POLL_HUP)? Then restart its sampling period here, draw the
 * next stretch and arm the event for it. */
int sprof_perf_phase_signal(struct sprof_thread *t, int fd)
{
    int kick = sprof_fd_load(&t->phase_fd);
    if (kick < 0 || fd != kick) return 0;
    if (!atomic_load_explicit(&t->phase_on, memory_order_relaxed)) return 1;
    atomic_fetch_add_explicit(&t->phase_kicks, 1, memory_order_relaxed);
    int ev = sprof_fd_load(&t->perf_fd);
    uint64_t p = sprof_perf_period_now(t);
    if (ev >= 0) ioctl(ev, PERF_EVENT_IOC_PERIOD, &p);
    uint64_t next = draw(&t->phase_rng, t->tid);
    ioctl(kick, PERF_EVENT_IOC_PERIOD, &next);
    ioctl(kick, PERF_EVENT_IOC_REFRESH, 1);
    return 1;
}
