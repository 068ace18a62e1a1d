/* Local pacing (cpuclock). A signal sent from another CPU reaches a running
 * thread by an interrupt microseconds later, or earlier at the return from
 * a system call it makes meanwhile: samples piled up at system-call
 * returns (docs/runtime.md, "Kernel time"). So the pacer moves itself to
 * the CPU of the thread it is about to signal and sleeps there: its timer's
 * interrupt stops that thread, in user mode at the interrupted instruction
 * or in the kernel at the end of the system call or fault it was in, and
 * the pacer runs in its place. The thread is not running when the signal
 * is sent, so it takes it exactly where it stopped: an unbiased draw, in
 * user or kernel mode, like perf's own timer. Only a wake by the pacer's
 * timer on that CPU stops the thread so; after a move or a retry request
 * the pacer first sleeps there once (`settled`). */
#define _GNU_SOURCE
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pacer_local.h"

/* The pacer's wake must stop the thread at once, at the timer's interrupt:
 * a wake that does not preempt (EEVDF lets the running task finish its
 * slice) stops it later at a scheduling point, and system calls that
 * update the scheduler's clock (clock_gettime of a thread's CPU clock) are
 * such points: samples piled up there. A short custom slice (Linux 6.12,
 * sched_setattr's sched_runtime for SCHED_OTHER; no privilege needed) lets
 * a waking task preempt. Older kernels refuse or ignore it. */
struct sprof_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

void sprof_pacer_short_slice(void)
{
#ifdef SYS_sched_setattr
    /* only for a normal policy: a pacer started by a real-time thread keeps
     * its inherited policy (sched_setattr would lower it) */
    if (sched_getscheduler(0) != SCHED_OTHER) return;
    struct sprof_sched_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.sched_policy = SCHED_OTHER;
    a.sched_nice = getpriority(PRIO_PROCESS, 0);
    a.sched_runtime = 100000; /* 0.1 ms: the shortest the kernel takes */
    syscall(SYS_sched_setattr, 0, &a, 0);
#endif
}

void sprof_pacer_move(struct sprof_pacer_place *pl, int cpu)
{
    pl->settled = 0;
    if (cpu == pl->pin.here) return;
    if (cpu < 0 || sprof_own_pin(&pl->pin, cpu) != 0) {
        pl->ok = 0; /* outside our cpuset: signal from wherever we are */
        atomic_store(&g_sprof.pacer_local_ok, 0);
    }
}

/* A due point drawn at random within each period of the thread's CPU
 * (stratified sampling): at a fixed spacing, a program whose phases repeat
 * with the period (25 us fiber exchanges against a 250 us period) was drawn
 * at the same phase over and over once the pacer stopped it on time. */
uint64_t sprof_pacer_jitter(uint64_t *rng, uint64_t period)
{
    uint64_t r = sprof_xorshift64(rng);
    return period ? r % period : 0;
}

void sprof_pacer_note_wake(struct sprof_pacer_place *pl, uint64_t late_ns, uint64_t period)
{
    /* far beyond any load's scheduling delay (ms on a busy 2-core VM) */
    uint64_t far = 20 * period > 50000000ull ? 20 * period : 50000000ull;
    if (!pl->ok || late_ns <= far) {
        pl->starved = 0;
        return;
    }
    if (++pl->starved < 3) return;
    pl->ok = 0;
    pl->settled = 0;
    atomic_store(&g_sprof.pacer_local_ok, 0);
    sprof_own_pin(&pl->pin, -1);
}
