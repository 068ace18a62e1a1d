/* Kernel time without privileges: the "tick" kernel sampler.
 *
 * At perf_event_paranoid >= 2 a task-clock event may only sample user mode:
 * when its timer fires while the thread is in the kernel (a system call, a
 * page fault) the kernel drops the sample. The cpuclock fallback's signals,
 * sent from another thread, land late, at the next return to user mode.
 * Neither says where kernel time went (docs/runtime.md, "Kernel time").
 *
 * What does: a per-thread POSIX CPU-time timer. The kernel checks it at its
 * tick, in the thread's own context, and (CONFIG_POSIX_CPU_TIMERS_TASK_WORK,
 * x86-64's default since 5.11) queues the signal on the way back to user
 * mode: after the interrupted user instruction if the tick found the thread
 * in user mode, at the end of the system call or fault it found it in
 * otherwise. The interrupted user context is then exactly the one that
 * entered the kernel. The same tick charged the thread's raw utime or stime
 * (the kernel's own tick accounting, readable as the per-thread CPUCLOCK_VIRT
 * and CPUCLOCK_PROF clocks), so the handler knows which it was: stime grew
 * since the previous handler => the tick was in the kernel. Such a tick
 * becomes a KERNEL sample weighted by the thread's CPU since the previous
 * tick in that proportion; a user-mode tick records
 * nothing (the main mechanism samples user mode at the asked rate).
 *
 * The timer's period is at most 1 ms, below every common tick (100..1000
 * Hz), so every tick on which the thread ran expires it: one signal per
 * tick, overruns are expected and not losses. A system call spanning
 * several ticks gets one signal at its end carrying all of their stime. */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt_internal.h"

/* Per-thread CPU clocks by kind (linux/posix-timers.h, not in libc's
 * headers): PROF = utime + stime, VIRT = utime, both as the tick charged
 * them; tid 0 is the calling thread. */
#define CPUCLOCK_PROF 0
#define CPUCLOCK_VIRT 1
#define CPUCLOCK_PERTHREAD_MASK 4
static clockid_t thread_clock(uint32_t tid, int kind)
{
    return (clockid_t)((~(unsigned)tid) << 3) | kind | CPUCLOCK_PERTHREAD_MASK;
}

int sprof_thread_user_sys(uint32_t tid, uint64_t *user_ns, uint64_t *sys_ns)
{
    uint64_t prof, virt;
    if (sprof_clock_ns(thread_clock(tid, CPUCLOCK_PROF), &prof) != 0) return -1;
    if (sprof_clock_ns(thread_clock(tid, CPUCLOCK_VIRT), &virt) != 0) return -1;
    *user_ns = virt;
    *sys_ns = prof > virt ? prof - virt : 0;
    return 0;
}

/* Minor + major page faults of the calling thread. */
uint64_t sprof_own_faults(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
    return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

/* x86-64: is pc just after a `syscall` instruction that the thread entered
 * the kernel by? The CPU put the return address in rcx (the kernel restores
 * it there), which a fault or interrupt does not. code[] holds the 9 bytes
 * before pc. Returns the system call number, -1 when the instruction before
 * does not load it as an immediate, -2 when this is not a syscall return. */
int sprof_decode_syscall_return(const uint8_t code[9], uint64_t pc, uint64_t rcx)
{
    if (code[7] != 0x0f || code[8] != 0x05 || rcx != pc) return -2;
    uint32_t imm;
    if (code[2] == 0xb8) { /* mov $imm32, %eax */
        memcpy(&imm, code + 3, 4);
        return imm < 4096 ? (int)imm : -1;
    }
    if (code[0] == 0x48 && code[1] == 0xc7 && code[2] == 0xc0) { /* mov $imm32, %rax */
        memcpy(&imm, code + 3, 4);
        return imm < 4096 ? (int)imm : -1;
    }
    if (code[5] == 0x31 && code[6] == 0xc0) return 0; /* xor %eax, %eax: read */
    return -1;
}

/* The same for registers the process holds: live (the signal handler, the
 * code is where the executable-mapping table says, readable on x86-64
 * Linux) or from another moment (the writer thread, perf samples: the code
 * may have been unmapped since, so it is read with process_vm_readv, which
 * fails instead of faulting). */
static int syscall_return_within(uint64_t pc, uint64_t rcx, int live, uint64_t skid)
{
#if defined(__x86_64__)
    /* A few instructions past the return, or back at the top of the loop
     * around the call, still holding its return address in rcx: the
     * interrupt that was due in the call's way out was taken there. On a
     * PVM guest (Linux 6.18) the timer interrupt held across sysret is
     * taken 1-6 instructions later: acc_io's [syscall] read 43-46 % under
     * perf_event against 47.0 %, its missing samples on the compare and
     * branch after each call and on the loop's first instructions (with
     * this window: 0.5-1.0 pp off). skid 0: the return address exactly. */
    if (pc < 9 || rcx < 9 || pc > rcx + skid || pc + skid < rcx) return -2;
    uint8_t code[9];
    if (live) {
        if (!sprof_is_exec(rcx - 9) || !sprof_is_exec(rcx - 1)) return -2;
        memcpy(code, (const void *)(rcx - 9), 9);
    } else {
        struct iovec l = {code, 9}, r = {(void *)(rcx - 9), 9};
        if (syscall(SYS_process_vm_readv, (long)g_sprof.pid, &l, 1L, &r, 1L, 0L) != 9) return -2;
    }
    return sprof_decode_syscall_return(code, rcx, rcx);
#else
    (void)pc;
    (void)rcx;
    (void)live;
    (void)skid;
    return -2;
#endif
}

int sprof_syscall_return(uint64_t pc, uint64_t rcx, int live) { return syscall_return_within(pc, rcx, live, 0); }

int sprof_syscall_return_near(uint64_t pc, uint64_t rcx, int live)
{
    return syscall_return_within(pc, rcx, live, SPROF_SYSCALL_SKID_BYTES);
}

uint32_t sprof_syscall_flags(int nr)
{
    if (nr < -1) return 0;
    uint32_t f = SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_SYSCALL;
    if (nr >= 0 && (uint32_t)nr + 1 <= SPROF_SAMPLE_SYSCALL_MASK)
        f |= ((uint32_t)nr + 1) << SPROF_SAMPLE_SYSCALL_SHIFT;
    return f;
}

/* Kernel time owed by the pacer's landings at a return pc (signal handler
 * context, one thread: no locking); pc 0 is the thread's pool. A
 * direct-mapped table; a site pushed out goes to the pool, and a landing
 * whose site is not there takes from the pool. */
static struct sprof_site *site_slot(struct sprof_thread *t, uint64_t pc)
{
    return &t->sites[(pc ^ (pc >> 7) ^ (pc >> 15)) & (SPROF_SITES - 1)];
}

void sprof_site_owe(struct sprof_thread *t, uint64_t pc, uint64_t ns, uint32_t flags)
{
    if (!pc) {
        t->site_pool_ns += ns;
        return;
    }
    struct sprof_site *s = site_slot(t, pc);
    if (s->pc != pc) {
        t->site_pool_ns += s->owed_ns;
        s->pc = pc;
        s->owed_ns = 0;
    }
    s->owed_ns += ns;
    s->flags = flags;
}

/* the site that owes for pc, or NULL (pc 0 is the pool's, never a site) */
static struct sprof_site *owing_site(struct sprof_thread *t, uint64_t pc)
{
    struct sprof_site *s = site_slot(t, pc);
    return pc && s->pc == pc ? s : NULL;
}

static uint64_t take_from(uint64_t *owed, uint64_t most)
{
    uint64_t take = *owed < most ? *owed : most;
    *owed -= take;
    return take;
}

uint64_t sprof_site_take(struct sprof_thread *t, uint64_t pc, uint64_t most)
{
    struct sprof_site *s = owing_site(t, pc);
    return take_from(s ? &s->owed_ns : &t->site_pool_ns, most);
}

uint64_t sprof_site_take_exact(struct sprof_thread *t, uint64_t pc, uint64_t most, uint32_t *flags)
{
    struct sprof_site *s = owing_site(t, pc);
    if (!s) return 0;
    *flags = s->flags;
    return take_from(&s->owed_ns, most);
}

/* The timer on the thread's own CPU clock (t->cpuclock names it from any
 * thread of the process; CLOCK_THREAD_CPUTIME_ID, where there was no such
 * id, only from the thread itself), its signal sent to that thread. */
static int ktick_timer_create(struct sprof_thread *t)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = g_sprof.sig;
    sev.sigev_value.sival_int = SPROF_KTICK_COOKIE;
    sev._sigev_un._tid = (pid_t)t->tid;
    if (timer_create(t->cpuclock, &sev, &t->ktimer) != 0) return -1;
    uint64_t period = g_sprof.period_ns < 1000000ull ? g_sprof.period_ns : 1000000ull;
    struct itimerspec its;
    its.it_interval.tv_sec = 0;
    its.it_interval.tv_nsec = (long)period;
    its.it_value = its.it_interval;
    if (sprof_control_paused()) its.it_value.tv_nsec = 0; /* armed at the resume (record_control.c) */
    if (timer_settime(t->ktimer, 0, &its, NULL) != 0) {
        timer_delete(t->ktimer);
        return -1;
    }
    t->ktimer_ok = 1;
    return 0;
}

/* A thread the program started, whose clocks start at 0 (the baselines
 * are the slot's zeros), leaves its timer to the writer: timer_create and
 * timer_settime were two system calls of its start (~3.7 us of its CPU on
 * a Firecracker guest, with timer_delete at its end). The writer makes it
 * at its next look (at most a ms while threads start, else its pass):
 * the thread's first moments have no tick, as they have no perf event
 * (perf_event's attach, which this rides on). */
int sprof_ktick_thread_start(struct sprof_thread *t)
{
    if (t->from_zero && t->fresh_thread && t->cpuclock != CLOCK_THREAD_CPUTIME_ID) {
        atomic_store(&t->ktick_deferred, 1);
        atomic_store(&g_sprof.attach_wanted, 1); /* no wake: the writer's next look */
        return 0;
    }
    if (!t->from_zero) { /* else all 0, as the thread's own counts start */
        sprof_thread_user_sys(0, &t->k_last_user, &t->k_last_sys);
        t->k_last_cpu = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
        t->k_last_faults = sprof_own_faults();
    }
    return ktick_timer_create(t);
}

/* Writer: the timers of a thread are claimed against its end's deletion
 * (sprof_timers_retire): a thread that ended meanwhile gets none. */
void sprof_ktick_attach(struct sprof_thread *t)
{
    if (!atomic_load(&t->ktick_deferred) || !sprof_timers_claim(t)) return;
    if (atomic_exchange(&t->ktick_deferred, 0)) ktick_timer_create(t);
    sprof_timers_release(t);
}

void sprof_ktick_thread_stop(struct sprof_thread *t)
{
    if (t->ktimer_ok) timer_delete(t->ktimer);
    t->ktimer_ok = 0;
}

/* Signal handler, on a ktick signal: returns the flags of a KERNEL sample
 * to record with *weight = the kernel time it stands for, or 0 (with
 * *user_mode set when the tick found the thread in user mode). */
uint32_t sprof_ktick_classify(struct sprof_thread *t, uint64_t pc, uint64_t rcx, uint64_t *weight, int *user_mode)
{
    *user_mode = 0;
    atomic_fetch_add_explicit(&g_sprof.ktick_signals, 1, memory_order_relaxed);
    uint64_t user, sys, cpu = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
    if (sprof_thread_user_sys(0, &user, &sys) != 0) return 0;
    uint64_t du = user > t->k_last_user ? user - t->k_last_user : 0;
    uint64_t ds = sys > t->k_last_sys ? sys - t->k_last_sys : 0;
    uint64_t dcpu = cpu > t->k_last_cpu ? cpu - t->k_last_cpu : 0;
    t->k_last_user = user;
    t->k_last_sys = sys;
    t->k_last_cpu = cpu;
    uint64_t faults = sprof_own_faults();
    int faulted = faults != t->k_last_faults;
    t->k_last_faults = faults;
    if (!ds) {
        *user_mode = du != 0;
        return 0;
    }
    /* The ticks since the previous signal (one, unless a system call
     * spanned several) sampled the mode; the weight is the thread's precise
     * CPU over that interval in the kernel's proportion, not the ticks'
     * nominal length: a tick's accounting leaves out time stolen by the
     * hypervisor, the CPU clock and the main mechanism's periods do not. */
    uint64_t w = (uint64_t)((double)dcpu * (double)ds / (double)(du + ds));
    uint32_t flags;
    int nr = sprof_syscall_return(pc, rcx, 1);
    /* cpuclock, the pacer's signals landing where the thread stopped
     * (sampler_thread.c): they sample system calls at the asked rate */
    int local = g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED && t->local_landings;
    if (nr >= -1 && local) return 0;
    if (nr >= -1) {
        flags = sprof_syscall_flags(nr);
    } else {
        /* Not a system call: a fault, or the kernel's work for an interrupt
         * or a signal. The cpuclock pacer's own signals cost the thread
         * kernel time (delivery, rt_sigreturn) right after its handler ran:
         * that is sprof's, not the program's, and is left out. */
        if (g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED && cpu - t->last_cpu_ns < SPROF_OWN_SIGNAL_NS && !faulted)
            return 0;
        /* Local pacing: the pacer stops the thread with its timer, switches
         * in and out, and the signal is delivered: kernel time on the
         * thread's clock at the pc of the landing, sprof's. A tick there
         * that is neither a system call nor a fault is most likely that
         * (counted, a pure user-mode workload read ~5 % [kernel] at
         * 10 kHz); the program's own such kernel time (an interrupt's, a
         * signal's delivery) goes to the user code it interrupted. */
        if (local && !faulted) return 0;
        /* perf_event: the kernel's work for an interrupt or a signal (the
         * event's own overflow, a phase kick's or a live walk's signal,
         * a device's interrupt) is spread over the user samples with the
         * rest of the CPU they cover (perf_ktick.c), not a lump of a whole
         * tick on the method it interrupted: acc_methods50 got 7 such
         * ticks of 3.4 ms in 2 s, rperf's metric 2.3-3.9 % against
         * 0.4-0.9 % before the kicks */
        if (g_sprof.mech != SPROF_MECH_CPUCLOCK_PACED && !faulted) return 0;
        flags = SPROF_SAMPLE_KERNEL | (faulted ? SPROF_SAMPLE_PAGE_FAULT : 0);
    }
    /* Recorded for a paced thread (its last landing was remote): only its
     * kernel time since that landing, whose weight holds what came before;
     * the next local landing takes what is recorded here off its own. */
    if (g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED && !local) {
        uint64_t since = cpu > t->last_cpu_ns ? cpu - t->last_cpu_ns : 0;
        if (w > since) w = since;
        t->tick_recorded_ns += w;
    }
    if (!w) return 0;
    *weight = w;
    /* cpuclock: the pacer's landings owe it (signal_sampler.c): a system
     * call's to the thread's pool, a fault's to its pc. Where they land
     * where the thread stopped, they sample faults too (as user time at the
     * faulting instruction): the tick only says how much of what they find
     * at that pc was the kernel's, and records nothing itself. */
    if (g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED) sprof_site_owe(t, (flags & SPROF_SAMPLE_SYSCALL) ? 0 : pc, w, flags);
    if (local) return 0;
    return flags | SPROF_SAMPLE_KERNEL_TICK;
}
