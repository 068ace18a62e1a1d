/* Start (constructor), stop (destructor / exit), fatal signals and fork. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rt_internal.h"
#include "sampling/pacer_local.h"

static struct sprof_thread thread_slots[SPROF_MAX_THREADS];
struct sprof_globals g_sprof = {.fd = -1, .threads = thread_slots};

static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS,
                                 SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU};

/* Installed only where the disposition was SIG_DFL at start (a program's own
 * handler is never replaced; one it installs later replaces ours). Flush
 * what can be flushed without blocking, then let the default action run. */
static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    static _Atomic int once;
    int saved = errno;
    if (!atomic_exchange(&once, 1)) {
        atomic_store(&g_sprof.running, 0);
        sprof_set_end_reason(SPROF_END_FATAL_SIGNAL, (uint32_t)sig);
        sprof_fatal_flush();
    }
    /* SA_RESETHAND made the action SIG_DFL. A fault re-executes and kills;
     * a sent signal (kill, abort's tgkill) is raised again and delivered on
     * return. */
    if (!si || si->si_code <= 0 || sig == SIGABRT || sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
        sig == SIGQUIT || sig == SIGXCPU)
        raise(sig);
    errno = saved;
}

void sprof_fatal_install(void)
{
    for (size_t i = 0; i < sizeof fatal_sigs / sizeof fatal_sigs[0]; i++) {
        struct sigaction cur;
        if (sigaction(fatal_sigs[i], NULL, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(fatal_sigs[i], &sa, NULL);
    }
}

static void fork_prepare(void)
{
    if (!g_sprof.session) return;
    sprof_lock(&g_sprof.reg_lock);
    sprof_io_lock();
}

static void fork_parent(void)
{
    if (!g_sprof.session) return;
    sprof_io_unlock();
    sprof_unlock(&g_sprof.reg_lock);
}

/* The child inherits the parent's file descriptor, rings and perf events:
 * it drops all of them without writing a byte, then either starts its own
 * profile (SPROF_OUT contains %p, so the name differs) or stays unprofiled. */
static void fork_child(void)
{
    if (!g_sprof.session) return;
    atomic_store(&g_sprof.running, 0);
    sprof_fd_close_all(); /* the trace, perf events, /proc files: copies of the parent's */
    g_sprof.session = g_sprof.open_pending = 0;
    if (sprof_self && sprof_self->altstack) {
        stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
        sigaltstack(&off, NULL);
    }
    sprof_self = NULL;
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) == SLOT_FREE) continue;
        if (t->perf_base) munmap(t->perf_base, t->perf_len);
        sprof_perf_assist_free(t);
        sprof_perf_phase_free(t);
        if (t->altstack) munmap(t->altstack, t->altstack_len);
        t->perf_base = t->altstack = NULL;
        t->perf_fd = t->phase_fd = -1;
        sprof_ring_free(&t->ring);
        atomic_store(&t->freed_epoch, 0); /* the child has no sampler pass in flight */
        atomic_store(&t->state, SLOT_FREE);
    }
    atomic_store(&g_sprof.sampler_active, 0);
    sprof_ring_free(&g_sprof.aux_ring);
    g_sprof.writer_started = g_sprof.sampler_started = 0;
    atomic_store(&g_sprof.reg_lock, 0);
    atomic_store(&g_sprof.io_lock, 0);
    if (g_sprof.cfg.path_has_pid) sprof_after_fork_child();
}

static void reset_counters(void)
{
    atomic_store(&g_sprof.stopping, 0);
    atomic_store(&g_sprof.problems, 0);
    atomic_store(&g_sprof.threads_seen, 0);
    atomic_store(&g_sprof.exited_cpu_ns, 0);
    atomic_store(&g_sprof.unregistered_signals, 0);
    atomic_store(&g_sprof.aux_dropped, 0);
    atomic_store(&g_sprof.ktick_signals, 0);
    atomic_store(&g_sprof.exited_user_ns, 0);
    atomic_store(&g_sprof.exited_sys_ns, 0);
    g_sprof.weight_written = g_sprof.kernel_weight_written = g_sprof.clock_excess_ns = 0;
    g_sprof.walked_samples = g_sprof.unwalked_samples = 0;
    g_sprof.walked_threads = 0;
    g_sprof.phase_kicks = 0;
    atomic_store(&g_sprof.writer_cpu_ns, 0);
    atomic_store(&g_sprof.sampler_cpu_ns, 0);
    g_sprof.final_cpu_ns = 0;
    atomic_store(&g_sprof.stop_cpu_ns, 0);
    atomic_store(&g_sprof.stop_time_ns, 0);
    atomic_store(&g_sprof.start_done_ns, UINT64_MAX); /* until the start is done */
    g_sprof.samples_written = g_sprof.samples_truncated = g_sprof.periods_milli = 0;
    atomic_store(&g_sprof.pacer_landings, 0);
    atomic_store(&g_sprof.pacer_local_landings, 0);
    g_sprof.dropped_released = g_sprof.lost_released = 0;
    sprof_maps_reset();
}

/* The tick sampler relies on the kernel queueing a CPU timer's signal on
 * the way back to user mode (CONFIG_POSIX_CPU_TIMERS_TASK_WORK, 5.11+ on
 * x86-64): queued from the tick instead, it could interrupt a system call
 * the thread was entering with EINTR. */
static int tick_sampler_safe(void)
{
#if defined(__x86_64__)
    struct utsname u;
    int major = 0, minor = 0;
    if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
    return major > 5 || (major == 5 && minor >= 11);
#else
    return 0;
#endif
}

/* perf_event that may not sample kernel mode (perf_event_paranoid 2, the
 * upstream default) gets kernel time from the tick only: one sample per
 * tick (250 Hz here), so a program that spends half its CPU in the kernel
 * got ~60 % of the asked samples (docs/runtime.md, "Which mechanism").
 * The cpuclock pacer, stopping the thread from its own CPU, samples both
 * modes at the asked rate at about perf_event's cost at 1 kHz; it is the
 * default there unless the user asked for the tick (SPROF_KERNEL=tick) or
 * for no kernel time, or the thread runs under a real-time policy (the
 * pacer cannot run beside it). */
static int paced_kernel_better(void)
{
    const struct sprof_config *c = &g_sprof.cfg;
    if (c->mode != SPROF_MODE_CPU || c->kernel != SPROF_KERNEL_AUTO) return 0;
    if (!tick_sampler_safe() || sprof_thread_realtime(0)) return 0;
    return sprof_perf_probe_kernel() != 0;
}

static int choose_mechanism(void)
{
    const struct sprof_config *c = &g_sprof.cfg;
    if (c->mode == SPROF_MODE_WALL) {
        /* no signals at all when perf_event is allowed: nothing can see EINTR */
        if ((!c->forced_mech || c->forced_mech == SPROF_MECH_PERF_EVENT) && sprof_perf_probe() == 0)
            return SPROF_MECH_WALL_PERF;
        return SPROF_MECH_WALL;
    }
    if (c->forced_mech && c->forced_mech != SPROF_MECH_PERF_EVENT) return c->forced_mech;
    if (sprof_perf_probe() == 0) {
        if (c->forced_mech == SPROF_MECH_PERF_EVENT || !paced_kernel_better()) return SPROF_MECH_PERF_EVENT;
        return SPROF_MECH_CPUCLOCK_PACED;
    }
    if (c->forced_mech == SPROF_MECH_PERF_EVENT)
        sprof_warn("SPROF_TIMER=perf_event: perf_event_open refused (%s; see perf_event_paranoid); "
                   "using cpuclock", SPROF_ERRNO_TEXT(errno));
    return SPROF_MECH_CPUCLOCK_PACED;
}

/* How kernel time is sampled, for the mechanism chosen (SPROF_KERNEL):
 * the perf_event itself where the kernel lets it sample kernel mode, else
 * the tick sampler (kernel_sampler.c). Wall mode and the tick-driven
 * comparison mechanisms leave it alone. */
static uint32_t choose_kernel_sampling(void)
{
    int want = g_sprof.cfg.kernel;
    if (g_sprof.cfg.mode != SPROF_MODE_CPU || want == SPROF_KERNEL_OFF) return SPROF_KSAMPLE_NONE;
    if (g_sprof.mech == SPROF_MECH_PERF_EVENT && want != SPROF_KERNEL_TICK) {
        if (sprof_perf_probe_kernel() == 0) return SPROF_KSAMPLE_PERF;
        if (want == SPROF_KERNEL_PERF)
            sprof_warn("SPROF_KERNEL=perf: perf_event may not sample kernel mode here (%s; "
                       "perf_event_paranoid > 1 without CAP_PERFMON); using the kernel tick",
                       SPROF_ERRNO_TEXT(errno));
    }
    if ((g_sprof.mech == SPROF_MECH_PERF_EVENT || g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED) &&
        tick_sampler_safe())
        return SPROF_KSAMPLE_TICK;
    return SPROF_KSAMPLE_NONE;
}

static int start_signals(void)
{
    if (sprof_signal_install() != 0) return -1;
    if (g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED || g_sprof.mech == SPROF_MECH_WALL)
        return sprof_sampler_start();
    return 0;
}

static void start_common(int lazy_file)
{
    g_sprof.pid = getpid();
    g_sprof.period_ns = 1000000000ull / g_sprof.cfg.hz;
    if (g_sprof.period_ns == 0) g_sprof.period_ns = 1;
    reset_counters();
    sprof_exit_report_prepare();
    sprof_rotate_first_name();
    if (sprof_writer_open(lazy_file) != 0) return;
    g_sprof.start_mono_ns = sprof_now_ns(CLOCK_MONOTONIC);
    g_sprof.mech = choose_mechanism();
    g_sprof.ksample = choose_kernel_sampling();

    sprof_maps_scan(0); /* exec table before the first sample */
    sprof_perf_locate_code(); /* here, not in the writer: it takes the loader's lock */
    sprof_control_start(); /* a paused start: before any thread's sampling is set up */
    sprof_spare_stock();   /* the first threads' rings and stacks, mapped now */
    int ok;
    if (g_sprof.mech == SPROF_MECH_PERF_EVENT) ok = g_sprof.ksample != SPROF_KSAMPLE_TICK || sprof_signal_install() == 0;
    else if (g_sprof.mech == SPROF_MECH_WALL_PERF) ok = sprof_sampler_start() == 0;
    else ok = start_signals() == 0;
    if (ok) {
        atomic_store(&g_sprof.running, 1);
        if (!sprof_thread_register(0) && sprof_uses_perf()) {
            /* event opened in the probe but the ring mmap failed (mlock limit) */
            sprof_warn("perf_event ring buffer unavailable (%s); using signals",
                       SPROF_ERRNO_TEXT(errno));
            atomic_store(&g_sprof.running, 0);
            sprof_sampler_stop();
            g_sprof.mech = g_sprof.mech == SPROF_MECH_WALL_PERF ? SPROF_MECH_WALL : SPROF_MECH_CPUCLOCK_PACED;
            g_sprof.ksample = choose_kernel_sampling();
            ok = start_signals() == 0;
            if (ok) {
                atomic_store(&g_sprof.running, 1);
                sprof_thread_register(0);
            }
        }
    }
    if (!ok) {
        atomic_store(&g_sprof.running, 0);
        g_sprof.mech = SPROF_MECH_NONE;
        sprof_warn("no sampling mechanism could be started; the trace will hold no samples");
    }
    sprof_io_lock();
    sprof_emit_info();
    sprof_maps_scan(1);
    if (!g_sprof.open_pending) sprof_out_flush();
    sprof_io_unlock();
    sprof_writer_start();
    sprof_start_report();
}

/* Samples taken so far are sprof's set-up (reading the maps, the first
 * flush, starting the writer, the fatal-signal handlers: measured, 3-5
 * samples at 20 kHz with stacks in libsprof under ld.so's constructor loop,
 * which no rule knew as sprof's): dropped, and their CPU is charged to no
 * one. */
static void mark_start_done(void)
{
    struct sprof_thread *me = sprof_self;
    if (me && sprof_uses_signals()) me->last_cpu_ns = me->k_last_cpu = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
    atomic_store(&g_sprof.start_done_ns, sprof_now_ns(CLOCK_MONOTONIC));
}

/* From here on the threads run sprof's exit, not the program: a perf
 * sample taken later (the identity checks, the lock wait) is dropped. The
 * first stop path to get here sets it. */
static void mark_stop_time(void)
{
    uint64_t zero = 0;
    atomic_compare_exchange_strong(&g_sprof.stop_time_ns, &zero, sprof_now_ns(CLOCK_MONOTONIC));
}

void sprof_start(void)
{
    static int atfork_done;
    if (!sprof_config_load(&g_sprof.cfg)) return;
    if (!atfork_done) {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        atfork_done = 1;
    }
    start_common(0);
    if (g_sprof.session) sprof_fatal_install();
    mark_start_done();
}

void sprof_after_fork_child(void)
{
    sprof_expand_path(g_sprof.cfg.pattern, getpid(), g_sprof.cfg.out_path, sizeof g_sprof.cfg.out_path);
    start_common(1);
    mark_start_done();
}

void sprof_stop(void)
{
    if (!g_sprof.session) return;
    mark_stop_time();
    /* the stopping thread's CPU still kept under call paths (cpuclock +
     * tick): samples of its own, the handler held off meanwhile */
    struct sprof_thread *me = sprof_self;
    if (me && me->carries_live && sprof_uses_signals()) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        sprof_carry_flush_all(me, sprof_now_ns(CLOCK_MONOTONIC));
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    /* under io_lock: a writer pass in flight ends first, and no later one
     * pauses, resumes (re-enabling events) or rotates (record_control.c, rotate.c) */
    sprof_io_lock();
    atomic_store(&g_sprof.stop_cpu_ns, sprof_profiled_cpu_ns());
    atomic_store(&g_sprof.running, 0);
    /* threads still running keep their events/timers until they exit: stop
     * them now so they cost nothing during the rest of the exit. The perf
     * events under io_lock: a writer pass may be reopening one with another
     * stack copy (perf_adapt.c), replacing the descriptor and its entry in
     * the owned-descriptor table (a data race under TSan, faults sigmask) */
    if (sprof_uses_perf())
        for (int i = 0, hi = sprof_slots_hi(); i < hi; i++)
            if (atomic_load(&g_sprof.threads[i].state) == SLOT_ACTIVE) sprof_perf_thread_stop(&g_sprof.threads[i]);
    sprof_io_unlock();
    sprof_sampler_stop();
    sprof_signal_uninstall();
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE) continue;
        sprof_timers_retire(t);
        if (t->ptimer_ok) {
            t->ptimer_ok = 0;
            timer_delete(t->ptimer);
        }
        sprof_ktick_thread_stop(t);
    }
    sprof_writer_finish();
}

void sprof_before_exec(void)
{
    /* Only the profiled process itself cleans up: a vfork child shares the
     * parent's memory (stopping "its" profiler would stop the parent's), and
     * a process that never profiled has no pid recorded. Everything below
     * is a no-op when there is nothing to stop or release; the signal is
     * released even after a stop, since a stop leaves the handler in place. */
    if (getpid() != g_sprof.pid) return;
    /* The image is replaced: finish this trace (END record; the new image
     * moves it aside to <path>.pre-exec if it reuses the name), stop the
     * sampler thread, so nothing signals us any more, then drop what it may
     * have queued. If execve fails the process runs on unprofiled. */
    sprof_set_end_reason(SPROF_END_EXEC, 0);
    sprof_stop();
    sprof_signal_release_for_exec();
}

void sprof_before_exit(void)
{
    /* As for exec, only the profiled process itself: a vfork child's _exit
     * must leave the parent's profile running. No joins (the other threads
     * end with the process) and no unbounded wait: _exit may be called from
     * a signal handler. */
    if (getpid() != g_sprof.pid || !g_sprof.session) return;
    mark_stop_time();
    atomic_store(&g_sprof.stop_cpu_ns, sprof_profiled_cpu_ns());
    atomic_store(&g_sprof.running, 0);
    sprof_set_end_reason(SPROF_END_UNDERSCORE_EXIT, 0);
    sprof_exit_flush();
}

/* Made undefined by libsprof_rt.a (an ld input script: EXTERN(sprof_rt_link)),
 * or by -Wl,-u,sprof_rt_link, to pull this member and its constructor in. */
SPROF_EXPORT int sprof_rt_link;

__attribute__((constructor)) static void sprof_ctor(void) { sprof_start(); }
__attribute__((destructor)) static void sprof_dtor(void) { sprof_stop(); }
