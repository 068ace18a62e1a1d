/* The input options every view tool shares (sprof-fold, sprof-callgraph,
 * sprof-top, sprof-export, sprof-flamegraph, sprof-diff): which symmap,
 * which threads and time window, inline frames or not, build-id mismatch
 * allowed or not, the weight (default auto: CPU time when the inputs
 * carry it; docs/views.md);
 * then loading INPUT... (recognised by content, sprof/inputs.h) into one
 * profile.
 *
 * Use: put SPROF_CLI_LOAD_LONGOPTS in the getopt_long table, pass every
 * option value in [SPROF_OPT_LOAD_FIRST, SPROF_OPT_LOAD_LAST] to
 * sprof_cli_load_option (sprof_cli_other_option does that in the getopt
 * loop's `default:`), then call sprof_cli_load_profile or
 * sprof_cli_load_operands (or, for a tool that reports on the load
 * itself, sprof_cli_load_check and sprof_cli_load_inputs). */
#ifndef SPROF_CLI_LOAD_H
#define SPROF_CLI_LOAD_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SPROF_OPT_LOAD_FIRST = 0x1000,
    SPROF_OPT_SYMMAP = SPROF_OPT_LOAD_FIRST,
    SPROF_OPT_THREADS,
    SPROF_OPT_NO_INLINE,
    SPROF_OPT_FROM,
    SPROF_OPT_TO,
    SPROF_OPT_TID,
    SPROF_OPT_FORCE,
    SPROF_OPT_WEIGHT,
    SPROF_OPT_LOAD_LAST = SPROF_OPT_WEIGHT,
};

#define SPROF_CLI_LOAD_LONGOPTS                                    \
    { "symmap", required_argument, NULL, SPROF_OPT_SYMMAP },       \
    { "threads", no_argument, NULL, SPROF_OPT_THREADS },           \
    { "no-inline", no_argument, NULL, SPROF_OPT_NO_INLINE },       \
    { "from", required_argument, NULL, SPROF_OPT_FROM },           \
    { "to", required_argument, NULL, SPROF_OPT_TO },               \
    { "tid", required_argument, NULL, SPROF_OPT_TID },             \
    { "force", no_argument, NULL, SPROF_OPT_FORCE },               \
    { "weight", required_argument, NULL, SPROF_OPT_WEIGHT }

/* Usage lines for these options. */
extern const char sprof_cli_load_usage[];

typedef struct sprof_cli_load {
    sprof_load_options load;
    const char *symmap;
    const char *weight; /* --weight: auto (NULL), samples or cpu; checked when given */
    uint32_t *tids;
    size_t ntids;
    /* Text inputs named by an option instead of recognised by content
     * (sprof-fold --perf-script / --alloc-report; "-" = stdin), or NULL. */
    const char *perf_script;
    const char *alloc_report;
    /* sprof-record -q: no caveats (rate, cover, guessed names) on stderr;
     * errors and a trace cut short are still said */
    int quiet;
} sprof_cli_load;

/* Apply one option. 0, or -1 after printing "<tool>: <what is wrong>". */
int sprof_cli_load_option(sprof_cli_load *l, int opt, const char *arg, const char *tool);
/* Load paths into p (initialised by the caller). Prints a warning when
 * traces come without a symmap. 0, or -1 after printing "<tool>: <error>". */
int sprof_cli_load_profile(sprof_cli_load *l, const char *tool, char *const *paths, size_t npaths,
                           sprof_profile *p);
void sprof_cli_load_free(sprof_cli_load *l);

/* The steps of sprof_cli_load_profile, for a tool that reports on the
 * load its own way (sprof-fold: its stats line covers cut traces). */

/* Options that are wrong only together (--to not after --from); hands the
 * thread list to l->load. 0, or -1 after printing "<tool>: <what>". */
int sprof_cli_load_check(sprof_cli_load *l, const char *tool);

/* What sprof_cli_load_inputs found among the inputs. */
typedef struct sprof_cli_loaded {
    int no_symmap;           /* traces came without a symmap */
    const char *first_trace; /* paths[] string (outlives the call); NULL if no trace */
    size_t ntraces;
} sprof_cli_loaded;

/* Classify paths (+ l->perf_script, l->alloc_report), then load them into
 * p with l->load. Prints nothing: 0, or -1 + err (err may stay empty). */
int sprof_cli_load_inputs(sprof_cli_load *l, char *const *paths, size_t npaths, sprof_profile *p,
                          sprof_cli_loaded *found, char *err, size_t errlen);

/* The warning for traces given without a symmap (print it only once
 * nothing is refused: a refusal is one line). */
void sprof_cli_warn_no_symmap(const char *tool);

/* ---- pieces of every view tool's command line ---- */

/* The `default:` of a tool's getopt loop: a load option is applied, any
 * other value (an unknown option) prints usage to stderr. 0, or -1 after
 * printing. */
int sprof_cli_other_option(sprof_cli_load *l, int opt, const char *arg, const char *tool,
                           void (*usage)(FILE *));

/* sprof_cli_load_profile for the INPUT... operands after the options, at
 * least one (none: usage to stderr, -1). 0, or -1 after printing. */
int sprof_cli_load_operands(sprof_cli_load *l, const char *tool, char *const *paths, size_t npaths,
                            void (*usage)(FILE *), sprof_profile *p);

/* After the getopt loop: at least one INPUT operand (none: usage to
 * stderr) and the options that are wrong only together
 * (sprof_cli_load_check). 0, or -1 after printing: a usage error (exit
 * SPROF_EXIT_USAGE). */
int sprof_cli_check_usage(sprof_cli_load *l, const char *tool, size_t noperands, void (*usage)(FILE *));

/* An unsigned count option (digits only, no sign): 0 + *out, or -1 after
 * printing "<tool>: <opt> wants <what>, not "<arg>"". */
int sprof_cli_parse_count(const char *tool, const char *opt, const char *what, const char *arg,
                          size_t *out);

/* --weight=auto|samples|cpu (NULL = auto) against the loaded profile
 * (sprof_parse_weight): 0 + *weight_cpu, or -1 after printing
 * "<tool>: --weight must be ...". */
int sprof_cli_parse_weight(const char *tool, const char *weight, const sprof_profile *p, int *weight_cpu);

#ifdef __cplusplus
}
#endif
#endif
