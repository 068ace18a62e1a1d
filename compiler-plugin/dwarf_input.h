/* What sprof-symmap needs from DWARF (libdwarf 20210528 API, DWARF 4 and 5):
 * subprograms with code (ranges, name, declared file:line), the inline
 * trees under them (DW_TAG_inlined_subroutine: origin name, ranges, call
 * file:line) and the line programs. Strings are interned in `pool`. */
#ifndef SPROF_DWARF_INPUT_H
#define SPROF_DWARF_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "strpool.h"

typedef struct sprof_range {
    uint64_t lo, hi;
} sprof_range;

typedef struct sprof_dw_subprogram {
    const char *name;      /* C name (DW_AT_name, through abstract_origin/specification) */
    const char *decl_file; /* may be NULL */
    uint32_t decl_line;
    size_t first_range, nranges; /* into sprof_dwarf_info.ranges */
} sprof_dw_subprogram;

typedef struct sprof_dw_inline {
    size_t subprogram;     /* index of the enclosing subprogram */
    long parent;           /* enclosing inline (index, always smaller), or -1 */
    const char *name;      /* C name of the inlined function (abstract origin) */
    const char *decl_file;
    uint32_t decl_line;
    const char *call_file; /* where the caller called it; may be NULL */
    uint32_t call_line;
    size_t first_range, nranges;
} sprof_dw_inline;

typedef struct sprof_dw_line {
    uint64_t addr;
    const char *file; /* NULL for an end-of-sequence row */
    uint32_t line;
} sprof_dw_line;

typedef struct sprof_dwarf_info {
    sprof_dw_subprogram *subs;
    size_t nsubs, subs_cap;
    sprof_dw_inline *inlines; /* pre-order: parents before children */
    size_t ninlines, inlines_cap;
    sprof_range *ranges;
    size_t nranges, ranges_cap;
    sprof_dw_line *lines; /* per sequence, in line-program order */
    size_t nlines, lines_cap;
    unsigned max_version;
} sprof_dwarf_info;

/* Returns 1 when DWARF was read, 0 when the file has none, -1 on a DWARF
 * error (err says what; `out` is then emptied: no partial DWARF). */
int sprof_dwarf_read(const char *path, sprof_strpool *pool, sprof_dwarf_info *out, char *err,
                     size_t errlen);
void sprof_dwarf_free(sprof_dwarf_info *info);

#endif
