/* The reader's state: pointers into the mapped file, validated once by
 * reader_validate.c; lookups (reader_lookup.c) and iteration
 * (reader_iter.c) rely on that validation and check nothing again. */
#ifndef SPROF_READER_INTERNAL_H
#define SPROF_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap.h"
#include "symmap_format.h"

typedef struct rtable {
    const uint8_t *p; /* first entry */
    size_t n;         /* entries */
    size_t stride;    /* entry size on disk (>= the v1 struct size) */
} rtable;

/* Buckets of 2^shift bytes from base; bucket b's entries start at first[b]
 * (reader_index.c). */
typedef struct addr_index {
    uint32_t *first; /* nbuckets + 1 entries, NULL when the table is empty */
    size_t nbuckets;
    uint64_t base, span;
    unsigned shift;
} addr_index;

int addr_index_build(addr_index *ix, const rtable *t);
void addr_index_free(addr_index *ix);
/* The slice of t that can hold the entry covering addr (possibly empty). */
void addr_index_range(const addr_index *ix, const rtable *t, uint64_t addr, size_t *first, size_t *n);

struct sprof_symmap {
    const uint8_t *base;
    size_t size;
    void *map;      /* mmap'd region (open) or NULL */
    size_t map_size;
    void *owned;    /* aligned private copy (open_mem with misaligned bytes) or NULL */
    char *name;

    const char *strings;
    size_t strings_size;
    rtable funcs, franges, nodes, intervals, lines, cfi, segs;
    const uint8_t *build_id;
    size_t build_id_len;
    uint32_t flags;
    const char *binary_path;
    sprof_segment *segments; /* decoded copy, so the API can hand out pointers */
    addr_index frange_index, cfi_index;
};

#define RT_AT(t, type, i) ((const type *)(const void *)((t).p + (size_t)(i) * (t).stride))
#define R_FUNC(m, i) RT_AT((m)->funcs, symmap_func, i)
#define R_FRANGE(m, i) RT_AT((m)->franges, symmap_frange, i)
#define R_NODE(m, i) RT_AT((m)->nodes, symmap_node, i)
#define R_INTERVAL(m, i) RT_AT((m)->intervals, symmap_interval, i)
#define R_LINE(m, i) RT_AT((m)->lines, symmap_line, i)
#define R_CFI(m, i) RT_AT((m)->cfi, symmap_cfi, i)
#define R_SEG(m, i) RT_AT((m)->segs, symmap_segment_disk, i)

static inline const char *r_str(const struct sprof_symmap *m, uint32_t ref)
{
    return m->strings + ref; /* validated: ref < strings_size, table ends in NUL */
}

/* Check everything; on failure write "<name>: <what>" to err and return -1. */
int symmap_validate(struct sprof_symmap *m, char *err, size_t errlen);

#endif
