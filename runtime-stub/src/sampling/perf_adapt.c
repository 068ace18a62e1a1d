/* perf_event: each thread's stack copy follows what its samples need.
 *
 * The kernel copies a fixed number of bytes above sp into every sample
 * (sample_stack_user, 4 KiB by default) and walks at most
 * perf_event_max_stack frame pointers (127; only root may raise it). Deep
 * recursion, or a frameless function with a large frame, needs more of the
 * stack than that: such samples are marked STACK_CUT ([frames not
 * recorded]). Copying more for every thread costs every sample (8 KiB:
 * +1.5-2 us on gcbench), so only the threads whose samples are cut get a
 * larger copy: the writer reopens that thread's event with the largest copy
 * a record holds, then, once it has seen what the thread's stacks need,
 * shrinks it to that with a margin. The event's count goes on from the old
 * one's (perf_count_base), so no CPU is lost or counted twice.
 * Writer thread, io_lock held. */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt_internal.h"

enum {
    ADAPT_MAX_RESIZES = 6,     /* a thread's event is reopened at most this often */
    ADAPT_SHRINK_AFTER = 256,  /* samples within the copy before it may shrink */
    ADAPT_WINDOW = 8192,       /* the counts start over after this many samples */
};

void sprof_perf_note_reach(struct sprof_thread *t, const struct sprof_rec_sample *rec)
{
    if (rec->flags & SPROF_SAMPLE_OFF_STACK) {
        /* a fiber's or an alternate signal stack: its size is not the
         * thread's. A handler's on an alternate stack interrupted frames
         * on the thread's stack, which no copy holds; a fiber's chain
         * runs on into stale records there, which the offline side cuts
         * at the fiber's root anyway */
        t->perf_off_n++;
        if ((rec->flags & SPROF_SAMPLE_STACK_CUT) && sprof_rec_has_sigframe(rec)) t->perf_offcut_n++;
        return;
    }
    if (rec->flags & SPROF_SAMPLE_STACK_CUT) {
        t->perf_cut_n++;
        return;
    }
    t->perf_fit_n++;
    /* how far above sp the sample's words go: its outermost frame record,
     * or its last candidate word (the offline CFI unwinder needs those) */
    const uint32_t *fpoff = (const uint32_t *)((const uint64_t *)(rec + 1) + rec->nframes);
    const uint32_t *coff = fpoff + ((rec->nframes + 1u) & ~1u);
    uint32_t reach = rec->ncand ? coff[rec->ncand - 1] + 8u : 0;
    for (uint32_t i = rec->nframes; i-- > 0;) {
        if (fpoff[i] == SPROF_FPOFF_UNKNOWN) continue;
        if (fpoff[i] + 16u > reach) reach = fpoff[i] + 16u;
        break;
    }
    if (reach > t->perf_reach) t->perf_reach = reach;
}

static uint32_t round_up_kib(uint64_t v)
{
    return (uint32_t)((v + 1023u) & ~1023ull);
}

/* The copy this thread should have now, or 0 to keep the one it has. */
static uint32_t wanted_copy(const struct sprof_thread *t)
{
    const uint32_t base = g_sprof.cfg.perf_stack, cur = t->perf_stack ? t->perf_stack : base;
    uint32_t seen = t->perf_cut_n + t->perf_fit_n;
    /* cut in 1 sample in 64 or more: the largest copy; the samples after
     * it tell what is really needed */
    if (t->perf_cut_n >= 1 && (uint64_t)t->perf_cut_n * 64u >= seen && cur < SPROF_PERF_STACK_MAX)
        return SPROF_PERF_STACK_MAX;
    if (t->perf_cut_n == 0 && t->perf_fit_n >= ADAPT_SHRINK_AFTER && cur > base) {
        uint64_t need = round_up_kib((uint64_t)t->perf_reach + t->perf_reach / 4u + 512u);
        if (need < base) need = base;
        if (need * 4u <= (uint64_t)cur * 3u) return (uint32_t)need;
    }
    return 0;
}

static void reset_counts(struct sprof_thread *t)
{
    t->perf_cut_n = t->perf_fit_n = t->perf_reach = t->perf_off_n = t->perf_offcut_n = 0;
}

/* Reopen the thread's event with a copy of bytes; its samples so far are
 * drained from the old ring first. The attach state keeps the thread's own
 * exit and a pause from using the descriptor meanwhile. */
static void resize_copy(struct sprof_thread *t, uint32_t bytes)
{
    int a = atomic_load(&t->attach);
    if ((a != ATTACH_INLINE && a != ATTACH_DONE) || !atomic_compare_exchange_strong(&t->attach, &a, ATTACH_BUSY))
        return;
    t->perf_resizes++;
    int old = sprof_fd_checked(&t->perf_fd), fd;
    void *base;
    size_t len;
    if (old < 0 || sprof_perf_open_ring((pid_t)t->tid, bytes, sprof_perf_period_now(t), &fd, &base, &len) != 0) {
        t->perf_resizes = ADAPT_MAX_RESIZES; /* no memory or descriptors for it: keep what works */
        atomic_store(&t->attach, a);
        return;
    }
    atomic_fetch_add(&t->perf_gen, 1); /* odd: a phase kick's count now is no count of the thread's */
    ioctl(old, PERF_EVENT_IOC_DISABLE, 0);
    sprof_perf_drain_ring(t);
    uint64_t count = sprof_perf_count(t); /* base included: where the new event's count starts */
    munmap(t->perf_base, t->perf_len);
    sprof_fd_close(&t->perf_fd);
    sprof_fd_adopt(fd, &t->perf_fd, SPROF_FD_PERF);
    t->perf_base = base;
    t->perf_len = len;
    t->perf_stack = bytes;
    __atomic_store_n(&t->perf_count_base, count, __ATOMIC_RELAXED); /* its kick handler reads it */
    atomic_fetch_add(&t->perf_gen, 1);
    if (!sprof_control_paused()) sprof_perf_thread_enable(t);
    /* the writer passes often enough that the ring stays at most 1/4 full */
    uint64_t fits = (len - (uint64_t)sysconf(_SC_PAGESIZE)) / (bytes + 300u);
    uint64_t pass = fits * g_sprof.period_ns / 4u;
    if (pass < 1000000ull) pass = 1000000ull;
    atomic_store(&g_sprof.writer_period_hint, pass);
    if (!atomic_compare_exchange_strong(&t->attach, &(int){ATTACH_BUSY}, a)) {
        /* the thread ended meanwhile and left its event to the writer */
        sprof_perf_thread_stop(t);
        t->perf_final_count = sprof_perf_count(t);
    }
}

/* Cut in 1 sample in 64 or more with the largest copy: no copy holds
 * this thread's stacks. */
static int beyond_any_copy(const struct sprof_thread *t)
{
    uint32_t seen = t->perf_cut_n + t->perf_fit_n + t->perf_off_n;
    if (t->perf_offcut_n >= 2 && (uint64_t)t->perf_offcut_n * 64u >= seen) return 1;
    return t->perf_stack >= SPROF_PERF_STACK_MAX && t->perf_cut_n >= 2 && (uint64_t)t->perf_cut_n * 64u >= seen;
}

void sprof_perf_adapt(struct sprof_thread *t)
{
    if (!t->perf_base) return;
    if (t->assist) {
        /* the handler's walks match the samples (perf_assist.c): the
         * default copy does for the samples it holds. Not before: where
         * the walks do not come in time (a program that keeps the signal
         * blocked; ThreadSanitizer defers signals), the largest copy
         * stays, and the walks stop. */
        if (t->perf_stack > g_sprof.cfg.perf_stack && sprof_perf_assist_proven(t)) {
            resize_copy(t, g_sprof.cfg.perf_stack);
            sprof_perf_assist_start(t); /* the new event signals too */
        }
        return;
    }
    if (g_sprof.cfg.perf_assist && beyond_any_copy(t) && sprof_perf_assist_ready(t) == 0) {
        sprof_perf_assist_start(t);
        t->perf_resizes = ADAPT_MAX_RESIZES;
        reset_counts(t);
        return;
    }
    if (t->perf_resizes >= ADAPT_MAX_RESIZES) return;
    uint32_t want = wanted_copy(t);
    if (want) {
        resize_copy(t, want);
        reset_counts(t);
    } else if (t->perf_cut_n + t->perf_fit_n + t->perf_off_n >= ADAPT_WINDOW) {
        reset_counts(t);
    }
}
