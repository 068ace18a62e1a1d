/* `perf script` text -> the joined profile (docs/perf-script.md).
 *
 * Reads the text `perf script` prints, with call chains (`perf record -g`)
 * or without (one line per sample), and adds one stack per sample. Frames
 * of the profiled binary are resolved through the symmap (when one is
 * given) by perf's `sym+off`, so inlined Ruby methods, blocks and `.rb`
 * lines come out as they do from a sprof trace; every other frame keeps
 * perf's symbol name, tidied exactly as FlameGraph's stackcollapse-perf.pl
 * does, so that without a symmap the folded output is stackcollapse's.
 *
 * The parser is strict about structure and lenient about what it does not
 * use: a line it cannot place is a warning naming file:line (an error with
 * `strict`); lines longer than SPROF_PERF_MAX_LINE are skipped the same way. */
#ifndef SPROF_PERF_SCRIPT_H
#define SPROF_PERF_SCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPROF_PERF_MAX_LINE 65536   /* longer lines are malformed */
#define SPROF_PERF_MAX_FRAMES 4096  /* deeper chains are cut at the root end (warning) */

enum sprof_perf_kernel {
    SPROF_PERF_KERNEL_DROP = 0,     /* default: user-space stacks, as a sprof trace sees them */
    SPROF_PERF_KERNEL_ANNOTATE = 1, /* --kernel: keep kernel frames, suffixed "_[k]" */
    SPROF_PERF_KERNEL_PLAIN = 2,    /* --kernel=plain: keep them as perf names them */
};

/* Options shared by the text parsers (perf script, Spinel allocation reports). */
typedef struct sprof_perf_options {
    int pid;          /* root frame "comm-pid" instead of "comm" */
    int tid;          /* root frame "comm-pid/tid" (and stacks keep the tid) */
    int kernel;       /* enum sprof_perf_kernel */
    int addrs;        /* unknown frames as "[module <addr>]" */
    int strict;       /* a malformed line is an error, not a warning */
    int no_inline;    /* keep only real functions when resolving through the symmap */
    int jit;          /* suffix frames of perf's JIT maps (/tmp/perf-PID.map) "_[j]" (stackcollapse-perf.pl --jit) */
    FILE *warn;       /* where warnings go; NULL = stderr */
    const uint32_t *tids; /* keep only samples of these thread ids (NULL: all) */
    size_t ntids;
} sprof_perf_options;

/* Add the samples of a `perf script` text file ("-" = stdin), resolving the
 * profiled binary's frames through `symmap_path` (may be NULL). 0, or -1
 * and one line "<file>[:line]: <what is wrong>" in err. */
int sprof_profile_add_perf_script(sprof_profile *p, const char *path, const char *symmap_path,
                                  const sprof_perf_options *opt, char *err, size_t errlen);

/* Same over an open stream; `name` names it in messages. The symmap may be
 * NULL (names as perf prints them). Used by the fuzz harness and tests. */
int sprof_profile_add_perf_script_stream(sprof_profile *p, FILE *in, const char *name,
                                         const sprof_symmap *symmap,
                                         const sprof_perf_options *opt, char *err, size_t errlen);

/* 1 if the text looks like `perf script` output: the first line that is not
 * a comment or blank is a sample header ("comm pid[/tid] [cpu] time: ..."). */
int sprof_perf_script_detect(const char *text, size_t len);

#ifdef __cplusplus
}
#endif
#endif
