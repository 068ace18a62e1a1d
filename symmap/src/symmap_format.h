/* On-disk layout of a symmap, version 1 (spec: docs/symmap-format.md).
 * Shared by the writer and the reader; nothing outside symmap/src uses it.
 * All integers little-endian; every table starts on an 8-byte boundary. */
#ifndef SPROF_SYMMAP_FORMAT_H
#define SPROF_SYMMAP_FORMAT_H

#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "symmap: the on-disk format is little-endian; this host is not"
#endif

#define SYMMAP_MAGIC "SPROFSYM"
#define SYMMAP_VERSION 1u
#define SYMMAP_NONE 0xFFFFFFFFu /* "no node" in a parent field */

/* Section indexes in the header's section table (v1 has exactly these,
 * later versions may append more; readers ignore sections they don't know). */
enum symmap_section {
    SYMMAP_SEC_STRINGS = 0,   /* NUL-terminated strings, entry size 1 */
    SYMMAP_SEC_FUNCTIONS = 1, /* symmap_func, sorted by (lo, hi) */
    SYMMAP_SEC_FRANGES = 2,   /* symmap_frange: address -> winning function, sorted, disjoint */
    SYMMAP_SEC_NODES = 3,     /* symmap_node: inline tree nodes, parent before child */
    SYMMAP_SEC_INTERVALS = 4, /* symmap_interval: address -> innermost node, per function */
    SYMMAP_SEC_LINES = 5,     /* symmap_line, sorted by addr, strictly increasing */
    SYMMAP_SEC_CFI = 6,       /* symmap_cfi, sorted, disjoint */
    SYMMAP_SEC_SEGMENTS = 7,  /* symmap_segment, sorted by vaddr */
    SYMMAP_SEC_BUILD_ID = 8,  /* raw bytes, entry size 1 */
    SYMMAP_SEC_COUNT_V1 = 9
};

typedef struct symmap_section_entry {
    uint64_t offset;     /* from the start of the file, multiple of 8 */
    uint64_t count;      /* number of entries */
    uint32_t entry_size; /* bytes per entry (>= the v1 size; stride for readers) */
    uint32_t reserved;   /* 0 */
} symmap_section_entry;

#define SYMMAP_FLAG_PIE 1u

typedef struct symmap_header {
    char magic[8];        /* "SPROFSYM" */
    uint32_t version;     /* 1 */
    uint32_t header_size; /* bytes: this struct + nsections * 24, multiple of 8 */
    uint32_t nsections;   /* >= SYMMAP_SEC_COUNT_V1 */
    uint32_t flags;       /* SYMMAP_FLAG_PIE */
    uint32_t binary_path; /* string ref */
    uint32_t reserved;    /* 0 */
    /* followed by symmap_section_entry[nsections] */
} symmap_header;

typedef struct symmap_func {
    uint64_t lo, hi;          /* [lo, hi) link-time addresses */
    uint32_t c_name;          /* string refs */
    uint32_t ruby_name;
    uint32_t file;
    uint32_t def_line;
    uint8_t kind, cost;
    uint16_t flags;
    uint32_t interval_first;  /* this function's slice of the interval table */
    uint32_t interval_count;
    uint32_t line_first;      /* this function's slice of the line table: the row */
                              /* covering lo, then the rows up to hi */
    uint32_t line_count;
    uint32_t reserved;
} symmap_func;

typedef struct symmap_frange {
    uint64_t lo, hi;
    uint32_t func; /* index into the function table */
    uint32_t reserved;
} symmap_frange;

typedef struct symmap_node {
    uint32_t c_name, ruby_name, file, def_line;
    uint32_t call_file, call_line; /* where the enclosing frame called this one */
    uint32_t parent;               /* node index < this one, or SYMMAP_NONE */
    uint32_t depth;                /* 1 directly inside the function, parent's + 1 otherwise */
    uint32_t func;                 /* function index */
    uint8_t kind, cost;
    uint16_t flags;
} symmap_node;

typedef struct symmap_interval {
    uint64_t lo, hi;
    uint32_t node; /* innermost inline node covering [lo, hi) */
    uint32_t reserved;
} symmap_interval;

typedef struct symmap_line {
    uint64_t addr;
    uint32_t file; /* string ref */
    uint32_t line; /* 0: no line from here on (end of a sequence) */
} symmap_line;

typedef struct symmap_cfi {
    uint64_t lo, hi;
    uint8_t cfa_reg;   /* 0 undefined, 6 rbp, 7 rsp */
    uint8_t rbp_saved; /* 0 or 1 */
    uint16_t reserved;
    int32_t cfa_offset;
    int32_t ra_offset;
    int32_t rbp_offset;
} symmap_cfi;

typedef struct symmap_segment_disk {
    uint64_t vaddr, memsz, file_offset, filesz;
    uint32_t flags;
    uint32_t reserved;
} symmap_segment_disk;

_Static_assert(sizeof(symmap_header) == 32, "header layout");
_Static_assert(sizeof(symmap_section_entry) == 24, "section entry layout");
_Static_assert(sizeof(symmap_func) == 56, "func layout");
_Static_assert(sizeof(symmap_frange) == 24, "frange layout");
_Static_assert(sizeof(symmap_node) == 40, "node layout");
_Static_assert(sizeof(symmap_interval) == 24, "interval layout");
_Static_assert(sizeof(symmap_line) == 16, "line layout");
_Static_assert(sizeof(symmap_cfi) == 32, "cfi layout");
_Static_assert(sizeof(symmap_segment_disk) == 40, "segment layout");

#endif
