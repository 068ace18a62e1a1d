/* The sampler thread, for two mechanisms:
 *  - cpuclock (CPU mode): reads each thread's CPU clock and signals a thread
 *    once it has run a full period since its last due point. It sleeps until
 *    the earliest thread can next be due (CPU time cannot accrue faster than
 *    wall time), so idle programs cost few wake-ups and busy ones are paced
 *    at the asked rate; due points advance by whole periods, so a late wake
 *    is paid back by an earlier next one.
 *  - wall: every period, each running thread gets the signal; a thread that
 *    is blocked is NOT signalled (no EINTR for the program): its stack is
 *    copied with process_vm_readv from the sp in /proc/self/task/TID/syscall
 *    and walked here, the sample marked OFFCPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt_internal.h"
#include "pacer_aim.h"
#include "pacer_local.h"

static _Atomic int sampler_run;

/* sampler-private /proc handles, per slot, tagged with the tid they belong to */
struct proc_fds {
    uint32_t tid;
    int stat_fd, syscall_fd;
};
static struct proc_fds pfds[SPROF_MAX_THREADS];

/* Never into a handler the program installed for our signal since. */
static long tgkill_tid(uint32_t tid, int sig)
{
    if (!sprof_signal_still_ours()) return -1;
    return syscall(SYS_tgkill, (long)g_sprof.pid, (long)tid, (long)sig);
}

/* This thread's CPU, for STATS' own_cpu_ns: read every 256th pass (a
 * system call) and at the end. */
static void note_own_cpu(uint64_t pass)
{
    if ((pass & 255) == 0) atomic_store(&g_sprof.sampler_cpu_ns, sprof_now_ns(CLOCK_THREAD_CPUTIME_ID));
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* cpuclock: sleep until t (CLOCK_MONOTONIC) or until a handler asks for a
 * retry (pacer_kick, signal_sampler.c), whichever comes first. Returns 1
 * if woken by a retry request, 0 if by the timer. */
static int sleep_until_kicked(uint64_t t)
{
    while (!atomic_exchange_explicit(&g_sprof.pacer_kick, 0, memory_order_acquire))
        if (!sprof_futex_wait(&g_sprof.pacer_kick, 0, t)) return 0;
    return 1;
}

void sprof_pacer_kick(void)
{
    atomic_store_explicit(&g_sprof.pacer_kick, 1, memory_order_release);
    sprof_futex_wake(&g_sprof.pacer_kick);
}

/* Recording paused (record_control.c): signal nobody, sample nothing,
 * but still end a pass now and then (slot reuse waits for the epoch). */
static int paused_pass(void)
{
    if (!sprof_control_paused()) return 0;
    note_own_cpu(atomic_fetch_add_explicit(&g_sprof.sampler_epoch, 1, memory_order_release));
    sleep_until(sprof_now_ns(CLOCK_MONOTONIC) + 10000000ull);
    return 1;
}

static int open_task_file(uint32_t tid, const char *what)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/%s", tid, what);
    return open(path, O_RDONLY | O_CLOEXEC);
}

/* Running state of a thread from /proc/self/task/TID/stat: 'R', 'S', 'D',
 * ...; *faults = its minor + major page faults so far (fields 10 and 12),
 * *cpu = the CPU it last ran on or waits for (field 39), -1 if unknown. */
/* the field after the one q is in (space separated) */
static const char *next_field(const char *q)
{
    while (*q && *q != ' ') q++;
    while (*q == ' ') q++;
    return q;
}

static char thread_state(struct proc_fds *p, uint64_t *faults, int *cpu)
{
    char buf[512];
    ssize_t n = pread(sprof_fd_load(&p->stat_fd), buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    if (!rp || rp[1] != ' ') return 0;
    /* after ')': state(3) ppid pgrp session tty tpgid flags minflt(10)
     * cminflt majflt(12) ... processor(39); one walk for what is asked */
    unsigned long long minflt = 0, majflt = 0;
    if (cpu) *cpu = -1;
    const char *q = rp + 2;
    for (int f = 3, last = cpu ? 39 : faults ? 12 : 3; f <= last && *q; f++, q = next_field(q)) {
        if (f == 10) minflt = strtoull(q, NULL, 10);
        else if (f == 12) majflt = strtoull(q, NULL, 10);
        else if (f == 39 && *q >= '0' && *q <= '9') *cpu = (int)strtol(q, NULL, 10);
    }
    if (faults) *faults = minflt + majflt;
    return rp[2];
}

/* The /proc handles of slot i, (re)opened when the slot's thread changed;
 * closed when the slot is not active. NULL if the slot is not active. */
static struct proc_fds *proc_fds_for(int i, struct sprof_thread *t, int active)
{
    struct proc_fds *p = &pfds[i];
    if (p->tid && (!active || p->tid != t->tid)) {
        sprof_fd_close(&p->stat_fd);
        sprof_fd_close(&p->syscall_fd);
        *p = (struct proc_fds){0, -1, -1};
    }
    if (!active) return NULL;
    if (!p->tid) {
        p->tid = t->tid;
        /* held across program code: high numbers, identity checked before close */
        sprof_fd_adopt(open_task_file(t->tid, "stat"), &p->stat_fd, SPROF_FD_FILE);
        sprof_fd_adopt(sprof_is_wall() ? open_task_file(t->tid, "syscall") : -1, &p->syscall_fd, SPROF_FD_FILE);
    }
    return p;
}

static void proc_fds_reset(int close_them)
{
    for (int i = 0; i < SPROF_MAX_THREADS; i++) {
        if (close_them) sprof_fd_close(&pfds[i].stat_fd);
        if (close_them) sprof_fd_close(&pfds[i].syscall_fd);
        pfds[i] = (struct proc_fds){0, -1, -1};
    }
}

static void pace_cpuclock(void)
{
    const uint64_t period = g_sprof.period_ns;
    const uint64_t max_debt = 10 * period > 20000000ull ? 10 * period : 20000000ull;
    /* local pacing's shortest sleep: long enough for the thread to run on */
    const uint64_t settle = period / 16 < 20000 ? 20000 : period / 16 > 200000 ? 200000 : period / 16;
    struct sprof_pacer_place pl = {.ok = !g_sprof.cfg.pacer_remote, .pin = {.here = -1}, .settled = 0, .home = -1};
    uint64_t rng = sprof_now_ns(CLOCK_MONOTONIC) | 1;
    atomic_store(&g_sprof.pacer_local_ok, pl.ok);
    if (pl.ok) sprof_pacer_short_slice();
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC), slept = 0;
    struct sprof_pacer_aim aim; /* its timer aimed at the followed thread's due point (pacer_aim.c) */
    sprof_pacer_aim_init(&aim);
    while (atomic_load(&sampler_run)) {
        if (paused_pass()) {
            pl.settled = 0;
            continue;
        }
        int move_to = -1, home = -1;
        uint64_t home_rate = 0;
        uint64_t min_left = 10 * 1000000ull; /* re-check for new threads at least every 10 ms */
        int min_slot = -1, min_aimed = 0;
        uint64_t min_cpu = 0;
        for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
            struct sprof_thread *t = &g_sprof.threads[i];
            int active = atomic_load_explicit(&t->state, memory_order_acquire) == SLOT_ACTIVE;
            struct proc_fds *p = proc_fds_for(i, t, active);
            if (!p) continue;
            uint64_t cpu;
            if (sprof_clock_ns(t->cpuclock, &cpu) != 0) continue;
            /* first due point: a whole period of CPU after registration, as
             * a counter's first overflow. A thread that ends before it is
             * not drawn and its exit tail counts the fraction of a sample
             * its CPU is; with a random first draw it could also be drawn,
             * and then counted twice by sample counts (3,200 threads of
             * 100 us: 50.7 % of the samples for 41.1 % of the CPU) */
            if (t->pacer_next_cpu_ns == 0) {
                t->pacer_stratum_ns = t->cpu_start_ns;
                t->pacer_next_cpu_ns = t->pacer_stratum_ns + period;
            }
            /* CPU the handler recorded in a system call the signal waited
             * in (signal_sampler.c, pacer_call_span): the draws due in it
             * are paid, not a debt to forgive or to pay back after the call
             * (a burst of draws in the code after it) */
            uint64_t paid = atomic_exchange_explicit(&t->pacer_span_ns, 0, memory_order_relaxed);
            if (paid) {
                t->pacer_stratum_ns = t->pacer_stratum_ns + paid < cpu ? t->pacer_stratum_ns + paid : cpu;
                if (t->pacer_next_cpu_ns < t->pacer_stratum_ns)
                    t->pacer_next_cpu_ns = t->pacer_stratum_ns + sprof_pacer_jitter(&rng, period);
            }
            /* A due point is consumed only by a signal actually sent: one
             * still in flight (the thread was not scheduled yet) keeps the
             * debt, paid by a later wake. More than max(10 periods, 20 ms)
             * behind: forgive rather than burst (the weights carry the CPU
             * time either way). */
            /* Only a running (or runnable) thread is signalled: one that ran
             * its period and then blocked would take the sample in its wait
             * (pthread_cond_wait...) and charge that CPU there; it is
             * signalled when it has run again. */
            /* A retry (the previous signal landed at a system-call return,
             * signal_sampler.c) is sent at once and consumes no due point. */
            uint64_t faults = SPROF_FAULTS_UNKNOWN;
            uint64_t tol = sprof_pacer_aim_wake(&aim, i, cpu, pl.settled, settle, period);
            int due = cpu + tol >= t->pacer_next_cpu_ns, retry = atomic_load_explicit(&t->pacer_retry, memory_order_relaxed);
            /* Stopped by our timer: it ran all the time we slept (less a
             * few us: the pacer's own way into its sleep). One that another
             * thread of the program had preempted, or that had blocked and
             * woke, stopped somewhere else (a new thread preempts its
             * creator at clone3's return): no draw. Measured: a thread
             * starting threads put 17 % of its CPU at pthread_create's
             * signal unblocking, whose truth is 6.5 %, with a quarter of
             * the sleep allowed. */
            int ran_on = cpu + SPROF_PACER_RAN_SLACK_NS + slept / 64 >= t->pacer_look_cpu_ns + slept;
            int tcpu = -1, local = 0, send = (due || retry) && !atomic_load(&t->pending);
            /* The thread our timer stopped, on our CPU (its rseq area says
             * so) and running all the time we slept: runnable, here. Else
             * one pread of its stat: state, CPU and faults (~7 us, a third
             * of a pass, on a Firecracker guest). */
            int here = send && pl.ok && pl.settled && ran_on && pl.pin.here >= 0 && sprof_thread_rseq_cpu(t) == pl.pin.here;
            if (here) {
                tcpu = pl.pin.here;
            } else if (send && sprof_fd_load(&p->stat_fd) >= 0) {
                faults = 0;
                send = thread_state(p, &faults, &tcpu) == 'R';
            }
            if (tcpu >= 0) atomic_store_explicit(&t->seen_cpu1, tcpu + 1, memory_order_relaxed); /* the writer's too */
            uint64_t prev_look = t->pacer_look_cpu_ns ? t->pacer_look_cpu_ns : cpu;
            t->pacer_look_cpu_ns = cpu;
            if (send && pl.ok && tcpu >= 0) {
                /* On its CPU: signal it once our timer stopped it. The thread
                 * the pacer follows, elsewhere: go there. Others elsewhere:
                 * signal them from here (remote, as before 2.1). */
                local = tcpu == pl.pin.here && pl.settled && ran_on;
                if (local || t->pacer_misses >= SPROF_PACER_MAX_MISSES) {
                    send = 1; /* local, or remote after that many misses in a row */
                } else if (tcpu == pl.pin.here) {
                    send = 0; /* wait for our timer to stop it */
                    t->pacer_misses++;
                } else if (i == pl.home && !sprof_thread_realtime(t->tid)) {
                    if (move_to < 0) move_to = tcpu;
                    send = 0;
                } /* else: signalled from here, landing late (signal_sampler.c's pacer_weight) */
            }
            if (send) t->pacer_misses = 0;
            if (send && !atomic_exchange(&t->pending, 1)) {
                /* the handler tells from these whether the thread entered
                 * the kernel between this decision and the signal's arrival */
                atomic_store_explicit(&t->pacer_faults, faults, memory_order_relaxed);
                atomic_store_explicit(&t->pacer_local, local, memory_order_relaxed);
                atomic_store_explicit(&t->pacer_sent_cpu_ns, cpu, memory_order_relaxed);
                atomic_store_explicit(&t->pacer_retry, 0, memory_order_relaxed);
                if (tgkill_tid(t->tid, g_sprof.sig) == 0) {
                    if (due) t->pacer_stratum_ns += period;
                    if (cpu > t->pacer_stratum_ns + max_debt) {
                        /* the draws forgiven are lost signals: `sprof-trace
                         * info` and the rate warning say the pacer was
                         * starved rather than leaving the shortfall unexplained */
                        atomic_fetch_add_explicit(&t->lost, (cpu - t->pacer_stratum_ns) / period,
                                                  memory_order_relaxed);
                        t->pacer_stratum_ns = cpu;
                    }
                    if (due) t->pacer_next_cpu_ns = t->pacer_stratum_ns + sprof_pacer_jitter(&rng, period);
                } else {
                    atomic_store(&t->pending, 0);
                }
            }
            /* A draw not taken at its due point (the pacer was elsewhere,
             * the thread blocked or was stopped by something else) is
             * taken at a fresh random point within the next period, never
             * "as soon as possible": that is a fixed few us after whatever
             * made it possible (a thread that joins its child and starts
             * the next had 18 % of its samples in pthread_create, whose
             * truth is 6.5 %). The debt is kept: the stratum still counts
             * the periods owed, and while it is more than two periods the
             * draw is within a quarter period, so a stall's draws are paid
             * back in a third of its length after it. Drawn within a whole
             * period, a debt was paid no faster than new ones came: three
             * busy threads on two CPUs had 10-30 % of their draws forgiven,
             * the threads the pacer does not follow more than the one it
             * does (bursty's sample counts 3-5 pp off). */
            if (pl.ok && t->pacer_next_cpu_ns <= cpu) {
                uint64_t within = cpu > t->pacer_stratum_ns + 2 * period ? period / 4 : period;
                t->pacer_next_cpu_ns = cpu + sprof_pacer_jitter(&rng, within);
            }
            uint64_t left = t->pacer_next_cpu_ns > cpu ? t->pacer_next_cpu_ns - cpu : 0;
            /* signal still in flight: nothing to do until the thread runs its
             * handler; do not spin on it (a preempted thread can take ms).
             * Local pacing: the thread takes it as soon as the pacer sleeps,
             * and the next wake must be the due point itself: a fixed
             * half period after each draw was drawn in step with a program
             * that repeats every 165 us (pthread_create's window sampled
             * at 3x its truth). */
            /* the thread the pacer follows: its timer is aimed at the due
             * point, from the signal in flight too (it is taken as soon as
             * the pacer sleeps); not while it does not run (blocked: a
             * settle apart, as others) */
            int pending = atomic_load(&t->pending), aimed = pl.ok && i == pl.home && cpu != prev_look;
            if (aimed) left = sprof_pacer_aim_sleep(&aim, left);
            if (pending && left < (pl.ok ? settle : period / 2)) left = pl.ok ? settle : period / 2;
            if (left < min_left) {
                min_left = left;
                min_slot = i;
                min_aimed = aimed;
                min_cpu = cpu;
            }
            /* the thread that ran most lately is the one the pacer follows */
            t->pacer_rate = t->pacer_rate - t->pacer_rate / 8 + (cpu - prev_look) / 8;
            if (t->pacer_rate > home_rate) {
                home_rate = t->pacer_rate;
                home = i;
            }
        }
        pl.home = home;
        note_own_cpu(atomic_fetch_add_explicit(&g_sprof.sampler_epoch, 1, memory_order_release)); /* pass over */
        if (!min_aimed && min_left < (pl.ok ? settle : period / 4)) min_left = pl.ok ? settle : period / 4;
        sprof_pacer_aim_set(&aim, min_aimed ? min_slot : -1, min_cpu, min_left);
        if (move_to >= 0) sprof_pacer_move(&pl, move_to);
        now = sprof_now_ns(CLOCK_MONOTONIC);
        int kicked = sleep_until_kicked(now + min_left);
        uint64_t woke = sprof_now_ns(CLOCK_MONOTONIC);
        uint64_t late = woke > now + min_left ? woke - (now + min_left) : 0;
        slept = woke - now - late;
        sprof_pacer_note_wake(&pl, late, period);
        /* A retry request's wake may stop a thread anywhere (in its
         * handler); a wake much later than the timer's wakes usually are
         * (10-20 us on one host, 43 us on another: pacer_aim.c) did not
         * preempt at once, and the thread ran on to a later scheduling
         * point: neither is a draw. Such a point is where the scheduler
         * looks again (a system call that updates its clock, as a read of
         * the thread's CPU clock does; a wake-up of another task; the tick),
         * not where the due point was: taking wakes up to 500 us late as
         * draws where they landed (2026-11-29, docs/runtime.md) put a
         * compute step's CPU on the clock read after it (acc_cheapcall
         * [syscall] +1.9-3.1 pp) and a thread creator's on its compute
         * (acc_shortthreads +1.7-2.4), malloc's cpu weight 2.6-3.0 pp off. */
        pl.settled = sprof_pacer_aim_woke(&aim, late, pl.ok && !kicked && sched_getcpu() == pl.pin.here);
    }
}

/* Off-CPU sample of a blocked thread, built here from a copy of its stack. */
static void offcpu_sample(struct sprof_thread *t, struct proc_fds *p, uint8_t *rec_buf, uint32_t rec_cap,
                          uint8_t *copy, size_t copy_cap)
{
    char buf[256];
    ssize_t n = pread(sprof_fd_load(&p->syscall_fd), buf, sizeof buf - 1, 0);
    if (n <= 0) return;
    buf[n] = 0;
    if (!strncmp(buf, "running", 7)) { /* woke up meanwhile: sample it on CPU */
        if (g_sprof.mech == SPROF_MECH_WALL) tgkill_tid(t->tid, g_sprof.sig);
        return;
    }
    /* "nr a1 a2 a3 a4 a5 a6 sp pc" or "-1 sp pc" */
    unsigned long long v[9];
    int k = sscanf(buf, "%lld %llx %llx %llx %llx %llx %llx %llx %llx", (long long *)&v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7], &v[8]);
    uint64_t sp, pc;
    if (k == 9) { sp = v[7]; pc = v[8]; }
    else if (k == 3) { sp = v[1]; pc = v[2]; }
    else return;
    uint64_t hi = t->stack_hi && sp >= t->stack_lo && sp < t->stack_hi ? t->stack_hi : sp + SPROF_FIBER_WINDOW;
    size_t want = hi - sp < copy_cap ? (size_t)(hi - sp) : copy_cap;
    struct iovec l = {copy, want}, r = {(void *)sp, want};
    ssize_t got = syscall(SYS_process_vm_readv, (long)g_sprof.pid, &l, 1L, &r, 1L, 0L);
    if (got < 16) return;
    struct sprof_rec_sample *rec = (struct sprof_rec_sample *)rec_buf;
    memset(rec, 0, sizeof *rec);
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
    uint64_t prev = atomic_exchange(&t->last_wall_ns, now);
    rec->tid = t->tid;
    rec->time_ns = now;
    rec->weight_ns = now > prev ? now - prev : 0;
    rec->flags = SPROF_SAMPLE_OFFCPU;
    if (!(t->stack_hi && sp >= t->stack_lo && sp < t->stack_hi)) rec->flags |= SPROF_SAMPLE_OFF_STACK;
    struct sprof_walk_mem m = {.lo = sp, .hi = sp + (uint64_t)got, .copy = copy, .stack_hi = hi};
    uint32_t size = sprof_walk(rec, rec_cap, pc, sp, 0, &m, g_sprof.cfg.max_depth);
    rec->fp = 0;
    if (!size) return;
    void *dst = sprof_ring_reserve(&g_sprof.aux_ring, size);
    if (!dst) {
        atomic_fetch_add(&g_sprof.aux_dropped, 1);
        return;
    }
    memcpy(dst, rec, size);
    sprof_ring_commit(&g_sprof.aux_ring, size);
}

static void pace_wall(void)
{
    const uint64_t period = g_sprof.period_ns;
    /* mapped, not malloc'ed: this thread never calls malloc (own_threads.c) */
    uint32_t rec_cap = sprof_scratch_size(g_sprof.cfg.max_depth);
    size_t copy_cap = 16 * 1024, len = rec_cap + copy_cap;
    void *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) return;
    uint8_t *rec_buf = mem, *copy = rec_buf + rec_cap;
    uint64_t next = sprof_now_ns(CLOCK_MONOTONIC);
    while (atomic_load(&sampler_run)) {
        if (paused_pass()) {
            next = sprof_now_ns(CLOCK_MONOTONIC);
            continue;
        }
        next += period;
        uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
        if (next + 10 * period < now) next = now; /* fell far behind: do not burst */
        sleep_until(next);
        for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
            struct sprof_thread *t = &g_sprof.threads[i];
            int active = atomic_load_explicit(&t->state, memory_order_acquire) == SLOT_ACTIVE;
            struct proc_fds *p = proc_fds_for(i, t, active);
            if (!p) continue;
            char st = sprof_fd_load(&p->stat_fd) >= 0 ? thread_state(p, NULL, NULL) : 'R';
            if (g_sprof.mech == SPROF_MECH_WALL_PERF) {
                /* Runnable time the task clock did not see (waiting for a CPU)
                 * goes to the thread's next on-CPU sample, as a late signal's
                 * weight would in the signal-driven wall mechanism. */
                uint64_t wnow = sprof_now_ns(CLOCK_MONOTONIC), cpu = 0;
                if (sprof_clock_ns(t->cpuclock, &cpu) != 0) cpu = 0;
                if (st == 'R' || st == 0 || sprof_fd_load(&p->syscall_fd) < 0) {
                    uint64_t prev = atomic_exchange(&t->last_wall_ns, wnow);
                    if (t->look_cpu_ns && cpu >= t->look_cpu_ns && wnow > prev && wnow - prev > cpu - t->look_cpu_ns)
                        atomic_fetch_add(&t->wait_ns, (wnow - prev) - (cpu - t->look_cpu_ns));
                } else {
                    offcpu_sample(t, p, rec_buf, rec_cap, copy, copy_cap);
                }
                t->look_cpu_ns = cpu;
            } else if (st == 'R' || st == 0 || sprof_fd_load(&p->syscall_fd) < 0) {
                if (!atomic_exchange(&t->pending, 1)) {
                    if (tgkill_tid(t->tid, g_sprof.sig) != 0) atomic_store(&t->pending, 0);
                }
            } else {
                offcpu_sample(t, p, rec_buf, rec_cap, copy, copy_cap);
            }
        }
        note_own_cpu(atomic_fetch_add_explicit(&g_sprof.sampler_epoch, 1, memory_order_release)); /* pass over */
    }
    munmap(mem, len);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    proc_fds_reset(0); /* after fork these are the parent's numbers: forget, do not close */
    prctl(PR_SET_NAME, "sprof-sampler");
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake on time: default slack is 50 us */
    if (sprof_is_wall()) pace_wall();
    else pace_cpuclock();
    proc_fds_reset(1);
    atomic_store(&g_sprof.sampler_cpu_ns, sprof_now_ns(CLOCK_THREAD_CPUTIME_ID));
    return NULL;
}

int sprof_sampler_start(void)
{
    if (sprof_is_wall() && !g_sprof.aux_ring.buf && sprof_ring_init(&g_sprof.aux_ring, SPROF_RING_BYTES) != 0) return -1;
    atomic_store(&sampler_run, 1);
    atomic_store(&g_sprof.sampler_active, 1);
    if (sprof_own_thread_create(&g_sprof.sampler_tid, sampler_main) != 0) {
        atomic_store(&g_sprof.sampler_active, 0);
        return -1;
    }
    g_sprof.sampler_started = 1;
    return 0;
}

void sprof_sampler_stop(void)
{
    if (!g_sprof.sampler_started) return;
    atomic_store(&sampler_run, 0);
    pthread_join(g_sprof.sampler_tid, NULL);
    g_sprof.sampler_started = 0;
    atomic_store(&g_sprof.sampler_active, 0);
}
