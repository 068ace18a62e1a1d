/* Offline unwinder over the sparse stack memory a sample recorded: the
 * return-address candidates near sp and the frame-pointer chain records.
 * Pure function of the sample and a code/CFI oracle, so it is unit-tested
 * with constructed samples. Internal to offline-tools/lib. */
#ifndef SPROF_UNWIND_H
#define SPROF_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap.h"
#include "sprof/trace_reader.h"

typedef struct sprof_unwind_env {
    void *ctx;
    /* 1 if pc lies in executable code of a known mapping */
    int (*is_code)(void *ctx, uint64_t pc);
    /* CFI row for the (already adjusted: pc - 1 for return addresses)
     * runtime address; 0 ok, -1 no CFI there */
    int (*cfi)(void *ctx, uint64_t pc, sprof_cfi_row *row);
    /* optional: 1 if pc is the first byte of a signal-return trampoline
     * (x86-64 Linux: `mov $15,%rax; syscall`, glibc's __restore_rt): a
     * handler "returns" there, and the interrupted registers are in the
     * signal frame at the handler's CFA */
    int (*sigreturn_at)(void *ctx, uint64_t pc);
} sprof_unwind_env;

/* How the unwind went, for tests and statistics. */
typedef struct sprof_unwind_info {
    uint32_t cfi_steps;    /* frames recovered with CFI */
    uint32_t chain_frames; /* frames taken from the recorded frame-pointer chain */
    int used_fallback;     /* CFI was missing or a needed word unknown somewhere */
    int missing_word;      /* a CFI step needed a stack word that was not recorded */
    uint32_t gap_at;       /* then: index in pcs where the recorded chain took over (frames
                            * between pcs[gap_at - 1] and pcs[gap_at] may be missing) */
    uint32_t signal_frames; /* signal frames stepped through */
} sprof_unwind_info;

/* Writes pcs[0] = the interrupted pc, then return addresses outward. The
 * interrupted pc of a signal frame is an exact pc, not a return address: it
 * is written + 1, so that the callers' "return address - 1" lookup lands on
 * it. Returns the number written (>= 1, <= max). */
size_t sprof_unwind(const sprof_sample_view *s, const sprof_unwind_env *env, uint64_t *pcs,
                    size_t max, sprof_unwind_info *info);

/* The same, and exact[i] (when exact is not NULL; max entries) says how
 * pcs[i] was found: 1 by a CFI step from frame i - 1 or a signal frame (the
 * frame inside is then the one that called it, or tail-called into its
 * callee), 0 from the recorded frame-pointer chain (frames between
 * i - 1 and i may be missing: a frameless function's caller is skipped).
 * exact[0] is 1. */
size_t sprof_unwind_steps(const sprof_sample_view *s, const sprof_unwind_env *env, uint64_t *pcs,
                          uint8_t *exact, size_t max, sprof_unwind_info *info);

#endif
