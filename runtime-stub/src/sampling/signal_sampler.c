/* Signal-driven mechanisms: the profiling-signal handler, the cpuclock
 * pacer and the wall-mode sampler thread, per-thread POSIX CPU timers and
 * ITIMER_PROF. The handler is async-signal-safe: raw syscalls, memcpy,
 * atomics and preallocated per-thread memory only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt_internal.h"

static struct sigaction old_prof_action;
static int installed;

/* Ask the pacer to signal this thread again as soon as it runs (it checks
 * that the thread is running, as for any signal: never into a wait). A
 * futex wake: async-signal-safe. */
static void pacer_ask_retry(struct sprof_thread *t)
{
    atomic_store_explicit(&t->pacer_retry, 1, memory_order_relaxed);
    sprof_pacer_kick();
}

/* The CPU carried from system-call landings (pacer_carry), which the next
 * kept landing in user mode takes, less the system-call time the tick
 * sampler recorded meanwhile (the pool). */
static uint64_t pacer_carry_take(struct sprof_thread *t)
{
    uint64_t carry = t->pacer_carry_ns;
    t->pacer_carry_ns = 0;
    return carry - sprof_site_take(t, 0, carry);
}

/* cpuclock with the tick kernel sampler. The pacer's signal is a sample of
 * where the thread was when the pacer decided, but it arrives only at the
 * thread's next exit to user mode, microseconds later: an interrupt (the
 * thread was and stayed in user mode: a clean user-mode sample), or the
 * return from a system call or page fault, standing for a decision made in
 * that kernel entry (the tick sampler has that time) or in user mode just
 * before it: which, no register says.
 *  - After a page fault the landing pc is the faulting instruction, where
 *    the tick sampler's fault samples land too: the kernel time they
 *    recorded there is taken off (sprof_site_take); the rest is user time
 *    of that code. (Dropping these lost the user time of code that faults
 *    every few us: template kept 5 user samples of 475.)
 *  - At a system-call return the user time was spent before the call,
 *    possibly in a sibling that has returned (a fiber's step before its
 *    swapcontext, a compute step before a cheap call, thread creation's
 *    clone3): the landing records nothing and its CPU goes to the thread's
 *    next landing that is kept, less the system-call time the tick sampler
 *    recorded meanwhile (the pool). That next landing is asked for at once
 *    (pacer_ask_retry), not a period later: a period later the thread is
 *    often in another phase of the program, which then got the CPU of code
 *    that runs between system calls (acc_cheapcall: the interleaved loop
 *    ~15 pp low, the compute after it as high). A retry lands tens of us
 *    later, in the same phase, wherever the thread is caught in user mode.
 *    Where the landing's frame chain names its call path, its CPU waits
 *    instead for the tick sampler's next user-mode landing under that path
 *    (pacer_carry.c): on kernels where retries land at system calls again
 *    (6.18 here), the retried CPU still went to the next phase.
 * Returns the weight; with *drop set, the landing's CPU to keep or carry. */
static uint64_t pacer_weight(struct sprof_thread *t, uint64_t pc, int call_nr, uint64_t period_cpu,
                             uint32_t *flags, int *drop, int *draw)
{
    if (call_nr >= -1) {
        *drop = 1;
        return period_cpu; /* kept under its call path, or carried (pacer_carry) */
    }
    /* caught in user mode: by a retry, or by a later signal while no retry
     * was allowed: retries may help this thread, allow one more */
    if (t->pacer_retries && (t->pacer_retries <= t->pacer_retry_cap || !t->pacer_retry_cap) &&
        t->pacer_retry_cap < SPROF_PACER_RETRIES)
        t->pacer_retry_cap++;
    t->pacer_retries = 0;
    /* faults not read by the pacer (a local signal that came late): what
     * the tick found at this pc is owed all the same */
    uint64_t sent_faults = atomic_load_explicit(&t->pacer_faults, memory_order_relaxed);
    int unknown = sent_faults == SPROF_FAULTS_UNKNOWN, faulted = unknown || sprof_own_faults() != sent_faults;
    uint64_t carry = pacer_carry_take(t), w = period_cpu + carry;
    *draw = !carry; /* its weight is the run since the previous landing, no more */
    if (faulted) {
        uint64_t take = sprof_site_take(t, pc, period_cpu);
        if (take || !unknown) {
            *flags |= SPROF_SAMPLE_PARTIAL;
            *draw = 0;
        }
        w -= take;
    }
    return w;
}

/* System calls that set the signal mask: a signal that landed at their
 * return may have waited, blocked, in user mode before them. */
static int sets_signal_mask(int nr)
{
    switch (nr) {
    case SYS_rt_sigprocmask:
    case SYS_rt_sigreturn:
    case SYS_rt_sigsuspend:
    case SYS_rt_sigtimedwait:
    case SYS_pselect6:
    case SYS_ppoll:
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
    case SYS_io_pgetevents:
        return 1;
    default:
        return 0;
    }
}

/* cpuclock + tick, a remote landing at the return of system call nr: the
 * CPU the thread ran after the pacer sent the signal, less the longest the
 * signal takes to reach a thread running in user mode, was spent in that
 * call. A pending signal that is not blocked is taken at every exit to user
 * mode (a system call's, a fault's, an interrupt's), and tgkill interrupts
 * a thread running in user mode at once: one that waited longer than that
 * found the thread in the kernel all the time, in the call it lands after.
 * That CPU is the call's kernel time at this very stack: every draw due in
 * it would have found the thread there (perf_event with kernel sampling
 * records it so), and it is recorded so, not carried with the user time
 * before the call. Measured (corpus gcbench, 1 kHz): free() trims the
 * heap with madvise calls of 8-10 ms, in which the pacer (on the thread's
 * CPU, at the calls' scheduling points) sent its signal; the tick sampler
 * found the thread in the call too but had only its own few us since the
 * landing, so 36 ms of madvise went to the user time of the call path
 * (a PARTIAL sample at sp_populate's call site) and 23 draws were forgiven
 * (98.1 % delivered). Returns 0 where the signal may have been blocked.
 *
 * A signal the pacer sent while its timer had stopped the thread (stopped:
 * a local send) that the thread took only after running on did not stop
 * it in user mode: there it would have been taken on the way back, before
 * one more instruction. The timer stopped it inside this call, at the
 * draw: the whole run since the send is the call's, and so is a part of
 * the run since the previous landing, where the call began at a point
 * no register tells: the caller splits that between the call and the
 * user time before it, half each, which is exact on average wherever the
 * call begins between two draws (the trapezoid rule). Carried whole as
 * user time, as a remote landing's, the calls of rt_prog longcall (mmap
 * populating 32 MiB) read 77-78 % of its CPU for a truth of 85-86 %; given
 * whole to the call, 89-90 %; split, 83-85 %. */
static uint64_t pacer_call_span(const struct sprof_thread *t, int nr, uint64_t prev_cpu, uint64_t cpu, int stopped)
{
    if (nr < 0 || sets_signal_mask(nr)) return 0;
    uint64_t sent = atomic_load_explicit(&t->pacer_sent_cpu_ns, memory_order_relaxed);
    if (sent < prev_cpu || cpu <= sent) return 0;
    if (stopped) return cpu - sent;
    if (cpu <= sent + SPROF_PACER_DELIVERY_NS) return 0;
    return cpu - sent - SPROF_PACER_DELIVERY_NS;
}

/* cpuclock + tick, a signal the pacer sent from the thread's own CPU while
 * a timer interrupt there had stopped the thread (sampler_thread.c): it
 * lands exactly where the thread stopped, as a perf_event sample would.
 * At a system-call return the thread stopped in that call: a KERNEL sample
 * of it, at the asked rate. Anywhere else it stopped in user mode, or in a
 * page fault or interrupt that returns to that pc: the kernel time the tick
 * sampler found at this pc is owed by such landings, and is split off as a
 * KERNEL sample of its own (*label_ns, *label_flags) at the same stack.
 * Where the interrupt was held across sysret it is taken a few instructions
 * later (a PVM guest): the landing is still that call's (perf_event's
 * window, sprof_syscall_return_near; acc_io's [syscall] 1.9-3.5 pp low
 * with the exact test).
 * Returns the weight of the landing's own sample. */
static uint64_t local_weight(struct sprof_thread *t, uint64_t pc, uint64_t rcx, uint64_t period_cpu,
                             uint32_t *flags, uint64_t *label_ns, uint32_t *label_flags, int *draw)
{
    int nr = sprof_syscall_return_near(pc, rcx, 1);
    *draw = 1;
    if (nr >= -1) {
        *flags |= sprof_syscall_flags(nr);
        return period_cpu;
    }
    /* the carried CPU goes to a local landing in user mode as to a remote
     * one (pacer_weight): left to remote landings alone, it piled up where
     * nearly every landing is local (107 ms of a 0.94 s run of rt_prog
     * longcall were in no sample at its exit) */
    uint64_t carry = pacer_carry_take(t);
    uint32_t kf = 0;
    uint64_t take = sprof_site_take_exact(t, pc, period_cpu, &kf);
    if (take) {
        /* One draw: counted once. When the kernel's part takes all, by
         * that sample; when it takes some, both parts are PARTIAL and count
         * their weight's share of a period, as a remote landing after a
         * fault does (pacer_weight). The landing's own sample counted one
         * beside its kernel part's share: template under cpuclock read
         * 104 % delivered, 340 such splits in its 5,285 samples. */
        *label_ns = take;
        uint32_t partial = take < period_cpu ? SPROF_SAMPLE_PARTIAL : 0;
        *label_flags = (kf & SPROF_SAMPLE_PAGE_FAULT) | SPROF_SAMPLE_KERNEL | partial;
        *flags |= partial;
    }
    /* one record of the whole run since the previous landing: the
     * landing's own, or its kernel part's where that takes all */
    *draw = !carry && (!take || take == period_cpu);
    return period_cpu - take + carry;
}

static int emit_record(struct sprof_thread *t, const void *rec, uint32_t size)
{
    void *dst = sprof_ring_reserve(&t->ring, size);
    if (!dst) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return 0;
    }
    memcpy(dst, rec, size);
    sprof_ring_commit(&t->ring, size);
    return 1;
}

/* A system-call landing whose chain gives no call path (pacer_carry.c):
 * its CPU goes to the thread's next kept landing, asked for at once. */
static void pacer_carry(struct sprof_thread *t, uint64_t period_cpu)
{
    t->pacer_carry_ns += period_cpu;
    if (t->pacer_retries < t->pacer_retry_cap) {
        t->pacer_retries++;
        pacer_ask_retry(t);
    } else if (t->pacer_retries == t->pacer_retry_cap) {
        /* every retry (or none allowed) landed at a system call again:
         * fewer next time, down to none, so a thread that is nearly
         * always in system calls is not signalled over and over.
         * (Charging the carry to this landing instead put a compute
         * step's time on the cheap call after it: worse.) */
        t->pacer_retries++;
        t->pacer_retry_cap /= 2;
    }
}

/* Where the walk from sp may read: the thread's own stack, or a fiber's or
 * an alternate signal stack of unknown extent, whose pages are probed. */
static void walk_mem_at(const struct sprof_thread *t, uint64_t sp, struct sprof_walk_mem *m,
                        struct sprof_rec_sample *rec)
{
    memset(m, 0, sizeof *m);
    m->lo = sp;
    if (sp >= t->stack_lo && sp < t->stack_hi) {
        m->hi = t->stack_hi;
        m->stack_hi = t->stack_hi;
        m->root_floor = t->root_floor;
        return;
    }
    m->hi = sp + SPROF_FIBER_WINDOW;
    m->probe = 1;
    rec->flags |= SPROF_SAMPLE_OFF_STACK;
    m->verified_hi = (sp & ~4095ull) + 4096;
    m->stack_hi = m->hi;
    m->thr_lo = t->stack_lo;
    m->thr_hi = t->stack_hi;
}

int sprof_signal_walk_buffers(struct sprof_thread *t)
{
    if (!t->scratch) {
        uint32_t need = sprof_thread_scratch_bytes();
        void *p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return -1;
        t->scratch = p;
        t->scratch_cap = need;
    }
    return t->ring.buf || sprof_ring_init(&t->ring, sprof_thread_ring_bytes()) == 0 ? 0 : -1;
}

/* The stack at the interrupted context, walked from live memory into rec
 * (its fixed part filled by the caller): perf_assist.c's handler half. */
uint32_t sprof_signal_walk_context(struct sprof_thread *t, void *uc, int rbx)
{
    uint64_t pc, sp, fp;
    sprof_regs_from_ucontext(uc, &pc, &sp, &fp);
    struct sprof_rec_sample *rec = (struct sprof_rec_sample *)t->scratch;
    memset(rec, 0, sizeof *rec);
    rec->tid = t->tid;
    rec->time_ns = sprof_now_ns(CLOCK_MONOTONIC);
    struct sprof_walk_mem m;
    walk_mem_at(t, sp, &m, rec);
    uint32_t size = sprof_walk(rec, t->scratch_cap, pc, sp, fp, &m, g_sprof.cfg.max_depth);
    if (size && (rec->flags & SPROF_SAMPLE_OFF_STACK))
        size = sprof_add_interrupted_stack(rec, t->scratch_cap, &m, t->stack_lo, t->stack_hi, g_sprof.cfg.max_depth);
    if (size && rbx) size = sprof_add_rbx(rec, t->scratch_cap, sprof_rbx_from_ucontext(uc), m.stack_hi);
    return size;
}

static void on_prof_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved_errno = errno;
    struct sprof_thread *t = sprof_self;
    /* the tick kernel sampler's timer shares the signal (kernel_sampler.c) */
    int ktick = si && si->si_code == SI_TIMER && si->si_value.sival_int == SPROF_KTICK_COOKIE;
    if (!t) {
        atomic_fetch_add_explicit(&g_sprof.unregistered_signals, 1, memory_order_relaxed);
        goto out;
    }
    if (t->exiting) goto out; /* the thread's end is being recorded (sprof_thread_unregister) */
    if (si && (si->si_code == POLL_IN || si->si_code == POLL_HUP)) {
        /* perf_event's overflow: a phase kick (perf_phase.c), or the stack
         * its copy cannot hold. One queued before the writer stopped the
         * walks is no pacer signal either. */
        if (!sprof_perf_phase_signal(t, si->si_fd, uc) && atomic_load_explicit(&t->assist_on, memory_order_acquire))
            sprof_perf_assist_signal(t, si->si_fd, uc);
        errno = saved_errno;
        return;
    }
    int local = 0;
    if (!ktick) local = atomic_exchange_explicit(&t->pacer_local, 0, memory_order_relaxed);
    if (!atomic_load_explicit(&g_sprof.running, memory_order_relaxed) || sprof_control_paused()) goto out;
    /* sprof's set-up: its CPU is taken off the marks when the start is done */
    if (atomic_load_explicit(&g_sprof.start_done_ns, memory_order_relaxed) == UINT64_MAX) goto out;
    sprof_control_handler_resume(t);
    if (!ktick && si && si->si_code == SI_TIMER && si->si_overrun > 0)
        atomic_fetch_add_explicit(&t->lost, (uint64_t)si->si_overrun, memory_order_relaxed);

    uint64_t pc, sp, fp;
    sprof_regs_from_ucontext(uc, &pc, &sp, &fp);
    uint64_t rcx = sprof_syscall_reg_from_ucontext(uc);
    uint32_t kflags = 0, label_flags = 0;
    uint64_t kweight = 0, label_ns = 0, span_ns = 0, span_paid = 0;
    int tick_user = 0, syscall_landing = 0, call_nr = -2, draw = 0, chain = 0;
    if (ktick) {
        kflags = sprof_ktick_classify(t, pc, rcx, &kweight, &tick_user);
        /* the tick found user mode: the main mechanism samples that, but
         * CPU kept under a call path may be this landing's to take */
        if (!kflags && !(tick_user && t->carries_live)) goto out;
        /* ... unless the tick found the thread in a pacer signal's handler:
         * the kernel then queued it for the handler's return, to the
         * pc the pacer's signal interrupted, which is no draw of the path */
        if (!kflags && pc == t->pacer_pc && t->k_last_cpu - t->last_cpu_ns < SPROF_OWN_SIGNAL_NS) goto out;
    } else if (g_sprof.cfg.mode == SPROF_MODE_CPU && g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED &&
               sprof_interrupted_syscall(uc, pc)) {
        /* CPU mode, signal pacing: a signal that arrives while the thread is
         * blocked in a system call (it ran its period, then blocked before the
         * signal landed) would charge that CPU to the wait. Defer: no sample,
         * the CPU stays on the thread's account for its next sample, and the
         * pacer signals it again once it runs. The restart point is the
         * syscall instruction itself (SA_RESTART) or just after it (-EINTR). */
        goto out;
    }

    struct sprof_rec_sample *rec = (struct sprof_rec_sample *)t->scratch;
    memset(rec, 0, sizeof *rec);
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
    if (ktick) {
        rec->weight_ns = kweight;
        rec->flags |= kflags;
    } else if (g_sprof.cfg.mode == SPROF_MODE_WALL) {
        uint64_t prev = atomic_exchange_explicit(&t->last_wall_ns, now, memory_order_relaxed);
        rec->weight_ns = now > prev ? now - prev : 0;
        /* only running threads are signalled: off-CPU samples come from the sampler thread */
    } else {
        uint64_t cpu = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
        /* A local signal that the thread took only after running on (it
         * had the signal blocked: pthread_create's clone window; or the
         * stop was not the pacer's) did not land where it stopped. */
        int stopped = local;
        if (local && cpu > atomic_load_explicit(&t->pacer_sent_cpu_ns, memory_order_relaxed) + SPROF_PACER_LATE_NS)
            local = 0;
        uint64_t prev_cpu = t->last_cpu_ns;
        rec->weight_ns = cpu > prev_cpu ? cpu - prev_cpu : 0;
        t->last_cpu_ns = cpu;
        t->pacer_pc = pc;
        if (g_sprof.ksample == SPROF_KSAMPLE_TICK) {
            chain = t->draw_chain;
            t->draw_chain = 0;
            t->local_landings = local;
            atomic_fetch_add_explicit(&g_sprof.pacer_landings, 1, memory_order_relaxed);
            if (local) atomic_fetch_add_explicit(&g_sprof.pacer_local_landings, 1, memory_order_relaxed);
            /* what the tick recorded since the previous landing (a remote
             * one: the tick then samples the thread's kernel time itself)
             * is in the trace already; a remote landing's pools account
             * for it (pacer_weight) */
            uint64_t recorded = t->tick_recorded_ns < rec->weight_ns ? t->tick_recorded_ns : rec->weight_ns;
            t->tick_recorded_ns = 0;
            if (local)
                rec->weight_ns = local_weight(t, pc, rcx, rec->weight_ns - recorded, &rec->flags, &label_ns,
                                              &label_flags, &draw);
            else {
                call_nr = sprof_syscall_return(pc, rcx, 1);
                span_ns = pacer_call_span(t, call_nr, prev_cpu, cpu, stopped);
                int in_call = stopped && span_ns;
                if (in_call) rec->weight_ns -= recorded; /* as a local landing's */
                if (span_ns > rec->weight_ns) span_ns = rec->weight_ns;
                span_paid = span_ns;
                /* stopped in the call: half the run before the send is the
                 * call's (the trapezoid rule), half goes with the user time */
                if (in_call) span_ns += (rec->weight_ns - span_ns) / 2;
                rec->weight_ns = pacer_weight(t, pc, call_nr, rec->weight_ns - span_ns, &rec->flags, &syscall_landing,
                                              &draw);
            }
        }
    }
    rec->tid = t->tid;
    rec->time_ns = now;

    struct sprof_walk_mem m;
    walk_mem_at(t, sp, &m, rec);
    /* a system-call landing off the thread's stack (a fiber) is kept by its
     * stack, unwalked: probing an unknown stack costs system calls the tick
     * would charge to the program's call, and a fiber's chain ends within
     * a frame or two (pacer_carry.c) */
    int fiber = syscall_landing && m.probe;
    uint32_t size = fiber ? 0 : sprof_walk(rec, t->scratch_cap, pc, sp, fp, &m, g_sprof.cfg.max_depth);
    if (syscall_landing) {
        /* Landed at a system-call return: nothing recorded here. A tick
         * sampler signal queued on the same return (the tick found the
         * thread in that system call) must still see it as one; otherwise
         * ticks in this handler and its rt_sigreturn must not. */
        if (span_ns && !size) { /* no stack to record the call's time at: carried with the rest */
            rec->weight_ns += span_ns;
            span_ns = 0;
        }
        if (!rec->weight_ns) {
            /* all of it recorded as the call's below */
        } else if (fiber) sprof_carry_keep_stack(t, sp, rec->weight_ns, now);
        else if (!size || !sprof_carry_keep(t, rec, rec->weight_ns)) pacer_carry(t, rec->weight_ns);
        if (span_ns) {
            /* the call's time since the signal was sent: a KERNEL sample
             * counted by weight (PARTIAL), the pacer's draws in it paid */
            rec->flags |= sprof_syscall_flags(call_nr) | SPROF_SAMPLE_PARTIAL;
            rec->weight_ns = span_ns;
            emit_record(t, rec, sprof_add_rbx(rec, t->scratch_cap, sprof_rbx_from_ucontext(uc), m.stack_hi));
            atomic_fetch_add_explicit(&t->pacer_span_ns, span_paid, memory_order_relaxed);
        }
        sigset_t queued;
        if (sigpending(&queued) == 0 && !sigismember(&queued, g_sprof.sig)) sprof_syscall_reg_clear(uc);
        /* this handler's own CPU is sprof's: not carried */
        t->last_cpu_ns = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
        goto out;
    }
    if (!size) goto out;
    if (ktick && !kflags) {
        /* a tick user-mode landing: a sample only for the CPU it takes */
        rec->weight_ns = sprof_carry_claim(t, rec);
        if (!rec->weight_ns) goto out;
        rec->flags |= SPROF_SAMPLE_PARTIAL;
    }
    /* a library ld.so loads is in the table only once the writer reads the
     * maps: ask for it, for the landings after this one (maps.c); the
     * writer is woken only where a read is due (a wake costs ~50 us on a
     * PVM guest) */
    if (sprof_in_dynamic_linker(pc) &&
        !atomic_exchange_explicit(&g_sprof.maps_loader_wanted, 1, memory_order_relaxed) &&
        now >= atomic_load_explicit(&g_sprof.maps_loader_due_ns, memory_order_relaxed))
        sprof_writer_wake();
    if (rec->flags & SPROF_SAMPLE_OFF_STACK)
        size = sprof_add_interrupted_stack(rec, t->scratch_cap, &m, t->stack_lo, t->stack_hi, g_sprof.cfg.max_depth);
    size = sprof_add_rbx(rec, t->scratch_cap, sprof_rbx_from_ucontext(uc), m.stack_hi);
    /* a draw weighed by the run since the previous landing: readers give
     * half of it to the previous draw's stack when that landing wrote one
     * (DRAW_PREV; trace format 2.9, docs/runtime.md, "Local pacing") */
    const uint32_t draw_flags = SPROF_SAMPLE_DRAW | (chain ? SPROF_SAMPLE_DRAW_PREV : 0);
    int own = rec->weight_ns || !label_ns;
    if (own) {
        if (draw) rec->flags |= draw_flags;
        if (emit_record(t, rec, size) && draw) t->draw_chain = 1;
    }
    if (label_ns) { /* the kernel's part of a local landing, at the same stack */
        rec->flags &= ~(uint32_t)(SPROF_SAMPLE_DRAW | SPROF_SAMPLE_DRAW_PREV);
        if (draw && !own) rec->flags |= draw_flags; /* it took all: the draw's record */
        rec->flags |= label_flags;
        rec->weight_ns = label_ns;
        if (emit_record(t, rec, size) && draw && !own) t->draw_chain = 1;
    }
out:
    /* The pacer may signal again only now: a signal sent while this
     * handler runs would land where it interrupted, once more (a second
     * draw at every pc in proportion to the walk's length there) */
    if (t && !ktick) atomic_store_explicit(&t->pending, 0, memory_order_release);
    errno = saved_errno;
}

/* Is this action our own handler? A forked child inherits it from the
 * parent's session; that signal is ours to use, not the program's. */
static int is_our_action(const struct sigaction *a)
{
    return (a->sa_flags & SA_SIGINFO) && a->sa_sigaction == on_prof_signal;
}

static int our_handler_on(int sig)
{
    struct sigaction cur;
    return sigaction(sig, NULL, &cur) == 0 && is_our_action(&cur);
}

int sprof_signal_still_ours(void)
{
    if (!installed || !g_sprof.sig) return 1;
    if (atomic_load(&g_sprof.problems) & SPROF_PROBLEM_SIGNAL_TAKEN) return 0;
    if (our_handler_on(g_sprof.sig)) return 1;
    atomic_fetch_or(&g_sprof.problems, SPROF_PROBLEM_SIGNAL_TAKEN);
    return 0;
}

/* The program's handler now receives the signal: no timer of ours may
 * send it any more (the cpuclock pacer checks by itself before each
 * signal). Timers are disarmed, not deleted: their owners delete them. */
void sprof_signal_silence(void)
{
    static const struct itimerspec zero;
    if (g_sprof.mech == SPROF_MECH_ITIMER) {
        struct itimerval off;
        memset(&off, 0, sizeof off);
        setitimer(ITIMER_PROF, &off, NULL);
    }
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE) continue;
        if (atomic_load(&t->assist_on)) sprof_perf_assist_stop(t); /* perf_event's live walks */
        sprof_perf_phase_disable(t);                                  /* and its phase kicks */
        if (!sprof_timers_claim(t)) continue;
        if (t->ptimer_ok) timer_settime(t->ptimer, 0, &zero, NULL);
        if (t->ktimer_ok) timer_settime(t->ktimer, 0, &zero, NULL);
        sprof_timers_release(t);
    }
}

/* Choose the signal: SIGPROF for ITIMER_PROF (the kernel's choice); for the
 * others a real-time signal nobody handles, so a program that installs its
 * own SIGPROF handler later is never disturbed by ours. */
static int pick_signal(void)
{
    struct sigaction cur;
    if (g_sprof.mech == SPROF_MECH_ITIMER) {
        sigaction(SIGPROF, NULL, &cur);
        if (!is_our_action(&cur) &&
            ((cur.sa_flags & SA_SIGINFO) || (cur.sa_handler != SIG_DFL && cur.sa_handler != SIG_IGN))) {
            sprof_warn("the program already handles SIGPROF; ITIMER_PROF cannot be used, "
                       "falling back to the cpuclock mechanism");
            g_sprof.mech = SPROF_MECH_CPUCLOCK_PACED;
        } else {
            return SIGPROF;
        }
    }
    for (int s = SIGRTMIN + 6; s <= SIGRTMAX - 2; s++) {
        sigaction(s, NULL, &cur);
        if ((!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL) || is_our_action(&cur)) return s;
        if (s == SIGRTMIN + 6) sprof_warn("signal %d already has a handler; choosing another", s);
    }
    return 0;
}

int sprof_signal_install(void)
{
    g_sprof.sig = pick_signal();
    if (!g_sprof.sig) {
        sprof_warn("no free signal for sampling; running unprofiled");
        return -1;
    }
    /* A forked child that profiles finds the parent's handler already in
     * place: it keeps it, and what it replaced, for release_for_exec. */
    if (!(installed && our_handler_on(g_sprof.sig))) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_prof_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
        sigfillset(&sa.sa_mask); /* nothing nests into the walk */
        if (sigaction(g_sprof.sig, &sa, &old_prof_action) != 0) return -1;
        installed = 1;
    }
    /* the trampoline libc gave it: a perf sample taken in the handler has
     * the handler's signal frame above it (perf_sampler.c, in_own_work) */
    struct sigaction now;
    if (sigaction(g_sprof.sig, NULL, &now) == 0) g_sprof.sig_restorer = (uint64_t)(uintptr_t)now.sa_restorer;
    if (g_sprof.mech == SPROF_MECH_ITIMER) {
        struct itimerval it;
        it.it_interval.tv_sec = (time_t)(g_sprof.period_ns / 1000000000ull);
        it.it_interval.tv_usec = (suseconds_t)(g_sprof.period_ns % 1000000000ull / 1000);
        if (it.it_interval.tv_sec == 0 && it.it_interval.tv_usec == 0) it.it_interval.tv_usec = 1;
        it.it_value = it.it_interval;
        if (setitimer(ITIMER_PROF, &it, NULL) != 0) return -1;
    }
    return 0;
}

void sprof_signal_uninstall(void)
{
    if (!installed) return;
    if (g_sprof.mech == SPROF_MECH_ITIMER) {
        struct itimerval zero;
        memset(&zero, 0, sizeof zero);
        setitimer(ITIMER_PROF, &zero, NULL);
    }
    /* Leave our handler installed (it returns at once when not running):
     * a signal already queued must not hit SIG_DFL and kill the program. */
}

void sprof_signal_release_for_exec(void)
{
    if (!installed) return;
    /* Setting SIG_IGN discards instances already pending (POSIX); a
     * real-time signal the pacer queued just before execve would otherwise
     * stay pending into the new image, where its action is the default:
     * terminate. Then restore what the program had (the default, since we
     * only take free signals), which is what exec hands on. */
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(g_sprof.sig, &ign, NULL);
    sigaction(g_sprof.sig, &old_prof_action, NULL);
    installed = 0;
}

int sprof_signal_thread_start(struct sprof_thread *t)
{
    /* Our own alternate stack if the thread has none: the walk needs a few
     * KiB that a fiber's 64 KiB stack may not have to spare. */
    stack_t cur;
    /* a thread the program just started has none: no need to ask */
    if (t->fresh_thread || (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE))) {
        const size_t alt = SPROF_ALTSTACK_BYTES;
        void *p = sprof_spare_take_alt(); /* an ended thread's, or a new one */
        if (!p) p = mmap(NULL, alt, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            stack_t ss = {.ss_sp = p, .ss_size = alt, .ss_flags = 0};
            if (sigaltstack(&ss, NULL) == 0) {
                t->altstack = p;
                t->altstack_len = alt;
            } else {
                munmap(p, alt);
            }
        }
    }
    if (g_sprof.mech == SPROF_MECH_POSIX_TIMER) {
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = g_sprof.sig;
        sev._sigev_un._tid = (pid_t)t->tid;
        if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->ptimer) != 0) return -1;
        struct itimerspec its;
        its.it_interval.tv_sec = (time_t)(g_sprof.period_ns / 1000000000ull);
        its.it_interval.tv_nsec = (long)(g_sprof.period_ns % 1000000000ull);
        its.it_value = its.it_interval;
        if (sprof_control_paused()) its.it_value.tv_sec = its.it_value.tv_nsec = 0; /* armed at the resume */
        if (timer_settime(t->ptimer, 0, &its, NULL) != 0) {
            timer_delete(t->ptimer);
            return -1;
        }
        t->ptimer_ok = 1;
    }
    t->pacer_retry_cap = SPROF_PACER_RETRIES;
    if (g_sprof.ksample == SPROF_KSAMPLE_TICK && sprof_ktick_thread_start(t) != 0) return -1;
    return 0;
}

void sprof_signal_thread_stop(struct sprof_thread *t)
{
    sprof_timers_retire(t);
    if (t->ptimer_ok) timer_delete(t->ptimer);
    t->ptimer_ok = 0;
    sprof_ktick_thread_stop(t);
    if (t->altstack) {
        stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL); /* freed by the writer once the slot is drained */
    }
}
