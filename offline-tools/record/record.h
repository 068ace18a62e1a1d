/* sprof-record's pieces: where its companions are, running the command,
 * writing what -o asks for. One job per file; main.c ties them together. */
#ifndef SPROF_RECORD_H
#define SPROF_RECORD_H

#include <stddef.h>
#include <sys/types.h>

#include "sprof/profile.h"

#define RECORD_TOOL "sprof-record"

/* ---- locate.c ---- */

/* The sampler to preload: `override` (--preload) if given, else
 * $SPROF_PRELOAD, else <directory of this executable>/../lib/libsprof.so.
 * A malloc'd absolute path of an existing file, or NULL after printing
 * "sprof-record: ..." (never a bare name: the dynamic loader would search
 * its own path for it). */
char *record_find_preload(const char *override);

/* A companion tool (sprof-symmap) beside this executable, else NULL (the
 * caller then runs it by name from PATH). malloc'd. */
char *record_sibling_tool(const char *name);

/* ---- process_tree.c ---- */

/* Send sig to root and every process descending from it. */
void record_signal_tree(pid_t root, int sig);

/* ---- run_command.c ---- */

typedef struct record_env {
    const char *preload;   /* libsprof.so, added to LD_PRELOAD; NULL: the program links the runtime */
    const char *trace;     /* SPROF_OUT */
    const char *hz;        /* SPROF_HZ, or NULL */
    const char *timer;     /* SPROF_TIMER, or NULL */
    int wall;              /* SPROF_MODE=wall */
    int quiet;             /* SPROF_QUIET=1 */
} record_env;

/* Run argv[0] (searched in PATH) with the sampler's environment, forward
 * SIGINT/SIGTERM sent to sprof-record to its process tree (not those the
 * terminal already sent to the whole foreground group), stop the tree
 * after duration_s seconds if > 0 (SIGINT; SIGTERM 2 s later; SIGKILL 3 s
 * after that). Returns the status
 * to exit with: the command's exit code, 128+signal if a signal ended it,
 * 127 (not found) or 126 (not executable) after printing why if it could
 * not start; *started is 0 in those cases. -1 on an error of our own
 * (message printed). */
int record_run_command(char *const *argv, const record_env *env, double duration_s, int *started);

/* Run a helper tool to completion without the sampler's environment:
 * its exit status (0 = success), or -1 if it could not be started. */
int record_run_helper(char *const *argv);

/* ---- trace_files.c ---- */

/* A fresh private directory under $TMPDIR (or /tmp) for the trace,
 * absolute; NULL after printing. malloc'd. */
char *record_make_workdir(void);
/* Remove it and everything in it. */
void record_remove_workdir(const char *dir);
/* The executable a trace names (its INFO record), malloc'd; NULL if the
 * trace is unreadable or names none. */
char *record_trace_exe(const char *trace);
/* Move a file (rename, or copy across file systems). 0, or -1 after printing. */
int record_keep_file(const char *from, const char *to);

/* ---- write_outputs.c ---- */

typedef enum record_format {
    RECORD_SVG,
    RECORD_FOLDED,
    RECORD_PPROF,
    RECORD_SPEEDSCOPE,
    RECORD_RAW,
} record_format;

/* The format an output path asks for by its extension: 0 + *fmt, or -1
 * when the extension is none of .svg .folded .pb.gz .speedscope.json
 * .bin .trace. */
int record_format_of(const char *path, record_format *fmt);
const char *record_format_name(record_format fmt);

/* Write p to path in fmt (not RECORD_RAW), atomically. weight_cpu chooses
 * CPU time or samples; title names the graph. 0, or -1 after printing. */
int record_write_view(const sprof_profile *p, record_format fmt, const char *path, int weight_cpu,
                      const char *title);

/* Print the top `n` methods by self time on stderr (as sprof-top does). */
void record_print_top(const sprof_profile *p, int weight_cpu, size_t n);

#endif
