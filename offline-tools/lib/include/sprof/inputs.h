/* Command-line inputs shared by every offline tool: a list of files, each
 * recognised by its content (not its name): sprof traces, one symmap,
 * folded-stack text files (and, as parsers are added, other text formats).
 * Loading them all into one sprof_profile is how every view gets its data,
 * so adding a view never means reading traces in a new way. */
#ifndef SPROF_INPUTS_H
#define SPROF_INPUTS_H

#include <stddef.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sprof_input_kind {
    SPROF_INPUT_UNKNOWN = 0,
    SPROF_INPUT_TRACE,   /* starts with SPROF_TRACE_MAGIC */
    SPROF_INPUT_SYMMAP,  /* starts with "SPROFSYM" */
    SPROF_INPUT_FOLDED,  /* text: "frame;frame;... N" lines */
    SPROF_INPUT_PERF_SCRIPT, /* text: `perf script` output */
    SPROF_INPUT_ALLOC,   /* text: Spinel allocation report (folded, sites as module+offset) */
    SPROF_INPUT_ELF,     /* a program or library: never an input, named in the refusal */
};

/* What a file is, from its first bytes. Text files are FOLDED unless a
 * more specific text parser recognises them. -1 + err if unreadable
 * (missing, directory, permission). */
int sprof_input_detect(const char *path, enum sprof_input_kind *kind, char *err, size_t errlen);

typedef struct sprof_inputs {
    const char *symmap;        /* at most one; NULL if none given */
    const char **traces;       /* malloc'd arrays of borrowed argv strings */
    size_t ntraces;
    const char **texts;        /* folded (and other text) files, with their kinds */
    enum sprof_input_kind *text_kinds;
    size_t ntexts;
} sprof_inputs;

/* Sort argv-style paths into kinds. `forced_symmap` (may be NULL) names
 * the symmap explicitly. Two symmaps, an unreadable file, or an ELF
 * binary (err names the sprof-symmap command that makes its symmap): -1 + err. */
int sprof_inputs_classify(sprof_inputs *in, const char *const *paths, size_t npaths,
                          const char *forced_symmap, char *err, size_t errlen);
void sprof_inputs_free(sprof_inputs *in);

/* Add a text input whose kind is given, not detected (e.g. --perf-script,
 * which may be "-" for stdin). 0, or -1 on out of memory. */
int sprof_inputs_add_text(sprof_inputs *in, const char *path, enum sprof_input_kind kind);

/* Load everything into p (summed): traces through the symmap, text files
 * by their parsers. 0, or -1 + err. */
int sprof_inputs_load(const sprof_inputs *in, sprof_profile *p, const sprof_load_options *opt,
                      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
