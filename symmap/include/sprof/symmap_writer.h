/* sprof symmap writer: collect functions, inline trees, line rows, CFI rows
 * and layout in memory, then write one app.symmap. The writer sorts,
 * de-duplicates and flattens everything itself, so the bytes depend only on
 * what was added, not on the order it was added in (one exception: several
 * line rows at one address, see add_line): same inputs, same bytes.
 * Depends on libc only. Format: docs/symmap-format.md. A writer is not
 * thread-safe: use one per thread. */
#ifndef SPROF_SYMMAP_WRITER_H
#define SPROF_SYMMAP_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_symmap_writer sprof_symmap_writer;

sprof_symmap_writer *sprof_symmap_writer_new(void);
void sprof_symmap_writer_free(sprof_symmap_writer *w);

void sprof_symmap_writer_set_build_id(sprof_symmap_writer *w, const uint8_t *id, size_t len);
void sprof_symmap_writer_set_binary_path(sprof_symmap_writer *w, const char *path);
void sprof_symmap_writer_set_pie(sprof_symmap_writer *w, int is_pie);
void sprof_symmap_writer_add_segment(sprof_symmap_writer *w, const sprof_segment *seg);

/* Naming of a function or inlined copy. Strings are copied. */
typedef struct sprof_symmap_names {
    const char *c_name;    /* required */
    const char *ruby_name; /* NULL or "" -> the C name */
    const char *file;      /* file of def_line, may be NULL */
    uint32_t def_line;
    uint8_t kind;   /* enum sprof_kind */
    uint8_t cost;   /* enum sprof_cost */
    uint16_t flags; /* enum sprof_frame_flags (INLINED is set by the writer for inline records) */
} sprof_symmap_names;

/* A function with a symbol: [lo, hi). Returns its index (>= 0) or -1 on
 * allocation failure. Overlapping functions: the smaller one wins lookups. */
long sprof_symmap_writer_add_function(sprof_symmap_writer *w, uint64_t lo, uint64_t hi,
                                      const sprof_symmap_names *names);

/* An inlined copy (DW_TAG_inlined_subroutine) inside function `func_index`,
 * nested under `parent` (an index returned by this call, or -1 for directly
 * inside the function). It covers `nranges` address ranges. call_file /
 * call_line: where the CALLER called it (DW_AT_call_file/line), which
 * becomes the line of the caller's frame. Returns the inline's index or -1. */
long sprof_symmap_writer_add_inline(sprof_symmap_writer *w, long func_index, long parent,
                                    const uint64_t (*ranges)[2], size_t nranges,
                                    const sprof_symmap_names *names,
                                    const char *call_file, uint32_t call_line);

/* One line-table row: from addr on (until the next row), code is file:line.
 * Add rows in line-table order. The file keeps ONE row per address: a row
 * with a line beats an end-of-sequence marker, and among several rows with
 * lines the one added LAST wins, as in DWARF, where only the last row at an
 * address describes the instruction (what addr2line and gdb report). This is
 * the only case where the order of adds changes the output. */
void sprof_symmap_writer_add_line(sprof_symmap_writer *w, uint64_t addr, const char *file,
                                  uint32_t line);
/* Marks the end of a line sequence (addresses from here on have no line). */
void sprof_symmap_writer_end_line_sequence(sprof_symmap_writer *w, uint64_t addr);

/* CFI rows as compiled by sprof_cfi_compile() (sprof/cfi.h). */
void sprof_symmap_writer_add_cfi(sprof_symmap_writer *w, const sprof_cfi_row *rows, size_t n);

/* Write the file (atomically: temp file + rename). Returns 0, or -1 with
 * one line in err. */
int sprof_symmap_writer_write(sprof_symmap_writer *w, const char *path, char *err, size_t errlen);
/* Same, to a malloc'd buffer (tests, fuzz seeds). Caller frees *out. */
int sprof_symmap_writer_to_memory(sprof_symmap_writer *w, uint8_t **out, size_t *size,
                                  char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
