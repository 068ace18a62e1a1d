/* Pieces shared by the text parsers of perf_script.c and alloc_report.c:
 * a bounded line reader, malformed-line diagnostics, and resolution of
 * "symbol+offset" / module-relative addresses through the symmap. */
#ifndef SPROF_PERF_SCRIPT_INTERNAL_H
#define SPROF_PERF_SCRIPT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/perf_script.h"
#include "sprof/profile.h"
#include "sprof/symmap.h"

/* ---- bounded line reader ------------------------------------------------ */
typedef struct sprof_line_reader {
    FILE *in;
    char *buf;            /* SPROF_PERF_MAX_LINE + 1 bytes */
    unsigned long lineno; /* of the line last returned */
    int too_long;         /* the line last returned was cut (the rest was skipped) */
} sprof_line_reader;

int sprof_line_reader_init(sprof_line_reader *rd, FILE *in);
void sprof_line_reader_free(sprof_line_reader *rd);
/* 1: *line (NUL-terminated, no '\n' / '\r', NUL bytes replaced by spaces)
 * and *len set; 0: end of input; -1: read error. */
int sprof_line_next(sprof_line_reader *rd, char **line, size_t *len);

/* ---- diagnostics --------------------------------------------------------- */
typedef struct sprof_text_diag {
    const char *name;
    FILE *warn;
    int strict;
    unsigned long nmalformed;
    char *err;
    size_t errlen;
} sprof_text_diag;

#define SPROF_TEXT_MAX_WARNINGS 20
/* A malformed line: with strict, fills err ("name:line: what") and returns
 * -1; otherwise prints a warning (the first few) and returns 0. */
int sprof_text_malformed(sprof_text_diag *d, unsigned long lineno, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Summary of warnings not shown. */
void sprof_text_diag_finish(sprof_text_diag *d);

/* The next line to parse: a line longer than SPROF_PERF_MAX_LINE is
 * reported through d as malformed and skipped. 1: *line and *len set;
 * 0: end of input; -1: d->err set (read error, or strict refusal). */
int sprof_text_next_line(sprof_line_reader *rd, sprof_text_diag *d, char **line, size_t *len);

/* ---- symmap resolution ---------------------------------------------------- */
typedef struct sprof_symres sprof_symres;

/* Index the symmap's functions by C name. NULL on allocation failure. */
sprof_symres *sprof_symres_new(const sprof_symmap *m);
void sprof_symres_free(sprof_symres *r);

/* 1 if `dso` (as perf or backtrace_symbols prints it) names the symmap's
 * binary: same path, or same base name. */
int sprof_symres_is_binary(const sprof_symres *r, const char *dso, size_t dsolen);

/* Link-time address of `name` + off (name is not NUL-terminated). 0 found. */
int sprof_symres_symbol_addr(const sprof_symres *r, const char *name, size_t namelen, uint64_t off,
                             uint64_t *link);

/* [lo, hi) of the function called `name` (the first if several). 0 found. */
int sprof_symres_symbol_range(const sprof_symres *r, const char *name, size_t namelen,
                              uint64_t *lo, uint64_t *hi);

/* 1 if a function of the symmap covers link-time address `addr`. */
int sprof_symres_covers(const sprof_symres *r, uint64_t addr);

/* Intern the frames at link-time `addr` (innermost first) into out[]; at
 * most max. A return address is looked up at addr - 1 (the call, not the
 * GC-root cleanup after it). `module` names the binary. Returns how many
 * (0: no function there). Frames are built as the trace symbolizer builds
 * them (symbolize.c), so both sources merge. */
size_t sprof_symres_frames(const sprof_symres *r, sprof_profile *p, uint64_t addr, int is_return,
                           int no_inline, const char *module, uint32_t *out, size_t max);

/* The function called `name` as one frame (Ruby name, kind, cost; no inline
 * chain): for symbols printed without an offset. 1 + *out, or 0. */
int sprof_symres_function_frame(const sprof_symres *r, sprof_profile *p, const char *name,
                                size_t namelen, const char *module, uint32_t *out);

/* ---- a text parser's common state ------------------------------------------ */
typedef struct sprof_text_parser {
    sprof_profile *p;
    const sprof_perf_options *opt; /* the caller's, or all defaults: never NULL */
    const sprof_symmap *m;         /* NULL without symmap */
    sprof_symres *res;             /* m's functions by name; NULL without symmap */
    sprof_text_diag diag;
} sprof_text_parser;

/* 0, or -1 + "name: out of memory" in err. */
int sprof_text_parser_init(sprof_text_parser *t, sprof_profile *p, const char *name,
                           const sprof_symmap *m, const sprof_perf_options *opt, char *err,
                           size_t errlen);
void sprof_text_parser_free(sprof_text_parser *t);

/* ---- the input file -------------------------------------------------------- */
/* A format's stream parser (sprof_profile_add_perf_script_stream, ...). */
typedef int (*sprof_text_stream_parser)(sprof_profile *p, FILE *in, const char *name,
                                        const sprof_symmap *symmap, const sprof_perf_options *opt,
                                        char *err, size_t errlen);

/* Open `path` ("-" = stdin, named "<stdin>" in messages) and `symmap_path`
 * (may be NULL), then run `parse` over them. 0, or -1 + err. */
int sprof_text_input_file(sprof_profile *p, const char *path, const char *symmap_path,
                          const sprof_perf_options *opt, sprof_text_stream_parser parse, char *err,
                          size_t errlen);

/* ---- small helpers -------------------------------------------------------- */
/* Hex digits (no 0x) -> u64; -1 if empty, more than 16 digits or not hex. */
int sprof_text_hex(const char *s, size_t n, uint64_t *v);

/* Intern a frame named `name` (copied; may be non-terminated) with no
 * symmap information. */
uint32_t sprof_text_plain_frame(sprof_profile *p, const char *name, size_t namelen,
                                const char *module, uint16_t flags);

#endif
