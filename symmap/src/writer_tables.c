/* The writer's table builder: sort every table with a total order, flatten
 * overlapping functions and inline trees into disjoint intervals, drop
 * redundant line rows, and build the string table (writer_layout.c then
 * lays the result out as bytes). */
#include <stdlib.h>
#include <string.h>

#include "cfi_internal.h"
#include "symmap_format.h"
#include "writer_internal.h"

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)

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


void wtables_free(wtables *t)
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
static int build_inline_tables(const sprof_symmap_writer *w, wtables *t, const size_t *pos_of)
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
static int build_strings(sprof_symmap_writer *w, wtables *t)
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

int wtables_build(sprof_symmap_writer *w, wtables *t, char *err, size_t errlen)
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
        wset_err(err, errlen, "too many inline records for format v1");
        goto out;
    }

    /* Lines: one row per address, redundant rows dropped. */
    t->lines = malloc((w->lines.n ? w->lines.n : 1) * sizeof(*t->lines));
    if (!t->lines)
        goto oom;
    wcopy_n(t->lines, w->lines.v, w->lines.n * sizeof(*t->lines));
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
    wcopy_n(t->cfi, w->cfi.v, w->cfi.n * sizeof(*t->cfi));
    sprof_cfi_strip_rbx(t->cfi, w->cfi.n); /* the format keeps rsp/rbp rules only */
    t->ncfi = sprof_cfi_normalize(t->cfi, w->cfi.n);

    t->segs = malloc((w->segments.n ? w->segments.n : 1) * sizeof(*t->segs));
    if (!t->segs)
        goto oom;
    wcopy_n(t->segs, w->segments.v, w->segments.n * sizeof(*t->segs));
    qsort(t->segs, w->segments.n, sizeof(*t->segs), cmp_segment);
    for (size_t i = 0; i < w->segments.n; i++)
        if (t->nsegs == 0 || cmp_segment(&t->segs[t->nsegs - 1], &t->segs[i]) != 0)
            t->segs[t->nsegs++] = t->segs[i];

    /* Each function's slice of the line table: the row covering lo, then the rows up to hi. */
    if (t->nlines > 0xFFFFFFF0u) {
        wset_err(err, errlen, "too many line rows for format v1");
        goto out;
    }
    for (size_t p = 0; p < nf; p++) {
        const wfunc *f = &w->funcs.v[t->order[p]];
        size_t first = first_line_at_or_after(t->lines, t->nlines, f->lo);
        /* The row covering lo may start before it (redundant rows are dropped). */
        if (first > 0 && (first == t->nlines || t->lines[first].addr > f->lo))
            first--;
        size_t end = first_line_at_or_after(t->lines, t->nlines, f->hi);
        t->funcs[p].line_first = (uint32_t)first;
        t->funcs[p].line_count = (uint32_t)(end - first);
    }

    int s = build_strings(w, t);
    if (s == -2) {
        wset_err(err, errlen, "string table larger than 4 GiB (format v1 limit)");
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
    wset_err(err, errlen, "out of memory");
out:
    free(pos_of);
    free(fr);
    return rc;
}
