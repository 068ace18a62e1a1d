/* The flat "top" view: per Ruby method (or per source line with lines=1)
 * self and cumulative weight, plus a split of the time by cost class of
 * the leaf frame. A projection of sprof_profile; see docs/views.md. */
#ifndef SPROF_TOP_H
#define SPROF_TOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/caveats.h"
#include "sprof/profile.h"
#include "sprof/view_methods.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_top_options {
    int weight_cpu;          /* 1: CPU ns, 0: samples */
    int lines;               /* rows per source line instead of per method */
    int all_files;           /* lines: every source file, not only .rb */
    int by_cum;              /* sort by cum instead of self */
    size_t nrows;            /* rows to print, 0 = all */
    const char *focus;       /* ERE on method names (see sprof_methods_select), or NULL */
    const char *ignore;
    int relative;            /* percentages of the focused total instead of the whole profile */
    const char *source_dir;  /* lines: where else to look for source files, or NULL */
    const sprof_caveats *caveats; /* incomplete stacks / guessed names to say, or NULL */
} sprof_top_options;

typedef struct sprof_top_row {
    const char *name;  /* method (lines: the method whose code the line is, first seen) */
    const char *file;  /* method: its file; lines: the line's file */
    uint32_t line;     /* method: def line (0 if unknown); lines: the line */
    uint64_t self;     /* leaf weight */
    uint64_t cum;      /* weight of stacks through it, once per stack */
    uint8_t cost;      /* enum sprof_cost */
    uint16_t name_flags; /* methods view: the method's NAME_APPROX / NAME_GUESSED / FOLDED */
} sprof_top_row;

typedef struct sprof_top {
    sprof_methods methods;
    sprof_top_row *rows;   /* sorted as asked */
    size_t nrows;
    uint64_t total;        /* denominator of percentages */
    uint64_t profile_total;
    uint64_t selected;     /* weight of the stacks focus/ignore kept */
    uint64_t class_self[SPROF_COST_COUNT]; /* selected weight by the leaf's class */
    uint64_t unlocated;    /* lines: selected weight whose leaf has no line in a shown file */
    size_t nstacks;
    int weight_cpu, lines;
} sprof_top;

/* 0, or -1 + err (bad regex, out of memory). */
int sprof_top_build(sprof_top *t, const sprof_profile *p, const sprof_top_options *o, char *err, size_t errlen);
void sprof_top_free(sprof_top *t);

/* Text table (with source text in lines mode) or JSON. 0, or -1 on write error. */
int sprof_top_write_text(const sprof_top *t, const sprof_top_options *o, FILE *out);
int sprof_top_write_json(const sprof_top *t, const sprof_top_options *o, FILE *out);

/* Source text of .rb (or other) files, for `top --lines`: a path is tried
 * as given (relative to the current directory), then under source_dir,
 * then as source_dir/<basename>. Files are read once and cached. */
typedef struct sprof_source_cache sprof_source_cache;
sprof_source_cache *sprof_source_cache_new(const char *source_dir);
/* The text of line `line` (1-based) without its newline, or NULL when the
 * file cannot be read or is shorter. Valid until the cache is freed. */
const char *sprof_source_line(sprof_source_cache *c, const char *file, uint32_t line);
void sprof_source_cache_free(sprof_source_cache *c);

#ifdef __cplusplus
}
#endif
#endif
