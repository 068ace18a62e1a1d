/* Where one of sprof's own threads runs (host/own_threads.c): pinned to one
 * CPU, or back to the affinity it started with. The cpuclock pacer follows
 * the thread it signals (sampling/pacer_local.c), the writer the thread it
 * drains most (output/writer_place.c). Includers define _GNU_SOURCE. */
#ifndef SPROF_OWN_PIN_H
#define SPROF_OWN_PIN_H

#include <sched.h>

#include "rt_internal.h"

struct sprof_own_pin {
    int here;      /* the CPU the thread is pinned to, -1: not pinned */
    int have_orig; /* orig holds its affinity from before its first pin */
    cpu_set_t orig;
};

/* Pin the calling thread to cpu (cpu < 0: back to its first affinity).
 * 0 on success; -1 when the kernel refuses (a CPU outside the cpuset). */
SPROF_HIDDEN int sprof_own_pin(struct sprof_own_pin *p, int cpu);

/* Does thread tid (0: the caller) run under a real-time policy? Neither
 * the pacer nor the writer moves to its CPU: there they could not preempt
 * it, nor run at all until it yields. */
SPROF_HIDDEN int sprof_thread_realtime(uint32_t tid);

#endif
