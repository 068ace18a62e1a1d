/* Honest accounting: what a trace's own counters say about how much of the
 * profiled threads' CPU its samples stand for, and the warnings every tool
 * that reads traces prints (once per trace) when a profile covers less than
 * it seems to. The figures come from sprof_profile.traces, filled by
 * sprof_profile_add_traces. Spec: docs/views.md ("Accounting warnings"). */
#ifndef SPROF_ACCOUNTING_H
#define SPROF_ACCOUNTING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thresholds (docs/views.md). */
#define SPROF_WARN_MIN_COVERAGE 0.95   /* weights / threads' CPU */
#define SPROF_WARN_MIN_RATE 0.90       /* delivered / asked samples per CPU second */
#define SPROF_WARN_MAX_UNSAMPLED_SYS 0.05 /* system CPU share when kernel time is not sampled */
#define SPROF_WARN_MAX_TICK_SYS 0.10     /* system CPU share drawn at the tick rate only */

enum sprof_accounting_warning {
    SPROF_WARN_COVERAGE = 0,     /* the samples' weights cover < 95 % of the threads' CPU */
    SPROF_WARN_RATE = 1,         /* delivered < 90 % of the samples asked (cpu mode) */
    SPROF_WARN_KERNEL_UNSAMPLED = 2, /* kernel time not sampled while system CPU > 5 % */
    SPROF_WARN_KERNEL_TICK = 3,  /* kernel time drawn at the kernel's tick, below the asked rate, while system CPU > 10 % */
    SPROF_WARN_COUNT
};

/* The profiled threads' CPU: user + system when recorded (format 1.1),
 * else the runtime's cpu_ns_total; 0 if unknown. */
uint64_t sprof_accounting_cpu_ns(const sprof_trace_accounting *a);
/* The CPU the samples stand for: the runtime's weight_ns_total when
 * recorded, else the sum of the weights of the samples in the file. */
uint64_t sprof_accounting_weight_ns(const sprof_trace_accounting *a);

/* 1 and one line of text in buf ("<trace>: what was measured: why it
 * matters; what to do", no newline) if warning `which` applies to the
 * trace; 0 if not (or the trace has no figures to tell). */
int sprof_accounting_warning(const sprof_trace_accounting *a, enum sprof_accounting_warning which,
                             char *buf, size_t buflen);

/* Print every warning of every trace of p to out as "<tool>: warning: ...",
 * after the note on a JIT's perf map that was not used (p->jit_note).
 * Returns how many were printed. */
size_t sprof_accounting_print(FILE *out, const char *tool, const sprof_profile *p);

#ifdef __cplusplus
}
#endif
#endif
