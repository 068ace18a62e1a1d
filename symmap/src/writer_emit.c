/* The writer's output half: sort, flatten, de-duplicate, lay out the v1
 * file (docs/symmap-format.md) and write it atomically. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfi_internal.h"
#include "symmap_format.h"
#include "writer_internal.h"

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* memcpy that accepts a NULL source when there is nothing to copy. */
static void copy_n(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}

int wnames_cmp(const wnames *a, const wnames *b)
{
    int c;
    if ((c = wstr_cmp(a->c_name, b->c_name)) != 0)
        return c;
    if ((c = wstr_cmp(a->ruby_name, b->ruby_name)) != 0)
        return c;
    if ((c = wstr_cmp(a->file, b->file)) != 0)
        return c;
    CMP(a->def_line, b->def_line);
    CMP(a->kind, b->kind);
    CMP(a->cost, b->cost);
    CMP(a->flags, b->flags);
    return 0;
}

/* ---- functions ---- */

/* Sort key for functions: the function and its index in the writer. */
typedef struct func_ref {
    const wfunc *f;
    size_t index;
} func_ref;

static int cmp_func_ref(const void *pa, const void *pb)
{
    const wfunc *a = ((const func_ref *)pa)->f, *b = ((const func_ref *)pb)->f;
    CMP(a->lo, b->lo);
    CMP(a->hi, b->hi);
    int c = wnames_cmp(&a->n, &b->n);
    if (c)
        return c;
    CMP(a->ninlines, b->ninlines);
    return 0;
}

typedef struct emit_ctx {
    const sprof_symmap_writer *w;
    const size_t *order; /* sorted position -> writer function index */
} emit_ctx;

/* Where functions overlap, the smaller wins; then one with debug info; then
 * one with inline records; then the first in sorted order. */
static int better_func(size_t a, size_t b, const void *vctx)
{
    const emit_ctx *ctx = vctx;
    const wfunc *fa = &ctx->w->funcs.v[ctx->order[a]], *fb = &ctx->w->funcs.v[ctx->order[b]];
    CMP(fa->hi - fa->lo, fb->hi - fb->lo);
    int nda = !!(fa->n.flags & SPROF_FRAME_NO_DEBUG), ndb = !!(fb->n.flags & SPROF_FRAME_NO_DEBUG);
    CMP(nda, ndb);
    CMP(fb->ninlines, fa->ninlines);
    CMP(a, b);
    return 0;
}

/* ---- inline nodes ---- */

static uint64_t inline_span(const winline *in)
{
    uint64_t s = 0;
    for (size_t i = 0; i < in->nranges; i++)
        s += in->ranges[i][1] - in->ranges[i][0];
    return s;
}

/* Deeper wins (innermost); ties (malformed, overlapping siblings) broken by content. */
static int better_inline(size_t a, size_t b, const void *vctx)
{
    const emit_ctx *ctx = vctx;
    const winline *ia = &ctx->w->inlines.v[a], *ib = &ctx->w->inlines.v[b];
    CMP(ib->depth, ia->depth);
    CMP(inline_span(ia), inline_span(ib));
    int c = wnames_cmp(&ia->n, &ib->n);
    if (c)
        return c;
    if ((c = wstr_cmp(ia->call_file, ib->call_file)) != 0)
        return c;
    CMP(ia->call_line, ib->call_line);
    CMP(a, b);
    return 0;
}

/* ---- lines ---- */

static int cmp_line(const void *pa, const void *pb)
{
    const wline *a = pa, *b = pb;
    CMP(a->addr, b->addr);
    /* At one address a row with a line beats an end-of-sequence marker, and
     * among rows with lines the one added last wins: in a DWARF sequence only
     * the last row at an address describes the instruction (addr2line and
     * gdb agree). This is the one place where the order of adds matters. */
    CMP(a->line == 0, b->line == 0);
    CMP(b->seq, a->seq);
    return 0;
}

static int cmp_segment(const void *pa, const void *pb)
{
    const sprof_segment *a = pa, *b = pb;
    CMP(a->vaddr, b->vaddr);
    CMP(a->memsz, b->memsz);
    CMP(a->file_offset, b->file_offset);
    CMP(a->filesz, b->filesz);
    CMP(a->flags, b->flags);
    return 0;
}

static int cmp_wstr_ptr(const void *pa, const void *pb)
{
    return wstr_cmp(*(wstr *const *)pa, *(wstr *const *)pb);
}

/* Everything computed before layout. */
typedef struct tables {
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
} tables;

static void tables_free(tables *t)
{
    free(t->order);
    free(t->funcs);
    free(t->franges);
    free(t->nodes);
    free(t->node_src);
    free(t->intervals.v);
    free(t->lines);
    free(t->cfi);
    free(t->segs);
    free(t->strs);
}

static void fill_names_ref(const wnames *n, uint32_t *c_name, uint32_t *ruby, uint32_t *file)
{
    *c_name = n->c_name->offset;
    *ruby = n->ruby_name->offset;
    *file = n->file->offset;
}

/* Flatten the inline records of each function into intervals and nodes. */
static int build_inline_tables(const sprof_symmap_writer *w, tables *t, const size_t *pos_of)
{
    size_t nf = w->funcs.n, ni = w->inlines.n;
    /* Group inline indexes by sorted function position (counting sort). */
    size_t *start = calloc(nf + 1, sizeof(*start));
    size_t *grouped = malloc((ni ? ni : 1) * sizeof(*grouped));
    uint32_t *remap = malloc((ni ? ni : 1) * sizeof(*remap));
    size_t *chain = malloc((ni ? ni : 1) * sizeof(*chain));
    t->nodes = malloc((ni ? ni : 1) * sizeof(*t->nodes));
    t->node_src = malloc((ni ? ni : 1) * sizeof(*t->node_src));
    wrange *ranges = NULL;
    int rc = -1;
    if (!start || !grouped || !remap || !chain || !t->nodes || !t->node_src)
        goto out;
    for (size_t i = 0; i < ni; i++) {
        start[pos_of[w->inlines.v[i].func] + 1]++;
        remap[i] = SYMMAP_NONE;
    }
    for (size_t p = 0; p < nf; p++)
        start[p + 1] += start[p];
    {
        size_t *fill = malloc((nf + 1) * sizeof(*fill));
        if (!fill)
            goto out;
        memcpy(fill, start, (nf + 1) * sizeof(*fill));
        for (size_t i = 0; i < ni; i++)
            grouped[fill[pos_of[w->inlines.v[i].func]]++] = i;
        free(fill);
    }
    emit_ctx ctx = { w, t->order };
    for (size_t p = 0; p < nf; p++) {
        const wfunc *f = &w->funcs.v[t->order[p]];
        size_t nr = 0;
        for (size_t g = start[p]; g < start[p + 1]; g++)
            nr += w->inlines.v[grouped[g]].nranges;
        t->funcs[p].interval_first = (uint32_t)t->intervals.n;
        t->funcs[p].interval_count = 0;
        if (nr == 0)
            continue;
        free(ranges);
        ranges = malloc(nr * sizeof(*ranges));
        if (!ranges)
            goto out;
        size_t k = 0;
        for (size_t g = start[p]; g < start[p + 1]; g++) {
            const winline *in = &w->inlines.v[grouped[g]];
            for (size_t r = 0; r < in->nranges; r++) {
                uint64_t lo = in->ranges[r][0] > f->lo ? in->ranges[r][0] : f->lo;
                uint64_t hi = in->ranges[r][1] < f->hi ? in->ranges[r][1] : f->hi;
                if (lo < hi)
                    ranges[k++] = (wrange){ lo, hi, grouped[g] };
            }
        }
        wflat *flat;
        size_t nflat;
        if (wflatten(ranges, k, better_inline, &ctx, &flat, &nflat) != 0)
            goto out;
        for (size_t j = 0; j < nflat; j++) {
            /* Give every node of this chain an output index, outermost first,
             * so a parent always precedes its children. */
            size_t depth = 0;
            for (long n = (long)flat[j].id; n >= 0; n = w->inlines.v[n].parent)
                chain[depth++] = (size_t)n;
            while (depth--) {
                size_t src = chain[depth];
                if (remap[src] != SYMMAP_NONE)
                    continue;
                const winline *in = &w->inlines.v[src];
                symmap_node *nd = &t->nodes[t->nnodes];
                memset(nd, 0, sizeof(*nd));
                nd->parent = in->parent >= 0 ? remap[in->parent] : SYMMAP_NONE;
                nd->depth = in->depth;
                nd->func = (uint32_t)p;
                nd->def_line = in->n.def_line;
                nd->call_line = in->call_line;
                nd->kind = in->n.kind;
                nd->cost = in->n.cost;
                nd->flags = in->n.flags;
                t->node_src[t->nnodes] = (winline *)in;
                remap[src] = (uint32_t)t->nnodes++;
            }
            symmap_interval *iv = WVEC_PUSH_SLOT(t->intervals);
            if (!iv) {
                free(flat);
                goto out;
            }
            memset(iv, 0, sizeof(*iv));
            iv->lo = flat[j].lo;
            iv->hi = flat[j].hi;
            iv->node = remap[flat[j].id];
        }
        free(flat);
        t->funcs[p].interval_count = (uint32_t)(t->intervals.n - t->funcs[p].interval_first);
    }
    rc = 0;
out:
    free(start);
    free(grouped);
    free(remap);
    free(chain);
    free(ranges);
    return rc;
}

static void mark(wstr *s)
{
    s->used = 1;
}

static void mark_names(const wnames *n)
{
    mark(n->c_name);
    mark(n->ruby_name);
    mark(n->file);
}

/* Sorted, de-duplicated string table of everything referenced. */
static int build_strings(sprof_symmap_writer *w, tables *t)
{
    for (size_t i = 0; i < w->strings.cap; i++)
        if (w->strings.slots[i])
            w->strings.slots[i]->used = 0;
    wstr *empty = wstr_intern(&w->strings, "");
    if (!empty)
        return -1;
    mark(empty);
    mark(w->binary_path);
    for (size_t i = 0; i < w->funcs.n; i++)
        mark_names(&w->funcs.v[i].n);
    for (size_t i = 0; i < t->nnodes; i++) {
        mark_names(&t->node_src[i]->n);
        mark(t->node_src[i]->call_file);
    }
    for (size_t i = 0; i < t->nlines; i++)
        mark(t->lines[i].file);
    t->strs = malloc((w->strings.n ? w->strings.n : 1) * sizeof(*t->strs));
    if (!t->strs)
        return -1;
    for (size_t i = 0; i < w->strings.cap; i++)
        if (w->strings.slots[i] && w->strings.slots[i]->used)
            t->strs[t->nstrs++] = w->strings.slots[i];
    qsort(t->strs, t->nstrs, sizeof(*t->strs), cmp_wstr_ptr);
    uint64_t off = 0;
    for (size_t i = 0; i < t->nstrs; i++) {
        t->strs[i]->offset = (uint32_t)off;
        off += t->strs[i]->len + 1;
        if (off > 0xFFFFFFFFull)
            return -2;
    }
    t->strings_size = off;
    return 0;
}

static size_t first_line_at_or_after(const wline *lines, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (lines[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int build_tables(sprof_symmap_writer *w, tables *t, char *err, size_t errlen)
{
    size_t nf = w->funcs.n;
    t->order = malloc((nf ? nf : 1) * sizeof(*t->order));
    size_t *pos_of = malloc((nf ? nf : 1) * sizeof(*pos_of));
    t->funcs = calloc(nf ? nf : 1, sizeof(*t->funcs));
    wrange *fr = malloc((nf ? nf : 1) * sizeof(*fr));
    int rc = -1;
    if (!t->order || !pos_of || !t->funcs || !fr)
        goto oom;
    func_ref *refs = malloc((nf ? nf : 1) * sizeof(*refs));
    if (!refs)
        goto oom;
    for (size_t i = 0; i < nf; i++)
        refs[i] = (func_ref){ &w->funcs.v[i], i };
    qsort(refs, nf, sizeof(*refs), cmp_func_ref);
    for (size_t i = 0; i < nf; i++)
        t->order[i] = refs[i].index;
    free(refs);
    for (size_t p = 0; p < nf; p++)
        pos_of[t->order[p]] = p;

    size_t nfr = 0;
    for (size_t p = 0; p < nf; p++) {
        const wfunc *f = &w->funcs.v[t->order[p]];
        if (f->lo < f->hi)
            fr[nfr++] = (wrange){ f->lo, f->hi, p };
    }
    emit_ctx ctx = { w, t->order };
    if (wflatten(fr, nfr, better_func, &ctx, &t->franges, &t->nfranges) != 0)
        goto oom;
    if (build_inline_tables(w, t, pos_of) != 0)
        goto oom;
    if (t->intervals.n > 0xFFFFFFF0u || t->nnodes > 0xFFFFFFF0u) {
        set_err(err, errlen, "too many inline records for format v1");
        goto out;
    }

    /* Lines: one row per address, redundant rows dropped. */
    t->lines = malloc((w->lines.n ? w->lines.n : 1) * sizeof(*t->lines));
    if (!t->lines)
        goto oom;
    copy_n(t->lines, w->lines.v, w->lines.n * sizeof(*t->lines));
    qsort(t->lines, w->lines.n, sizeof(*t->lines), cmp_line);
    uint64_t seen_addr = 0;
    for (size_t i = 0; i < w->lines.n; i++) {
        const wline l = t->lines[i];
        if (i > 0 && l.addr == seen_addr)
            continue; /* only the first (preferred) row at an address counts */
        seen_addr = l.addr;
        if (t->nlines) {
            const wline *prev = &t->lines[t->nlines - 1];
            if (prev->line == l.line && (l.line == 0 || prev->file == l.file))
                continue; /* same line as before: nothing new */
        } else if (l.line == 0) {
            continue; /* an end marker with nothing before it */
        }
        t->lines[t->nlines++] = l;
    }

    t->cfi = malloc((w->cfi.n ? w->cfi.n : 1) * sizeof(*t->cfi));
    if (!t->cfi)
        goto oom;
    copy_n(t->cfi, w->cfi.v, w->cfi.n * sizeof(*t->cfi));
    t->ncfi = sprof_cfi_normalize(t->cfi, w->cfi.n);

    t->segs = malloc((w->segments.n ? w->segments.n : 1) * sizeof(*t->segs));
    if (!t->segs)
        goto oom;
    copy_n(t->segs, w->segments.v, w->segments.n * sizeof(*t->segs));
    qsort(t->segs, w->segments.n, sizeof(*t->segs), cmp_segment);
    for (size_t i = 0; i < w->segments.n; i++)
        if (t->nsegs == 0 || cmp_segment(&t->segs[t->nsegs - 1], &t->segs[i]) != 0)
            t->segs[t->nsegs++] = t->segs[i];

    /* Each function's slice of the line table: the rows inside [lo, hi). */
    if (t->nlines > 0xFFFFFFF0u) {
        set_err(err, errlen, "too many line rows for format v1");
        goto out;
    }
    for (size_t p = 0; p < nf; p++) {
        const wfunc *f = &w->funcs.v[t->order[p]];
        size_t first = first_line_at_or_after(t->lines, t->nlines, f->lo);
        size_t end = first_line_at_or_after(t->lines, t->nlines, f->hi);
        t->funcs[p].line_first = (uint32_t)first;
        t->funcs[p].line_count = (uint32_t)(end - first);
    }

    int s = build_strings(w, t);
    if (s == -2) {
        set_err(err, errlen, "string table larger than 4 GiB (format v1 limit)");
        goto out;
    }
    if (s != 0)
        goto oom;

    /* String refs are known only now. */
    for (size_t p = 0; p < nf; p++) {
        const wfunc *f = &w->funcs.v[t->order[p]];
        symmap_func *d = &t->funcs[p];
        d->lo = f->lo;
        d->hi = f->hi;
        fill_names_ref(&f->n, &d->c_name, &d->ruby_name, &d->file);
        d->def_line = f->n.def_line;
        d->kind = f->n.kind;
        d->cost = f->n.cost;
        d->flags = f->n.flags;
    }
    for (size_t i = 0; i < t->nnodes; i++) {
        const winline *in = t->node_src[i];
        fill_names_ref(&in->n, &t->nodes[i].c_name, &t->nodes[i].ruby_name, &t->nodes[i].file);
        t->nodes[i].call_file = in->call_file->offset;
    }
    rc = 0;
    goto out;
oom:
    set_err(err, errlen, "out of memory");
out:
    free(pos_of);
    free(fr);
    return rc;
}

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

int sprof_symmap_writer_to_memory(sprof_symmap_writer *w, uint8_t **out, size_t *size,
                                  char *err, size_t errlen)
{
    *out = NULL;
    *size = 0;
    if (w->failed) {
        set_err(err, errlen, "out of memory while collecting symbols");
        return -1;
    }
    tables t;
    memset(&t, 0, sizeof(t));
    if (build_tables(w, &t, err, errlen) != 0) {
        tables_free(&t);
        return -1;
    }
    symmap_section_entry sec[SYMMAP_SEC_COUNT_V1];
    memset(sec, 0, sizeof(sec));
    sec[SYMMAP_SEC_STRINGS] = (symmap_section_entry){ 0, t.strings_size, 1, 0 };
    sec[SYMMAP_SEC_FUNCTIONS] = (symmap_section_entry){ 0, w->funcs.n, sizeof(symmap_func), 0 };
    sec[SYMMAP_SEC_FRANGES] = (symmap_section_entry){ 0, t.nfranges, sizeof(symmap_frange), 0 };
    sec[SYMMAP_SEC_NODES] = (symmap_section_entry){ 0, t.nnodes, sizeof(symmap_node), 0 };
    sec[SYMMAP_SEC_INTERVALS] = (symmap_section_entry){ 0, t.intervals.n, sizeof(symmap_interval), 0 };
    sec[SYMMAP_SEC_LINES] = (symmap_section_entry){ 0, t.nlines, sizeof(symmap_line), 0 };
    sec[SYMMAP_SEC_CFI] = (symmap_section_entry){ 0, t.ncfi, sizeof(symmap_cfi), 0 };
    sec[SYMMAP_SEC_SEGMENTS] = (symmap_section_entry){ 0, t.nsegs, sizeof(symmap_segment_disk), 0 };
    sec[SYMMAP_SEC_BUILD_ID] = (symmap_section_entry){ 0, w->build_id_len, 1, 0 };
    uint64_t off = sizeof(symmap_header) + sizeof(sec);
    for (int i = 0; i < SYMMAP_SEC_COUNT_V1; i++) {
        off = align8(off);
        sec[i].offset = off;
        off += sec[i].count * sec[i].entry_size;
    }
    off = align8(off);
    uint8_t *buf = calloc(1, off);
    if (!buf) {
        set_err(err, errlen, "out of memory (%llu bytes)", (unsigned long long)off);
        tables_free(&t);
        return -1;
    }
    symmap_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, SYMMAP_MAGIC, 8);
    h.version = SYMMAP_VERSION;
    h.header_size = (uint32_t)(sizeof(symmap_header) + sizeof(sec));
    h.nsections = SYMMAP_SEC_COUNT_V1;
    h.flags = w->is_pie ? SYMMAP_FLAG_PIE : 0;
    h.binary_path = w->binary_path->offset;
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), sec, sizeof(sec));

    for (size_t i = 0; i < t.nstrs; i++)
        memcpy(buf + sec[SYMMAP_SEC_STRINGS].offset + t.strs[i]->offset, t.strs[i]->s, t.strs[i]->len + 1);
    copy_n(buf + sec[SYMMAP_SEC_FUNCTIONS].offset, t.funcs, w->funcs.n * sizeof(symmap_func));
    symmap_frange *fr = (symmap_frange *)(buf + sec[SYMMAP_SEC_FRANGES].offset);
    for (size_t i = 0; i < t.nfranges; i++)
        fr[i] = (symmap_frange){ t.franges[i].lo, t.franges[i].hi, (uint32_t)t.franges[i].id, 0 };
    copy_n(buf + sec[SYMMAP_SEC_NODES].offset, t.nodes, t.nnodes * sizeof(symmap_node));
    copy_n(buf + sec[SYMMAP_SEC_INTERVALS].offset, t.intervals.v, t.intervals.n * sizeof(symmap_interval));
    symmap_line *ln = (symmap_line *)(buf + sec[SYMMAP_SEC_LINES].offset);
    for (size_t i = 0; i < t.nlines; i++)
        ln[i] = (symmap_line){ t.lines[i].addr, t.lines[i].file->offset, t.lines[i].line };
    symmap_cfi *cf = (symmap_cfi *)(buf + sec[SYMMAP_SEC_CFI].offset);
    for (size_t i = 0; i < t.ncfi; i++) {
        const sprof_cfi_row *r = &t.cfi[i];
        cf[i] = (symmap_cfi){ r->lo, r->hi, r->cfa_reg, r->rbp_saved, 0,
                              r->cfa_offset, r->ra_offset, r->rbp_offset };
    }
    symmap_segment_disk *sg = (symmap_segment_disk *)(buf + sec[SYMMAP_SEC_SEGMENTS].offset);
    for (size_t i = 0; i < t.nsegs; i++) {
        const sprof_segment *s = &t.segs[i];
        sg[i] = (symmap_segment_disk){ s->vaddr, s->memsz, s->file_offset, s->filesz, s->flags, 0 };
    }
    if (w->build_id_len)
        memcpy(buf + sec[SYMMAP_SEC_BUILD_ID].offset, w->build_id, w->build_id_len);
    tables_free(&t);
    *out = buf;
    *size = off;
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int sprof_symmap_writer_write(sprof_symmap_writer *w, const char *path, char *err, size_t errlen)
{
    uint8_t *buf;
    size_t size;
    char why[256];
    if (sprof_symmap_writer_to_memory(w, &buf, &size, why, sizeof(why)) != 0) {
        set_err(err, errlen, "%s: %s", path, why);
        return -1;
    }
    /* An existing non-regular target (/dev/null, a FIFO) is written in place:
     * renaming over it would replace the device with a regular file. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        int rc = -1;
        if (S_ISDIR(st.st_mode)) {
            set_err(err, errlen, "%s: is a directory", path);
        } else {
            int fd = open(path, O_WRONLY | O_CLOEXEC);
            if (fd < 0 || write_all(fd, buf, size) != 0)
                set_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            else
                rc = 0;
            if (fd >= 0 && close(fd) != 0 && rc == 0) {
                set_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
                rc = -1;
            }
        }
        free(buf);
        return rc;
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) {
        free(buf);
        set_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        set_err(err, errlen, "%s: cannot create temporary file: %s", path, strerror(errno));
        free(tmp);
        free(buf);
        return -1;
    }
    int rc = -1;
    if (fchmod(fd, 0644) != 0 || write_all(fd, buf, size) != 0) {
        set_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        close(fd);
    } else if (close(fd) != 0) {
        set_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    } else if (rename(tmp, path) != 0) {
        set_err(err, errlen, "%s: cannot rename into place: %s", path, strerror(errno));
    } else {
        rc = 0;
    }
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    free(buf);
    return rc;
}
