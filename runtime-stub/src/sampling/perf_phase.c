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
 * The part of the period under way that the restart drops (half a period
 * on average) is CPU no sample of the event stands for. Left to the next
 * sample, a period after the kick, it went to wherever the thread was
 * then; and the kicks come in user mode only, so the sample after one is a
 * period after user code: acc_pagefault at 4 kHz, whose compute is about a
 * period long, read its page-touching method 2.5-2.9 pp high by cpu weight
 * (1.2-1.4 by samples) against 0.1-0.4 without kicks. So the handler reads
 * the event's count before the restart and walks the stack it interrupted;
 * the writer splits the dropped stretch (from the previous sample's count
 * to the kick's) between the two stacks at its ends, as PARTIAL samples
 * (perf_sampler.c's emit_kicks), and the sample after the kick stands for
 * its own period. With the tick kernel sampler
 * the user samples' periods are scaled instead (perf_ktick.c), and where
 * a kick's walk cannot be kept (no ring room) the dropped part goes to
 * the next sample as before; the delivered-rate adjustment (perf_period.c)
 * makes up what no record counts. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

enum {
    KICK_BYTES = 64 * 1024, /* the kicks' walks the writer keeps per thread until a sample passes them */
    LAST_BYTES = 32 * 1024  /* the thread's last sample, kept for the next kick's other half */
};

/* Writer only. Records back to back in buf[head, tail), each a walk whose
 * weight_ns is the sampling event's count at its kick; and the thread's
 * last sample written (last_len 0: none, or too large), at last_count. */
struct sprof_perf_kicks {
    uint32_t head, tail;
    uint32_t last_len;
    uint64_t last_count;
    uint8_t buf[KICK_BYTES];
    uint8_t last[LAST_BYTES];
};

/* Where the handler's walks of the kicks go: a scratch record and the
 * thread's ring (as perf_assist.c's walks), and the writer's store; set
 * last, so that t->kicks implies the other two. Only where kernel mode is
 * sampled: with the tick sampler the user samples' periods are scaled
 * instead. */
static void kicks_ready(struct sprof_thread *t)
{
    if (t->kicks || g_sprof.ksample != SPROF_KSAMPLE_PERF || sprof_signal_walk_buffers(t) != 0) return;
    void *k = mmap(NULL, sizeof *t->kicks, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (k == MAP_FAILED) return;
    t->kicks = k;
}

void sprof_perf_phase_free(struct sprof_thread *t)
{
    if (t->kicks) munmap(t->kicks, sizeof *t->kicks);
    t->kicks = NULL;
}

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
    kicks_ready(t); /* before the first kick can come */
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
    atomic_store_explicit(&t->phase_on, 1, memory_order_release); /* kicks_ready's buffers before */
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

/* Handler: the stack the kick interrupted, with the event's count then
 * (in weight_ns) and the event's generation (flags bits 16-27: a count of
 * an event the writer has since replaced is another clock's). */
static void record_kick(struct sprof_thread *t, void *uc, uint64_t count, uint32_t gen)
{
    if (!atomic_load_explicit(&g_sprof.running, memory_order_relaxed) || sprof_control_paused()) return;
    uint32_t size = sprof_signal_walk_context(t, uc, 1);
    if (!size) return;
    struct sprof_rec_sample *rec = (struct sprof_rec_sample *)t->scratch;
    rec->flags = (rec->flags & 0xffffu) | SPROF_SAMPLE_KICK_ENTRY | ((gen & 0xfffu) << 16);
    rec->weight_ns = count;
    rec->h.size = size;
    void *dst = sprof_ring_reserve(&t->ring, size);
    if (!dst) return; /* the dropped part goes to the next sample */
    memcpy(dst, rec, size);
    sprof_ring_commit(&t->ring, size);
}

/* Signal handler, on the thread: is this its kick (the phase event's last
 * overflow: POLL_HUP)? Then restart its sampling period here (its count
 * and stack first recorded, where they can be), draw the next stretch and
 * arm the event for it. */
int sprof_perf_phase_signal(struct sprof_thread *t, int fd, void *uc)
{
    int kick = sprof_fd_load(&t->phase_fd);
    if (kick < 0 || fd != kick) return 0;
    if (!atomic_load_explicit(&t->phase_on, memory_order_acquire)) return 1;
    atomic_fetch_add_explicit(&t->phase_kicks, 1, memory_order_relaxed);
    uint32_t gen = atomic_load(&t->perf_gen);
    int ev = sprof_fd_load(&t->perf_fd);
    uint64_t p = sprof_perf_period_now(t), count = 0;
    if (ev >= 0) ioctl(ev, PERF_EVENT_IOC_PERIOD, &p);
    /* The count where the new period began, read just after: the stretch
     * the restart dropped ends there. Read before the restart, the few us
     * between (the ioctl: 20-40 us on a Firecracker guest) were in the next
     * sample's advance, one sample for more than a period: gcbench
     * delivered 99.2-99.4 % at 1 kHz. */
    int keep = t->kicks && uc && ev >= 0 && !(gen & 1u) &&
               read(ev, &count, sizeof count) == (ssize_t)sizeof count;
    uint64_t base = __atomic_load_n(&t->perf_count_base, __ATOMIC_RELAXED);
    if (keep && atomic_load(&t->perf_gen) == gen) record_kick(t, uc, count + base, gen);
    uint64_t next = draw(&t->phase_rng, t->tid);
    ioctl(kick, PERF_EVENT_IOC_PERIOD, &next);
    ioctl(kick, PERF_EVENT_IOC_REFRESH, 1);
    return 1;
}

static uint32_t record_bytes(const uint8_t *p)
{
    return ((const struct sprof_rec_sample *)(const void *)p)->h.size;
}

/* Writer: a kick's walk from the thread's ring, kept until a sample passes
 * its count. One of an event since replaced (perf_adapt.c) is dropped. */
void sprof_perf_phase_take(struct sprof_thread *t, const void *rec, uint32_t len)
{
    struct sprof_perf_kicks *k = t->kicks;
    const struct sprof_rec_sample *r = rec;
    if (!k || len < sizeof *r || (len & 7u) || len > sizeof k->buf) return;
    if (((r->flags >> 16) & 0xfffu) != (atomic_load(&t->perf_gen) & 0xfffu)) return;
    sprof_queue_make_room(k->buf, sizeof k->buf, &k->head, &k->tail, len, record_bytes);
    struct sprof_rec_sample *dst = (void *)(k->buf + k->tail);
    memcpy(dst, rec, len);
    dst->h.size = len;
    dst->flags &= 0xffffu; /* the entry mark and the generation go */
    k->tail += len;
}

void sprof_perf_phase_note_sample(struct sprof_thread *t, const void *rec, uint32_t len, uint64_t count)
{
    struct sprof_perf_kicks *k = t->kicks;
    if (!k) return;
    k->last_len = len <= sizeof k->last ? len : 0;
    if (k->last_len) memcpy(k->last, rec, len);
    k->last_count = count;
}

const void *sprof_perf_phase_last_sample(const struct sprof_thread *t, uint64_t count, uint32_t *len)
{
    const struct sprof_perf_kicks *k = t->kicks;
    if (!k || !k->last_len || k->last_count != count) return NULL;
    *len = k->last_len;
    return k->last;
}

int sprof_perf_phase_next_kick(struct sprof_thread *t, uint64_t count, void *buf, uint32_t cap, uint32_t *size,
                               uint64_t *dropped_ns)
{
    struct sprof_perf_kicks *k = t->kicks;
    while (k && k->head < k->tail) {
        const struct sprof_rec_sample *r = (const void *)(k->buf + k->head);
        uint32_t len = r->h.size;
        uint64_t at = r->weight_ns;
        if (at > count) return 0; /* after this sample: kept for a later one */
        k->head += len;
        if (k->head == k->tail) k->head = k->tail = 0;
        uint64_t last = t->perf_last_count;
        /* before the previous sample (the event's count then was not the
         * thread's: its set-up, sprof's own work), or more than the
         * period under way apart from it: nothing a restart dropped */
        if (at <= last || at - last > 2 * sprof_perf_period_now(t) || len > cap) continue;
        memcpy(buf, r, len);
        *size = len;
        *dropped_ns = at - last;
        t->perf_last_count = at;
        return 1;
    }
    return 0;
}
