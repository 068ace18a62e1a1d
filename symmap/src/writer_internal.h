/* The writer's in-memory state, shared by the writer's source files only. */
#ifndef SPROF_WRITER_INTERNAL_H
#define SPROF_WRITER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap_writer.h"
#include "symmap_format.h"

/* An interned string: every distinct text is stored once; `offset` is its
 * place in the string table, assigned when the file is laid out. */
typedef struct wstr {
    uint32_t offset;
    uint32_t used; /* referenced by something being written */
    size_t len;
    char s[];
} wstr;

typedef struct wstr_set {
    wstr **slots; /* open addressing, power-of-two capacity */
    size_t cap, n;
} wstr_set;

/* Returns the interned copy of s (NULL is interned as ""), or NULL when out of memory. */
wstr *wstr_intern(wstr_set *set, const char *s);
void wstr_set_free(wstr_set *set);

typedef struct wnames {
    wstr *c_name, *ruby_name, *file;
    uint32_t def_line;
    uint8_t kind, cost;
    uint16_t flags;
} wnames;

typedef struct wfunc {
    uint64_t lo, hi;
    wnames n;
    size_t ninlines;
} wfunc;

typedef struct winline {
    size_t func;
    long parent; /* inline index or -1 */
    uint32_t depth;
    uint64_t (*ranges)[2];
    size_t nranges;
    wnames n;
    wstr *call_file;
    uint32_t call_line;
} winline;

typedef struct wline {
    uint64_t addr;
    wstr *file;
    uint32_t line;
    size_t seq; /* order added: at one address the last row added wins (DWARF) */
} wline;

#define WVEC(T) struct { T *v; size_t n, cap; }

struct sprof_symmap_writer {
    wstr_set strings;
    WVEC(wfunc) funcs;
    WVEC(winline) inlines;
    WVEC(wline) lines;
    WVEC(sprof_cfi_row) cfi;
    WVEC(sprof_segment) segments;
    uint8_t *build_id;
    size_t build_id_len;
    wstr *binary_path;
    int is_pie;
    int failed; /* an add ran out of memory: write refuses */
};

/* Grow a WVEC so one more element fits; 0 or -1 (out of memory). */
int wvec_reserve(void **v, size_t *cap, size_t need, size_t elem);
#define WVEC_PUSH_SLOT(vec) \
    (wvec_reserve((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof(*(vec).v)) ? NULL : &(vec).v[(vec).n++])

/* Deterministic ordering of interned strings (by text). */
int wstr_cmp(const wstr *a, const wstr *b);
int wnames_cmp(const wnames *a, const wnames *b);

/* ---- flattening (writer_flatten.c) ---- */

/* A half-open range owned by item `id`. */
typedef struct wrange {
    uint64_t lo, hi;
    size_t id;
} wrange;

/* A flat interval produced by the sweep. */
typedef struct wflat {
    uint64_t lo, hi;
    size_t id;
} wflat;

/* Returns < 0 if item a beats item b where both cover an address. Must be a
 * total order for the output to be deterministic. */
typedef int (*wbetter_fn)(size_t a, size_t b, const void *ctx);

/* Split the union of `ranges` into disjoint intervals, each owned by the best
 * item covering it; adjacent intervals with the same owner are merged.
 * `ranges` is sorted in place. Returns 0, -1 on out of memory. */
int wflatten(wrange *ranges, size_t n, wbetter_fn better, const void *ctx,
             wflat **out, size_t *nout);

/* ---- building and laying out (writer_tables.c, writer_layout.c) ---- */

/* Everything computed before layout (writer_tables.c). */
typedef struct wtables {
    size_t *order;  /* sorted function position -> writer index */
    symmap_func *funcs;
    wflat *franges;
    size_t nfranges;
    symmap_node *nodes;
    winline **node_src; /* node -> source inline (for names) */
    size_t nnodes;
    WVEC(symmap_interval) intervals;
    wline *lines;
    size_t nlines;
    sprof_cfi_row *cfi;
    size_t ncfi;
    sprof_segment *segs;
    size_t nsegs;
    wstr **strs;
    size_t nstrs;
    uint64_t strings_size;
} wtables;
int wtables_build(sprof_symmap_writer *w, wtables *t, char *err, size_t errlen);
void wtables_free(wtables *t);

/* snprintf into err (if any). */
void wset_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* memcpy that accepts a NULL source when there is nothing to copy. */
void wcopy_n(void *dst, const void *src, size_t n);

#endif
