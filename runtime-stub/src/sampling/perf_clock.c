/* perf_event: weights in the thread's own CPU time.
 *
 * A sample's weight is the advance of the event's task clock since the
 * thread's previous sample. The task clock counts the time the thread was
 * on a CPU as the kernel's local_clock() sees it; the thread's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID, getrusage, what `time` prints and what the
 * program measures of itself) counts the scheduler's task clock, which
 * leaves out the time the hypervisor ran another guest on that CPU (steal)
 * and interrupt time. On a busy virtual machine the two part: +0.2-0.9 %
 * on this 2-CPU VM in a quiet minute, +7.5 % in one loaded CI run, where
 * the weights of e2e_profile_linked came to 3.248 s for 3.022 s of CPU.
 * perf itself reports the task clock.
 *
 * So the writer looks at both clocks of each thread now and then (every
 * 50 ms of wall time, once 10 ms of task clock has passed: two system
 * calls) and scales the weights of the samples it drains by the thread's
 * CPU per task-clock ns since the previous look, when that is below 0.999.
 * What is taken out of the weights is counted (STATS.clock_excess_ns). The samples
 * themselves come at the task clock's pace, so the delivered rate per CPU
 * second reads that much above 100 %. Writer thread, io_lock held. */
#include "rt_internal.h"

enum {
    CLOCK_LOOK_EVERY_NS = 50000000,  /* wall time between two looks at a thread */
    CLOCK_MIN_WINDOW_NS = 10000000,  /* task clock a window needs to say anything */
};

void sprof_perf_clock_look(struct sprof_thread *t, uint64_t now_mono)
{
    if (t->clock_mark_mono && now_mono - t->clock_mark_mono < CLOCK_LOOK_EVERY_NS) return;
    if (sprof_control_paused()) return;
    uint64_t count = sprof_perf_count(t), cpu; /* 0 without an event */
    if (!count || sprof_clock_ns(t->cpuclock, &cpu) != 0) return;
    /* a window from the last look (none yet, or one the counts went back
     * from, starts one) */
    if (t->clock_mark_mono && count >= t->clock_mark_count && cpu >= t->clock_mark_cpu) {
        uint64_t dcount = count - t->clock_mark_count, dcpu = cpu - t->clock_mark_cpu;
        if (dcount < CLOCK_MIN_WINDOW_NS) return; /* a thread that mostly waits: a longer window */
        /* the two reads are a few us apart, in the same order at every look */
        t->cpu_per_count_q16 = dcpu * 1000u >= dcount * 999u ? 0 : (uint32_t)((dcpu << 16) / dcount);
    }
    t->clock_mark_mono = now_mono;
    t->clock_mark_count = count;
    t->clock_mark_cpu = cpu;
}

uint64_t sprof_perf_clock_scale(const struct sprof_thread *t, uint64_t task_clock_ns)
{
    uint32_t q = t->cpu_per_count_q16;
    return q ? (task_clock_ns * q + 32768u) >> 16 : task_clock_ns;
}
