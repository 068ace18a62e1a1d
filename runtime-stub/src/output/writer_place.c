/* Where the writer runs: on the CPU of the thread whose samples it drained
 * most since its previous pass (where that thread's last perf sample was
 * taken, or where the cpuclock pacer last saw it), so that it wakes on a
 * CPU where the program's address space is already live.
 *
 * Why: on a 2-vCPU PVM guest, a thread of the process that wakes on the
 * other CPU while the program churns its memory (page faults, brk, munmap:
 * the corpus's template) pays for the address space's changes made
 * meanwhile, about 4 % of a CPU whatever it does and however often it
 * wakes: the writer's own CPU on template came to 0.16-0.20 s of 4.3 s at
 * 1 Hz as at 1 kHz, and a do-nothing thread that wakes every 50 ms or every
 * 5 ms the same; pinned to the program's CPU 0.013 s. perf record, another
 * process, pays the like on its own CPU (docs/runtime.md, "Where sprof's
 * threads run").
 *
 * Only in its steady rhythm: while it must be prompt it goes back to its
 * first affinity, where it runs soonest (a busy CPU delays its wake by up
 * to the running thread's slice): threads starting (their perf events wait
 * for it), its first passes, a ring filling up, a stack copy to grow (a
 * 400-deep recursion's first samples stayed cut 30 ms longer: 94.7 %
 * complete in one CI run, want 97). Never beside a
 * thread under a real-time policy (it would not run there until that
 * thread yields: its rings would fill). A cpuset that refuses the CPU, or
 * wakes far later than asked three times in a row, end following.
 * SPROF_WRITER=remote: never pinned. Writer thread only. */
#define _GNU_SOURCE
#include <sched.h>

#include "host/own_pin.h"
#include "rt_internal.h"

static struct sprof_own_pin pin = {.here = -1};
static int refused, starved;

/* The CPU of the thread with the most sampled weight since the last call,
 * -1 when none ran (or none was seen yet), -2 when that thread runs under
 * a real-time policy. */
static int busiest_cpu(void)
{
    uint64_t most = 0;
    int cpu = -1;
    uint32_t tid = 0;
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load_explicit(&t->state, memory_order_acquire) != SLOT_ACTIVE) continue;
        uint64_t ran = t->weight_written - t->follow_mark;
        t->follow_mark = t->weight_written;
        int seen = atomic_load_explicit(&t->seen_cpu1, memory_order_relaxed) - 1;
        if (seen >= 0 && ran > most) {
            most = ran;
            cpu = seen;
            tid = t->tid;
        }
    }
    return tid && sprof_thread_realtime(tid) ? -2 : cpu;
}

void sprof_writer_place(int prompt, uint64_t late_ns)
{
    if (g_sprof.cfg.writer_remote || refused) return;
    /* far beyond any load's scheduling delay (ms on a busy 2-core VM) */
    starved = pin.here >= 0 && late_ns > 50000000ull ? starved + 1 : 0;
    int cpu = prompt || starved >= 3 ? -1 : busiest_cpu();
    if (cpu == -1 && !prompt && starved < 3) return; /* nothing ran: stay */
    if (sprof_own_pin(&pin, cpu < 0 ? -1 : cpu) != 0 || starved >= 3) {
        refused = 1;
        sprof_own_pin(&pin, -1);
    }
}

/* A new writer (a forked child's): not pinned yet, whatever the parent's was. */
void sprof_writer_place_reset(void)
{
    pin.here = -1;
    pin.have_orig = 0;
    refused = starved = 0;
}
