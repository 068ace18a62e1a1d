/* Per-thread slots: claimed when a thread starts (main thread at init,
 * others from the pthread_create wrapper), released by the writer after
 * the thread's last samples are drained. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

__thread struct sprof_thread *sprof_self __attribute__((tls_model("initial-exec")));

/* No slot below this index is free, but for slots skipped for the sampler's
 * epoch (a claim wraps around to them). Lowered by each release. */
static _Atomic int free_hint;

/* A thread's walk scratch: the record being built, then the cpuclock
 * carry's entry paths (pacer_carry.c). */
uint32_t sprof_thread_scratch_bytes(void)
{
    return sprof_scratch_size(g_sprof.cfg.max_depth) + sprof_carry_area_size(g_sprof.cfg.max_depth);
}

static void stack_bounds(struct sprof_thread *t)
{
    pthread_attr_t attr;
    t->stack_lo = t->stack_hi = 0;
    /* registration runs before main (in the constructor, a few frames
     * deeper than main's record will be: measured 0x80 below a preloaded
     * constructor's frame, and this frame is ~0x200 below that) or before
     * the start routine (called right after, just below the trampoline).
     * Too high a floor costs only a larger stack copy for a while
     * (perf_adapt.c), never a frame. */
    uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    t->root_floor = here > 512 ? here - 512 : 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *addr;
        size_t size;
        if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
            t->stack_lo = (uint64_t)addr;
            t->stack_hi = (uint64_t)addr + size;
        }
        pthread_attr_destroy(&attr);
    }
}

/* A new thread's tid without a system call (~1.6 us of its CPU on a PVM
 * guest, a tenth of what sprof costs it): glibc keeps it in the thread
 * descriptor (written by clone before the thread runs) and publishes where,
 * for debuggers: libthread_db's _thread_db_pthread_tid = {bits, count,
 * offset}. Used only once it matched gettid() in the main thread (or a
 * forked child's); > 0: the offset, 0: not usable, -1: not checked yet. */
static _Atomic int tid_offset = -1;

static uint32_t checked_tid(void)
{
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    if (atomic_load(&tid_offset) >= 0) return tid;
    const uint32_t *d = dlsym(RTLD_DEFAULT, "_thread_db_pthread_tid");
    int off = 0;
    if (d && d[0] == 32 && d[1] == 1 && d[2] >= 8 && d[2] < 4096 && d[2] % 4 == 0 &&
        *(const uint32_t *)((const char *)pthread_self() + d[2]) == tid)
        off = (int)d[2];
    atomic_store(&tid_offset, off);
    return tid;
}

static uint32_t thread_tid(int fresh)
{
    int off = atomic_load_explicit(&tid_offset, memory_order_relaxed);
    if (!fresh || off <= 0) return checked_tid();
    uint32_t tid = *(const volatile uint32_t *)((const char *)pthread_self() + off);
    return tid ? tid : (uint32_t)syscall(SYS_gettid);
}

/* glibc (2.35+) registers an rseq area per thread in its thread control
 * block, at __rseq_offset from the thread pointer; the kernel writes the
 * CPU the thread runs on into its cpu_id (offset 4) every time it returns
 * to user mode on another CPU. Weak: an older libc has neither symbol. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static uintptr_t own_rseq_cpu_addr(void)
{
    if (!&__rseq_offset || !&__rseq_size || __rseq_size < 8) return 0; /* none, or not registered */
    return (uintptr_t)__builtin_thread_pointer() + (uintptr_t)__rseq_offset + 4;
}

/* The CPU thread t runs on (or last returned to user mode on), from its
 * rseq area: no system call, where /proc's stat costs ~7 us. The area is
 * the thread's own memory, gone when it ends: its end (below) clears the
 * address and waits out a read under way. */
int sprof_thread_rseq_cpu(struct sprof_thread *t)
{
    atomic_store(&t->rseq_peek, 1);
    uintptr_t a = atomic_load(&t->rseq_cpu_addr);
    int cpu = a ? (int)*(const volatile int32_t *)a : -1; /* -1 unset, -2 failed */
    atomic_store_explicit(&t->rseq_peek, 0, memory_order_release);
    return cpu >= 0 ? cpu : -1;
}

/* start_pc: the thread's start routine, where CPU no sample stands for is
 * charged (0: the main thread, or a thread forked into a child). */
struct sprof_thread *sprof_thread_register(uint64_t start_pc)
{
    if (!atomic_load(&g_sprof.running) || sprof_self) return sprof_self;
    struct sprof_thread *t = NULL;
    sprof_lock(&g_sprof.reg_lock);
    uint64_t epoch = atomic_load_explicit(&g_sprof.sampler_epoch, memory_order_acquire);
    int sampler = atomic_load(&g_sprof.sampler_active);
    /* from the lowest slot that may be free: a program that starts threads
     * quickly leaves hundreds of ended ones for the writer to release, and
     * an atomic claim attempt on each costs the new thread ~10 us */
    int from = atomic_load(&free_hint);
    for (int k = 0; k < SPROF_MAX_THREADS; k++) {
        int i = (from + k) % SPROF_MAX_THREADS;
        struct sprof_thread *c = &g_sprof.threads[i];
        int expect = SLOT_FREE;
        if (atomic_load_explicit(&c->state, memory_order_relaxed) != SLOT_FREE) continue;
        /* not while a sampler pass that saw it ACTIVE may still read it
         * (freed_epoch: 0 = never freed, else the epoch it was freed in + 1) */
        if (sampler && atomic_load(&c->freed_epoch) > epoch) continue;
        if (atomic_compare_exchange_strong(&c->state, &expect, SLOT_CLAIMED)) {
            t = c;
            atomic_store(&free_hint, i + 1);
            if (i + 1 > atomic_load(&g_sprof.slots_hi)) atomic_store(&g_sprof.slots_hi, i + 1);
            break;
        }
    }
    sprof_unlock(&g_sprof.reg_lock);
    if (!t) return NULL; /* table full: this thread runs unprofiled */

    uint8_t *keep_scratch = t->scratch;
    uint32_t keep_cap = t->scratch_cap;
    uint64_t keep_epoch = atomic_load(&t->freed_epoch);
    memset((char *)t + sizeof t->state, 0, sizeof *t - sizeof t->state);
    atomic_store(&t->freed_epoch, keep_epoch);
    t->scratch = keep_scratch;
    t->scratch_cap = keep_cap;
    t->tid = thread_tid(start_pc != 0);
    t->perf_fd = t->phase_fd = t->stat_fd = t->syscall_fd = -1;
    t->start_pc = start_pc;
    /* a thread the program started gets its perf event from the writer */
    int deferred = start_pc && sprof_uses_perf();
    atomic_store(&t->attach, deferred ? ATTACH_PENDING : ATTACH_INLINE);
    /* Such a thread sets nothing up itself: its CPU from its very start
     * (its clocks start at 0) is the program's, and three clock reads
     * (system calls: thread clocks have no vDSO path) are saved. */
    int from_zero = deferred && !sprof_uses_signals();
    /* Under the signal mechanisms too (not while paused: the CPU of a
     * paused stretch is measured from marks): no start values to read, and
     * the set-up is the thread's CPU, which its own clock counts as well. */
    if (start_pc && sprof_uses_signals() && !sprof_control_paused()) from_zero = 1;
    t->fresh_thread = start_pc != 0;
    t->from_zero = (uint8_t)from_zero;
    stack_bounds(t);
    clockid_t clk;
    t->cpuclock = pthread_getcpuclockid(pthread_self(), &clk) == 0 ? clk : CLOCK_THREAD_CPUTIME_ID;
    t->start_ns = sprof_now_ns(CLOCK_MONOTONIC);
    atomic_store(&t->rseq_cpu_addr, own_rseq_cpu_addr());
    t->last_cpu_ns = t->cpu_start_ns = from_zero ? 0 : sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
    t->draw_chain = 0;
    atomic_store(&t->last_wall_ns, t->start_ns);

    int ok = 1;
    if (sprof_uses_perf() && !deferred) ok = sprof_perf_thread_start(t) == 0;
    if (ok && sprof_uses_signals()) {
        uint32_t need = sprof_thread_scratch_bytes();
        if (!t->scratch || t->scratch_cap < need) {
            if (t->scratch) munmap(t->scratch, t->scratch_cap);
            void *p = sprof_spare_take_scratch(); /* mapped ahead by the writer */
            if (!p) p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            t->scratch = p == MAP_FAILED ? NULL : p;
            t->scratch_cap = t->scratch ? need : 0;
        }
        uint8_t *ring = sprof_spare_take_ring();
        if (ring) {
            t->ring.buf = ring;
            t->ring.cap = sprof_thread_ring_bytes();
        }
        ok = t->scratch && (ring || sprof_ring_init(&t->ring, sprof_thread_ring_bytes()) == 0);
        if (ok) {
            sprof_self = t; /* before the timer can fire */
            ok = sprof_signal_thread_start(t) == 0;
        }
    }
    if (!ok) {
        static _Atomic int warned;
        if (!atomic_exchange(&warned, 1) && g_sprof.threads_seen > 0)
            sprof_warn("thread %u could not be set up for sampling; it runs unprofiled", t->tid);
        sprof_self = NULL;
        if (sprof_uses_perf()) {
            sprof_perf_thread_stop(t);
            sprof_thread_release_perf(t);
        }
        sprof_ring_free(&t->ring);
        atomic_store(&t->state, SLOT_FREE);
        return NULL;
    }
    sprof_self = t;
    /* The profiled CPU starts after the set-up (rings, timers, the perf
     * event): that is sprof's own work, neither sampled nor counted; but
     * for a thread set up from_zero, whose clocks start at 0 (see above). */
    if (!from_zero) {
        sprof_thread_user_sys(0, &t->user_start_ns, &t->sys_start_ns);
        if (sprof_uses_perf() && !deferred && !sprof_control_paused()) sprof_perf_thread_enable(t);
        t->last_cpu_ns = t->cpu_start_ns = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    atomic_fetch_add(&g_sprof.threads_seen, 1);
    atomic_store(&t->state, SLOT_ACTIVE);
    /* The pacer sleeps up to 10 ms when no thread is due: a new thread's
     * first period would otherwise wait that long, and its first sample
     * carry all that CPU to wherever it lands (the main thread's first
     * 12.6 ms, acc_methods50's calibration, went to its first method).
     * Always, though its sleep may end sooner: the wake also re-aims the
     * pacer at its creator, whom the new thread preempted at clone3's
     * return; skipping it when the pacer slept less than a period
     * (2026-11-29) read acc_shortthreads' sp_Steady_compute 3.9-5.0 pp
     * high under cpuclock, the due points in pthread_create's
     * signal-blocked window taken late (0.0-1.0 with the wake). */
    if (g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED) sprof_pacer_kick();
    if (deferred) {
        /* One thread of a burst wakes the writer (~100 us to the event);
         * the writer then looks again every ms for the others, which saves
         * each of them a wake-up (~8 us of its CPU here). */
        atomic_store(&g_sprof.attach_wanted, 1);
        sprof_writer_nudge();
    }
    return t;
}

void sprof_thread_unregister(void)
{
    struct sprof_thread *t = sprof_self;
    if (!t) return;
    /* No profiling signal may act mid-way: the handler checks this flag
     * (blocking signals cost two system calls, ~2.4 us of the thread's CPU
     * on a Firecracker guest, at every thread's end); one that lands
     * meanwhile takes nothing, as one after the end */
    int block = sprof_uses_signals();
    t->exiting = 1;
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store(&t->rseq_cpu_addr, 0);
    while (atomic_load(&t->rseq_peek)) sched_yield(); /* a read of a few ns, unless the pacer was preempted in it */
    t->final_cpu_ns = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID); /* before sprof's own tear-down */
    prctl(PR_GET_NAME, t->exit_name); /* /proc's copy is gone once the thread is */
    /* CPU still kept under call paths (cpuclock + tick): samples of its own,
     * with the handler held off by the flag */
    if (block && t->carries_live) sprof_carry_flush_all(t, sprof_now_ns(CLOCK_MONOTONIC));
    if (sprof_uses_perf()) {
        /* an event the writer has not opened yet never will be, and one it
         * is opening it stops itself: the thread never waits for it */
        int a = atomic_exchange(&t->attach, ATTACH_GONE);
        if (a == ATTACH_INLINE || a == ATTACH_DONE) {
            sprof_perf_thread_stop(t);
            t->perf_final_count = sprof_perf_count(t);
        }
    }
    if (sprof_uses_signals()) sprof_signal_thread_stop(t);
    sprof_self = NULL;
    /* what the signal handler has not sampled yet (a carried landing
     * included), less what the tick recorded since the last landing */
    uint64_t unsampled = t->final_cpu_ns > t->last_cpu_ns ? t->final_cpu_ns - t->last_cpu_ns : 0;
    unsampled -= t->tick_recorded_ns < unsampled ? t->tick_recorded_ns : unsampled;
    t->tail_cpu_ns = unsampled + t->pacer_carry_ns;
    if (sprof_thread_user_sys(0, &t->user_final_ns, &t->sys_final_ns) != 0) {
        t->user_final_ns = t->user_start_ns;
        t->sys_final_ns = t->sys_start_ns;
    }
    atomic_store(&t->state, SLOT_EXITED);
}

/* The perf event and its ring (a failed set-up, or the final release). */
void sprof_thread_release_perf(struct sprof_thread *t)
{
    sprof_perf_assist_free(t);
    sprof_perf_phase_free(t);
    if (t->perf_base) munmap(t->perf_base, t->perf_len);
    t->perf_base = NULL;
    sprof_fd_close(&t->perf_fd);
    sprof_perf_phase_close(t);
}

/* The slots above the highest claimed one have never been written: a new
 * thread's claim faults their page in (a page fault of ~30 us on a PVM
 * guest, and a TLB flush on every CPU the program runs on: 10-16 % of
 * 2,000 short threads paid one, a quarter of their start-up CPU). The
 * writer faults them in ahead of the claims instead, on its own CPU: at
 * least 32 slots, or twice as many as were claimed since its last look.
 * An atomic add of 0 to each slot's state writes every page (a slot is
 * under a page) and races with no claim. */
_Static_assert(sizeof(struct sprof_thread) <= 4096, "a slot must fit in a page for sprof_slots_prepare");

void sprof_slots_prepare(void)
{
    static int prepared, seen_hi;
    int hi = sprof_slots_hi();
    int ahead = 2 * (hi - seen_hi);
    seen_hi = hi;
    if (ahead < 32) ahead = 32;
    int want = hi + ahead < SPROF_MAX_THREADS ? hi + ahead : SPROF_MAX_THREADS;
    for (; prepared < want; prepared++) atomic_fetch_add_explicit(&g_sprof.threads[prepared].state, 0, memory_order_relaxed);
}

/* Writer thread, io_lock held, after the slot's final drain. */
void sprof_thread_release(struct sprof_thread *t)
{
    g_sprof.dropped_released += atomic_load(&t->dropped);
    g_sprof.lost_released += atomic_load(&t->lost);
    atomic_fetch_add(&g_sprof.exited_cpu_ns, t->final_cpu_ns - t->cpu_start_ns);
    atomic_fetch_add(&g_sprof.exited_user_ns, t->user_final_ns - t->user_start_ns);
    atomic_fetch_add(&g_sprof.exited_sys_ns, t->sys_final_ns - t->sys_start_ns);
    sprof_thread_release_perf(t);
    if (t->stat_fd >= 0) close(t->stat_fd);
    if (t->syscall_fd >= 0) close(t->syscall_fd);
    t->stat_fd = t->syscall_fd = -1;
    sprof_spare_give(t->ring.buf, t->ring.cap, t->altstack, t->altstack_len);
    t->altstack = NULL;
    t->ring.buf = NULL;
    t->ring.cap = 0;
    atomic_store(&t->freed_epoch, atomic_load_explicit(&g_sprof.sampler_epoch, memory_order_acquire) + 1);
    atomic_store(&t->state, SLOT_FREE);
    int i = (int)(t - g_sprof.threads), h = atomic_load(&free_hint);
    while (i < h && !atomic_compare_exchange_weak(&free_hint, &h, i)) {
    }
}
