/* Recording control for long-running programs: start paused
 * (SPROF_START=paused), toggle recording by a signal the user chooses
 * (SPROF_TOGGLE_SIGNAL, default SIGUSR2 when control is asked for), and a
 * time window (SPROF_DELAY, SPROF_DURATION). docs/runtime.md, "Start,
 * stop and time windows".
 *
 * The toggle handler only counts; the writer thread does the work on its
 * next pass (at most ~100 ms later): pausing disables each thread's perf
 * event and disarms the kernel-tick and POSIX timers, the pacer thread
 * signals nobody, and the signal handler drops what still arrives. Paused
 * CPU is charged to nothing: it is left out of STATS.cpu_ns_total and
 * shown as STATS.paused_cpu_ns; the first sample after a resume weighs only
 * the CPU since the resume.
 *
 * The toggle signal is never taken from the program: the handler goes in
 * only where the action is SIG_DFL at start, and when the program installs
 * its own later, sprof steps back (says so once, never reinstalls). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <linux/perf_event.h>

#include "rt_internal.h"

static _Atomic uint64_t toggle_requests; /* the handler's only work */
static uint64_t toggles_seen;
static int toggle_installed;  /* our handler went in */
static int toggle_given_up;   /* the program took the signal: never again */

/* writer side (io_lock held), CLOCK_MONOTONIC / profiled-CPU marks */
static uint64_t started_mono;       /* when the session started */
static uint64_t first_record_mono;  /* when recording first began (0: not yet) */
static uint64_t last_resume_mono;
static int window_over;             /* SPROF_DURATION ran out: stay paused */
static int delay_pending;           /* SPROF_DELAY not reached yet */
static uint64_t pause_cpu_mark;     /* profiled CPU when the current pause began */
static uint64_t paused_cpu_total;   /* over ended pauses */

static void on_toggle(int sig)
{
    (void)sig;
    atomic_fetch_add_explicit(&toggle_requests, 1, memory_order_relaxed);
}

static const struct {
    const char *name;
    int sig;
} signal_names[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"INT", SIGINT},
                    {"QUIT", SIGQUIT}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"WINCH", SIGWINCH},
                    {"URG", SIGURG}, {"PWR", SIGPWR}, {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
                    {"TTOU", SIGTTOU}, {"ALRM", SIGALRM}, {"VTALRM", SIGVTALRM}, {"PIPE", SIGPIPE}};

/* "SIGUSR2", "USR2", "12", "SIGRTMIN+3"; 0 for none/off; -1 if unusable. */
static int parse_signal(const char *s)
{
    if (!strcmp(s, "none") || !strcmp(s, "off") || !strcmp(s, "0")) return 0;
    const char *n = strncmp(s, "SIG", 3) == 0 ? s + 3 : s;
    for (size_t i = 0; i < sizeof signal_names / sizeof signal_names[0]; i++)
        if (!strcmp(n, signal_names[i].name)) return signal_names[i].sig;
    char *end;
    long v;
    if (!strncmp(n, "RTMIN+", 6)) {
        errno = 0;
        v = strtol(n + 6, &end, 10);
        if (errno || *end || v < 0 || v > SIGRTMAX - SIGRTMIN) return -1;
        return SIGRTMIN + (int)v;
    }
    errno = 0;
    v = strtol(n, &end, 10);
    if (errno || *end || end == n || v < 1 || v > SIGRTMAX) return -1;
    /* these mean a fault or cannot be caught */
    if (v == SIGKILL || v == SIGSTOP || v == SIGSEGV || v == SIGBUS || v == SIGILL || v == SIGFPE) return -1;
    return (int)v;
}

/* Seconds, fractions allowed ("2", "0.5"); 0 when unset or wrong. */
static uint64_t parse_seconds(const char *name, const char *s)
{
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= 0) || v > 1e7) {
        sprof_warn("%s=%s is not a number of seconds (0..10000000); ignored", name, s);
        return 0;
    }
    return (uint64_t)(v * 1e9);
}

void sprof_control_config(struct sprof_config *c)
{
    const char *start = secure_getenv("SPROF_START");
    if (start && *start) {
        if (!strcmp(start, "paused")) c->start_paused = 1;
        else if (strcmp(start, "on") != 0) sprof_warn("SPROF_START=%s unknown (on|paused); starting on", start);
    }
    c->delay_ns = parse_seconds("SPROF_DELAY", secure_getenv("SPROF_DELAY"));
    c->duration_ns = parse_seconds("SPROF_DURATION", secure_getenv("SPROF_DURATION"));
    const char *ts = secure_getenv("SPROF_TOGGLE_SIGNAL");
    /* the default signal only when control was asked for: a program that
     * gets SIGUSR2 must otherwise see the default action it expects */
    c->toggle_sig = c->start_paused ? SIGUSR2 : 0;
    if (ts && *ts) {
        int sig = parse_signal(ts);
        if (sig < 0) sprof_warn("SPROF_TOGGLE_SIGNAL=%s is not a signal sprof can use; no toggle signal", ts);
        c->toggle_sig = sig < 0 ? 0 : sig;
    }
}

static int is_our_toggle(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == on_toggle;
}

static void install_toggle(int sig)
{
    struct sigaction cur;
    if (sigaction(sig, NULL, &cur) != 0) return;
    if (is_our_toggle(&cur)) { /* a forked child: the parent's, ours to keep */
        toggle_installed = 1;
        return;
    }
    if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) {
        sprof_warn("signal %d (%s) is the program's (%s); sprof does not take it: no toggling by signal", sig,
                   SPROF_SIGNAL_TEXT(sig), cur.sa_handler == SIG_IGN ? "ignored" : "it has a handler");
        toggle_given_up = 1;
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_toggle;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) == 0) toggle_installed = 1;
}

/* Has the program installed its own action for the toggle signal? Then
 * it is the program's from now on: say so once and stop looking. */
static void check_toggle_still_ours(void)
{
    if (!toggle_installed || toggle_given_up) return;
    struct sigaction cur;
    if (sigaction(g_sprof.cfg.toggle_sig, NULL, &cur) != 0 || is_our_toggle(&cur)) return;
    toggle_given_up = 1;
    sprof_warn("the program installed its own action for signal %d (%s); sprof no longer toggles "
               "recording on it (the program's handler runs)", g_sprof.cfg.toggle_sig,
               SPROF_SIGNAL_TEXT(g_sprof.cfg.toggle_sig));
}

static uint64_t thread_cpu(const struct sprof_thread *t)
{
    uint64_t ns;
    return sprof_clock_ns(t->cpuclock, &ns) == 0 ? ns : 0;
}

static void set_timer(timer_t tm, uint64_t period_ns)
{
    struct itimerspec its;
    its.it_interval.tv_sec = (time_t)(period_ns / 1000000000ull);
    its.it_interval.tv_nsec = (long)(period_ns % 1000000000ull);
    its.it_value = its.it_interval;
    timer_settime(tm, 0, &its, NULL);
}

/* The per-thread sampling of the mechanisms, off (0) or back on (1). */
static void switch_threads(int on)
{
    uint64_t ktick = g_sprof.period_ns < 1000000ull ? g_sprof.period_ns : 1000000ull;
    int signal_ours = sprof_signal_still_ours();
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE) continue;
        sprof_perf_clock_forget(t); /* a window across the switch compares a stopped count */
        if (sprof_uses_perf()) {
            int a = atomic_load(&t->attach);
            int fd = a == ATTACH_INLINE || a == ATTACH_DONE ? sprof_fd_checked(&t->perf_fd) : -1;
            if (fd >= 0) ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
        }
        /* not after sprof_signal_silence disarmed them for good */
        if (!signal_ours || !sprof_timers_claim(t)) continue;
        if (t->ktimer_ok) set_timer(t->ktimer, on ? ktick : 0);
        if (t->ptimer_ok) set_timer(t->ptimer, on ? g_sprof.period_ns : 0);
        sprof_timers_release(t);
    }
}

static void pause_recording(void)
{
    if (sprof_control_paused()) return;
    pause_cpu_mark = sprof_profiled_cpu_ns();
    atomic_store(&g_sprof.paused, 1); /* the handler drops from here on */
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) == SLOT_ACTIVE) t->pause_mark_cpu = thread_cpu(t);
    }
    switch_threads(0);
}

static void resume_recording(uint64_t now_mono)
{
    if (!sprof_control_paused()) return;
    /* threads registered while paused have no mark: all their CPU so far was paused */
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE) continue;
        uint64_t cpu = thread_cpu(t), mark = t->pause_mark_cpu ? t->pause_mark_cpu : t->cpu_start_ns;
        t->paused_cpu_ns += cpu > mark ? cpu - mark : 0;
        t->pause_mark_cpu = 0;
        atomic_store(&t->resume_cpu_ns, cpu ? cpu : 1);
        atomic_store(&t->last_wall_ns, now_mono);
        atomic_store(&t->wait_ns, 0);
    }
    uint64_t cpu = sprof_profiled_cpu_ns();
    paused_cpu_total += cpu > pause_cpu_mark ? cpu - pause_cpu_mark : 0;
    last_resume_mono = now_mono;
    if (!first_record_mono) first_record_mono = now_mono;
    switch_threads(1);
    atomic_store(&g_sprof.paused, 0);
}

void sprof_control_start(void)
{
    const struct sprof_config *c = &g_sprof.cfg;
    atomic_store(&g_sprof.paused, 0);
    started_mono = sprof_now_ns(CLOCK_MONOTONIC);
    first_record_mono = last_resume_mono = window_over = 0;
    paused_cpu_total = pause_cpu_mark = 0;
    toggles_seen = atomic_load(&toggle_requests);
    toggle_given_up = 0;
    delay_pending = c->delay_ns > 0;
    if (c->toggle_sig) install_toggle(c->toggle_sig);
    /* before any thread registers: nothing is enabled, nothing charged */
    if (c->start_paused || delay_pending) atomic_store(&g_sprof.paused, 1);
    else first_record_mono = started_mono;
}

void sprof_control_pass(uint64_t now)
{
    const struct sprof_config *c = &g_sprof.cfg;
    check_toggle_still_ours();
    if (window_over || !atomic_load(&g_sprof.running)) return; /* stopped: nothing to switch */
    uint64_t req = atomic_load_explicit(&toggle_requests, memory_order_relaxed);
    if (toggle_installed && !toggle_given_up && req != toggles_seen) {
        /* an even number of signals since the last pass changes nothing */
        if ((req - toggles_seen) & 1) {
            delay_pending = 0; /* the user decides now */
            if (sprof_control_paused()) resume_recording(now);
            else pause_recording();
        }
        toggles_seen = req;
    }
    if (delay_pending && now >= started_mono + c->delay_ns) {
        delay_pending = 0;
        resume_recording(now);
    }
    if (c->duration_ns && first_record_mono && now >= first_record_mono + c->duration_ns) {
        pause_recording();
        window_over = 1;
    }
}

void sprof_control_finish(void) { check_toggle_still_ours(); }

uint64_t sprof_control_paused_cpu(uint64_t cpu_now)
{
    uint64_t p = paused_cpu_total;
    if (sprof_control_paused() && cpu_now > pause_cpu_mark) p += cpu_now - pause_cpu_mark;
    return p;
}

int sprof_control_resumed_since(uint64_t mono_ns) { return last_resume_mono && last_resume_mono >= mono_ns; }

uint64_t sprof_control_thread_paused(const struct sprof_thread *t)
{
    uint64_t p = t->paused_cpu_ns;
    if (sprof_control_paused()) {
        uint64_t mark = t->pause_mark_cpu ? t->pause_mark_cpu : t->cpu_start_ns;
        if (t->final_cpu_ns > mark) p += t->final_cpu_ns - mark;
    }
    return p;
}

void sprof_control_handler_resume(struct sprof_thread *t)
{
    if (!atomic_load_explicit(&t->resume_cpu_ns, memory_order_relaxed)) return;
    uint64_t r = atomic_exchange_explicit(&t->resume_cpu_ns, 0, memory_order_relaxed);
    if (r > t->last_cpu_ns) t->last_cpu_ns = r;
    if (r > t->k_last_cpu) t->k_last_cpu = r;
    t->pacer_carry_ns = t->tick_recorded_ns = 0; /* from before the pause */
    t->draw_chain = 0;
    sprof_carry_reset(t);
}
