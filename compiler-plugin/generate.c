/* The generator: joins ELF symbols, DWARF subprograms/inline trees/lines,
 * and Ruby names, then hands everything to the symmap writer (which sorts,
 * so the output depends only on the inputs). */
#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

#include "dwarf_input.h"
#include "elf_input.h"
#include "name_map.h"
#include "naming.h"
#include "sprof/native_demangle.h"
#include "ruby_names.h"
#include "sprof/symmap_writer.h"
#include "strpool.h"

typedef struct gen_func {
    const char *name;
    const sprof_elf_func *elf; /* its ELF symbol (aliases), NULL for DWARF-only ranges */
    uint8_t cost;              /* as named */
    uint64_t lo, hi;
    const char *decl_file;
    uint32_t decl_line;
    int has_dwarf;
    long writer_index;
    size_t first_inl_range, ninl_ranges; /* this function's top-level inline ranges */
} gen_func;

typedef struct func_range { /* a top-level inline range, by function */
    size_t func;
    uint64_t lo, hi;
} func_range;

typedef struct inline_placement { /* inline i -> its record in function f */
    size_t func;
    long writer_index;
} inline_placement;

typedef struct inl_rec { /* one range of one placed inline record, by function */
    size_t func;
    uint64_t lo, hi;
    uint32_t depth;
    uint8_t cost;
} inl_rec;

typedef struct file_state { /* does an absolute non-.rb path still exist */
    const char *path;
    int gone;
    UT_hash_handle hh;
} file_state;

typedef struct gen {
    const sprof_gen_options *o;
    sprof_elf_info elf;
    sprof_dwarf_info dw;
    int have_dwarf;
    sprof_name_map map;
    sprof_strpool *pool;
    gen_func *funcs;
    size_t nfuncs;
    sprof_dw_line *rows; /* statement rows sorted by address (no end markers) */
    size_t nrows;
    func_range *inl_ranges;
    size_t ninl_ranges;
    inl_rec *recs; /* placed inline records' ranges, sorted by (func, lo) */
    size_t nrecs, recs_cap;
    uint64_t *bounds; /* every function / inline range boundary, sorted, unique */
    size_t nbounds;
    file_state *files;
    size_t folded_funcs;
    sprof_symmap_writer *w;
} gen;

static int cmp_func(const void *a, const void *b)
{
    const gen_func *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return strcmp(x->name, y->name);
}

static long find_func(const gen *g, uint64_t addr)
{
    size_t lo = 0, hi = g->nfuncs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->funcs[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1;
    for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
        const gen_func *f = &g->funcs[k - 1];
        if (addr < f->hi &&
            (best < 0 || f->hi - f->lo < g->funcs[best].hi - g->funcs[best].lo))
            best = (long)(k - 1);
    }
    return best;
}

static int file_exists(const char *p)
{
    return access(p, R_OK) == 0;
}

static int load_names(gen *g, char *err, size_t errlen)
{
    const sprof_gen_options *o = g->o;
    char path[4096];
    const char *json = o->spinel_map;
    if (!json) {
        snprintf(path, sizeof path, "%s.symbols.json", o->binary);
        if (file_exists(path)) {
            json = path;
        } else {
            /* <dir>/<basename without extension>.symbols.json */
            const char *slash = strrchr(o->binary, '/');
            const char *bn = slash ? slash + 1 : o->binary;
            const char *dot = strrchr(bn, '.');
            size_t stem = dot && dot != bn ? (size_t)(dot - bn) : strlen(bn);
            snprintf(path, sizeof path, "%.*s%.*s.symbols.json", (int)(bn - o->binary), o->binary,
                     (int)stem, bn);
            if (file_exists(path))
                json = path;
        }
    }
    if (json) {
        if (sprof_name_map_load_json(&g->map, json, o->quiet, err, errlen) < 0)
            return -1;
        if (g->map.count)
            return 0;
        /* A map with no usable row: the C sources, when given, name better. */
    }
    for (size_t i = 0; i < o->nc_sources; i++)
        if (sprof_name_map_load_c_source(&g->map, o->c_sources[i], err, errlen) < 0)
            return -1;
    return 0;
}

static int cmp_row(const void *a, const void *b)
{
    const sprof_dw_line *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return 0;
}

static int cmp_func_range(const void *a, const void *b)
{
    const func_range *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Functions: ELF symbols, plus DWARF subprogram ranges no symbol covers. */
static int build_functions(gen *g)
{
    size_t extra = 0;
    for (size_t s = 0; s < g->dw.nsubs; s++)
        extra += g->dw.subs[s].nranges;
    g->funcs = calloc(g->elf.nfuncs + extra + 1, sizeof *g->funcs);
    if (!g->funcs)
        return -1;
    for (size_t i = 0; i < g->elf.nfuncs; i++)
        g->funcs[g->nfuncs++] = (gen_func){ .name = g->elf.funcs[i].name,
                                            .elf = &g->elf.funcs[i],
                                            .lo = g->elf.funcs[i].lo,
                                            .hi = g->elf.funcs[i].hi };
    size_t nelf = g->nfuncs;
    for (size_t s = 0; s < g->dw.nsubs; s++) {
        const sprof_dw_subprogram *sp = &g->dw.subs[s];
        for (size_t r = 0; r < sp->nranges; r++) {
            const sprof_range *rg = &g->dw.ranges[sp->first_range + r];
            if (sprof_elf_find_func(&g->elf, rg->lo) >= 0 || !sp->name)
                continue;
            int dup = 0; /* the same range twice (several CUs): keep one */
            for (size_t k = nelf; k < g->nfuncs; k++)
                if (g->funcs[k].lo == rg->lo && g->funcs[k].hi == rg->hi)
                    dup = 1;
            if (!dup)
                g->funcs[g->nfuncs++] = (gen_func){ .name = sp->name, .lo = rg->lo, .hi = rg->hi };
        }
    }
    if (g->nfuncs)
        qsort(g->funcs, g->nfuncs, sizeof *g->funcs, cmp_func);
    for (size_t s = 0; s < g->dw.nsubs; s++) {
        const sprof_dw_subprogram *sp = &g->dw.subs[s];
        for (size_t r = 0; r < sp->nranges; r++) {
            long f = find_func(g, g->dw.ranges[sp->first_range + r].lo);
            if (f < 0 || g->funcs[f].has_dwarf)
                continue;
            g->funcs[f].has_dwarf = 1;
            g->funcs[f].decl_file = sp->decl_file;
            g->funcs[f].decl_line = sp->decl_line;
        }
    }
    return 0;
}

/* Statement rows sorted by address, and each function's top-level inline
 * ranges (to leave inlined callees out of a function's own lines). */
static int index_lines(gen *g)
{
    g->rows = malloc((g->dw.nlines + 1) * sizeof *g->rows);
    if (!g->rows)
        return -1;
    for (size_t i = 0; i < g->dw.nlines; i++)
        if (g->dw.lines[i].file)
            g->rows[g->nrows++] = g->dw.lines[i];
    if (g->nrows)
        qsort(g->rows, g->nrows, sizeof *g->rows, cmp_row);

    size_t n = 0;
    for (size_t i = 0; i < g->dw.ninlines; i++)
        if (g->dw.inlines[i].parent < 0)
            n += g->dw.inlines[i].nranges;
    g->inl_ranges = malloc((n + 1) * sizeof *g->inl_ranges);
    if (!g->inl_ranges)
        return -1;
    for (size_t i = 0; i < g->dw.ninlines; i++) {
        const sprof_dw_inline *in = &g->dw.inlines[i];
        if (in->parent >= 0)
            continue;
        for (size_t r = 0; r < in->nranges; r++) {
            const sprof_range *rg = &g->dw.ranges[in->first_range + r];
            long f = find_func(g, rg->lo);
            if (f >= 0)
                g->inl_ranges[g->ninl_ranges++] = (func_range){ (size_t)f, rg->lo, rg->hi };
        }
    }
    if (g->ninl_ranges)
        qsort(g->inl_ranges, g->ninl_ranges, sizeof *g->inl_ranges, cmp_func_range);
    for (size_t i = 0; i < g->ninl_ranges;) {
        size_t j = i;
        while (j < g->ninl_ranges && g->inl_ranges[j].func == g->inl_ranges[i].func)
            j++;
        g->funcs[g->inl_ranges[i].func].first_inl_range = i;
        g->funcs[g->inl_ranges[i].func].ninl_ranges = j - i;
        i = j;
    }
    return 0;
}

static size_t first_row_at_or_after(const gen *g, uint64_t addr)
{
    size_t lo = 0, hi = g->nrows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->rows[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Source lines of [lo, hi) in address order, skipping the function's
 * inlined callees when `f` is given. At most `max`. */
static size_t code_lines(const gen *g, const gen_func *f, uint64_t lo, uint64_t hi,
                         sprof_line_ref *out, size_t max)
{
    size_t n = 0;
    for (size_t i = first_row_at_or_after(g, lo); i < g->nrows && g->rows[i].addr < hi && n < max;
         i++) {
        uint64_t a = g->rows[i].addr;
        int inlined = 0;
        if (f)
            for (size_t k = 0; k < f->ninl_ranges && !inlined; k++) {
                const func_range *r = &g->inl_ranges[f->first_inl_range + k];
                inlined = a >= r->lo && a < r->hi;
            }
        if (!inlined)
            out[n++] = (sprof_line_ref){ g->rows[i].file, g->rows[i].line };
    }
    return n;
}

#define MAX_SITE_LINES 64

/* C++ and Rust code: the Ruby-name field carries the demangled symbol
 * (`ns::Foo<int>::bar(int)`), the C-name field keeps the mangled one.
 * Only native code is looked at: Spinel's and C names are never mangled,
 * and the naming rules (naming.c) already had their say. */
static void demangle_native(sprof_symmap_names *names, char *ruby, size_t len)
{
    char d[1024];
    if (names->kind == SPROF_KIND_NATIVE && names->ruby_name == ruby &&
        sprof_native_demangle(ruby, d, sizeof d))
        snprintf(ruby, len, "%s", d);
}

/* Identical code folding: several C symbols at one [lo, hi). When they
 * name two or more different Ruby methods, the code is all of them: the
 * name lists them ("A#x (+2 folded: B#y, C#z)") and the FOLDED flag is set,
 * so no view can show one method carrying the others' time unawares. */
#define FOLDED_LIST_MAX 160
static void fold_aliases(gen *g, const gen_func *f, sprof_code_site *site, sprof_symmap_names *names,
                         char *ruby, size_t rubylen)
{
    if (!f->elf || !f->elf->naliases || names->cost != SPROF_COST_USER || names->kind > SPROF_KIND_CMETH)
        return;
    char others[FOLDED_LIST_MAX + 64] = "";
    size_t nothers = 0, listed = 0, used = 0;
    for (size_t k = 0; k < f->elf->naliases; k++) {
        sprof_symmap_names an;
        char abuf[1024];
        sprof_name_code(&g->map, f->elf->aliases[k], site, &an, abuf, sizeof abuf);
        if (an.cost != SPROF_COST_USER || an.kind > SPROF_KIND_CMETH || strcmp(abuf, ruby) == 0)
            continue;
        int dup = 0; /* two clones of one method (.isra and plain) are one name */
        for (size_t q = 0; q < k && !dup; q++) {
            sprof_symmap_names bn;
            char bbuf[1024];
            sprof_name_code(&g->map, f->elf->aliases[q], site, &bn, bbuf, sizeof bbuf);
            dup = strcmp(bbuf, abuf) == 0;
        }
        if (dup)
            continue;
        nothers++;
        if (an.flags & SPROF_FRAME_NAME_APPROX)
            names->flags |= SPROF_FRAME_NAME_APPROX;
        size_t len = strlen(abuf);
        if (used + len + 2 <= FOLDED_LIST_MAX) {
            used += (size_t)snprintf(others + used, sizeof others - used, "%s%s", listed ? ", " : "", abuf);
            listed++;
        }
    }
    if (!nothers)
        return;
    char first[901];
    snprintf(first, sizeof first, "%.900s", ruby);
    if (snprintf(ruby, rubylen, "%s (+%zu folded: %s%s)", first, nothers, others,
                 listed < nothers ? ", ..." : "") >= (int)rubylen)
        snprintf(ruby, rubylen, "%.900s (+%zu folded)", first, nothers);
    names->ruby_name = ruby;
    names->flags |= SPROF_FRAME_FOLDED;
    g->folded_funcs++;
}

static int add_functions(gen *g)
{
    for (size_t i = 0; i < g->nfuncs; i++) {
        gen_func *f = &g->funcs[i];
        sprof_line_ref lines[MAX_SITE_LINES];
        sprof_code_site site = { lines, 0, f->decl_file, f->decl_line };
        site.nlines = code_lines(g, f, f->lo, f->hi, lines, MAX_SITE_LINES);
        sprof_symmap_names names;
        char ruby[1024];
        sprof_name_code(&g->map, f->name, &site, &names, ruby, sizeof ruby);
        demangle_native(&names, ruby, sizeof ruby);
        fold_aliases(g, f, &site, &names, ruby, sizeof ruby);
        if (!f->has_dwarf)
            names.flags |= SPROF_FRAME_NO_DEBUG;
        f->cost = names.cost;
        f->writer_index = sprof_symmap_writer_add_function(g->w, f->lo, f->hi, &names);
        if (f->writer_index < 0)
            return -1;
    }
    return 0;
}

static int push_rec(gen *g, inl_rec r)
{
    if (g->nrecs == g->recs_cap) {
        size_t nc = g->recs_cap ? g->recs_cap * 2 : 1024;
        inl_rec *nv = realloc(g->recs, nc * sizeof *nv);
        if (!nv)
            return -1;
        g->recs = nv;
        g->recs_cap = nc;
    }
    g->recs[g->nrecs++] = r;
    return 0;
}

static int add_inlines(gen *g)
{
    size_t n = g->dw.ninlines;
    /* Placements of inline i: at most a few functions (main body, .cold part). */
    enum { MAXP = 4 };
    inline_placement(*place)[MAXP] = calloc(n + 1, sizeof *place);
    uint8_t *nplace = calloc(n + 1, 1);
    uint32_t *depth = calloc(n + 1, sizeof *depth);
    size_t maxr = 1;
    for (size_t i = 0; i < n; i++)
        if (g->dw.inlines[i].nranges > maxr)
            maxr = g->dw.inlines[i].nranges;
    uint64_t(*ranges)[2] = malloc(maxr * sizeof *ranges);
    size_t *rfunc = malloc(maxr * sizeof *rfunc);
    int rc = -1;
    if (!place || !nplace || !ranges || !rfunc || !depth)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const sprof_dw_inline *in = &g->dw.inlines[i];
        if (!in->name)
            continue;
        for (size_t r = 0; r < in->nranges; r++) {
            const sprof_range *rg = &g->dw.ranges[in->first_range + r];
            long f = find_func(g, rg->lo);
            rfunc[r] = f < 0 ? SIZE_MAX : (size_t)f;
        }
        /* One record per containing function, with that function's ranges. */
        for (size_t r = 0; r < in->nranges; r++) {
            size_t f = rfunc[r];
            if (f == SIZE_MAX)
                continue;
            int seen = 0;
            for (size_t q = 0; q < r; q++)
                seen |= rfunc[q] == f;
            if (seen || nplace[i] >= MAXP)
                continue;
            size_t nr = 0;
            for (size_t q = r; q < in->nranges; q++)
                if (rfunc[q] == f) {
                    const sprof_range *rg = &g->dw.ranges[in->first_range + q];
                    ranges[nr][0] = rg->lo;
                    ranges[nr][1] = rg->hi < g->funcs[f].hi ? rg->hi : g->funcs[f].hi;
                    nr++;
                }
            long parent = -1;
            if (in->parent >= 0)
                for (uint8_t k = 0; k < nplace[in->parent]; k++)
                    if (place[in->parent][k].func == f)
                        parent = place[in->parent][k].writer_index;
            sprof_line_ref lines[MAX_SITE_LINES];
            sprof_code_site site = { lines, 0, in->decl_file, in->decl_line };
            site.nlines = code_lines(g, NULL, ranges[0][0], ranges[0][1], lines, MAX_SITE_LINES);
            sprof_symmap_names names;
            char ruby[1024];
            sprof_name_code(&g->map, in->name, &site, &names, ruby, sizeof ruby);
            demangle_native(&names, ruby, sizeof ruby);
            depth[i] = in->parent >= 0 ? depth[in->parent] + 1 : 1;
            for (size_t q = 0; q < nr; q++)
                if (push_rec(g, (inl_rec){ f, ranges[q][0], ranges[q][1], depth[i], names.cost }) < 0)
                    goto out;
            long idx = sprof_symmap_writer_add_inline(g->w, g->funcs[f].writer_index, parent,
                                                      (const uint64_t(*)[2])ranges, nr, &names,
                                                      in->call_file, in->call_line);
            if (idx < 0)
                goto out;
            place[i][nplace[i]++] = (inline_placement){ f, idx };
        }
    }
    rc = 0;
out:
    free(place);
    free(nplace);
    free(depth);
    free(ranges);
    free(rfunc);
    return rc;
}

static int cmp_rec(const void *a, const void *b)
{
    const inl_rec *x = a, *y = b;
    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Is the innermost code at addr Ruby code (cost user)? Code no function
 * covers counts as Ruby (nothing is known against its line). */
static int innermost_is_user(const gen *g, uint64_t addr)
{
    long f = find_func(g, addr);
    if (f < 0)
        return 1;
    /* The function's records starting at or before addr; the deepest one
     * that covers addr is the innermost frame (bounded scan back). */
    size_t lo = 0, hi = g->nrecs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const inl_rec *r = &g->recs[mid];
        if (r->func < (size_t)f || (r->func == (size_t)f && r->lo <= addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t best_depth = 0;
    uint8_t cost = g->funcs[f].cost;
    for (size_t k = lo, steps = 0; k > 0 && steps < 4096; k--, steps++) {
        const inl_rec *r = &g->recs[k - 1];
        if (r->func != (size_t)f)
            break;
        if (addr < r->hi && r->depth > best_depth) {
            best_depth = r->depth;
            cost = r->cost;
        }
    }
    return cost == SPROF_COST_USER;
}

static int is_rb_path(const char *f)
{
    size_t n = strlen(f);
    return n > 3 && strcmp(f + n - 3, ".rb") == 0;
}

/* An absolute path of C code that no longer exists (Spinel compiles a
 * temporary out.c and deletes it): its lines point nowhere. */
static int file_gone(gen *g, const char *path)
{
    if (path[0] != '/' || is_rb_path(path))
        return 0;
    file_state *st;
    HASH_FIND_PTR(g->files, &path, st);
    if (st)
        return st->gone;
    st = calloc(1, sizeof *st);
    if (!st)
        return 0;
    st->path = path;
    st->gone = access(path, F_OK) != 0;
    HASH_ADD_PTR(g->files, path, st);
    return st->gone;
}

/* The line table. A .rb row that covers code whose innermost frame is not
 * Ruby (runtime, collector or libc code that inherited the last #line of
 * the Ruby code before it, or was inlined at such a spot) is cut out there:
 * runtime helpers keep their own lines or none. Rows in files that no
 * longer exist become "no line". */
static int add_lines(gen *g)
{
    size_t nb = 0;
    g->bounds = malloc((2 * (g->nrecs + g->nfuncs) + 1) * sizeof *g->bounds);
    if (!g->bounds)
        return -1;
    for (size_t i = 0; i < g->nrecs; i++) {
        g->bounds[nb++] = g->recs[i].lo;
        g->bounds[nb++] = g->recs[i].hi;
    }
    for (size_t i = 0; i < g->nfuncs; i++) {
        g->bounds[nb++] = g->funcs[i].lo;
        g->bounds[nb++] = g->funcs[i].hi;
    }
    if (nb) /* qsort(NULL, 0, ...) is undefined behaviour (no DWARF: no records) */
        qsort(g->bounds, nb, sizeof *g->bounds, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < nb; i++)
        if (!u || g->bounds[u - 1] != g->bounds[i])
            g->bounds[u++] = g->bounds[i];
    g->nbounds = u;
    if (g->nrecs)
        qsort(g->recs, g->nrecs, sizeof *g->recs, cmp_rec);

    for (size_t i = 0; i < g->dw.nlines; i++) {
        const sprof_dw_line *l = &g->dw.lines[i];
        /* Several rows at one address (gcc's location views): the last one
         * is the state of the line machine there, as debuggers read it. */
        if (l->file && i + 1 < g->dw.nlines && g->dw.lines[i + 1].file && g->dw.lines[i + 1].addr == l->addr)
            continue;
        if (!l->file) {
            sprof_symmap_writer_end_line_sequence(g->w, l->addr);
            continue;
        }
        if (file_gone(g, l->file)) {
            sprof_symmap_writer_end_line_sequence(g->w, l->addr);
            continue;
        }
        if (!is_rb_path(l->file)) {
            sprof_symmap_writer_add_line(g->w, l->addr, l->file, l->line);
            continue;
        }
        /* Where this row stops: the next row of the sequence. */
        uint64_t end = l->addr + 1;
        if (i + 1 < g->dw.nlines && g->dw.lines[i + 1].addr > l->addr)
            end = g->dw.lines[i + 1].addr;
        /* Split it at every frame boundary inside it. */
        size_t lo = 0, hi = g->nbounds;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g->bounds[mid] <= l->addr)
                lo = mid + 1;
            else
                hi = mid;
        }
        uint64_t at = l->addr;
        for (;;) {
            if (innermost_is_user(g, at))
                sprof_symmap_writer_add_line(g->w, at, l->file, l->line);
            else
                sprof_symmap_writer_end_line_sequence(g->w, at);
            if (lo >= g->nbounds || g->bounds[lo] >= end)
                break;
            at = g->bounds[lo++];
        }
    }
    return 0;
}

/* Rows naming no function the binary has, with no file either (Spinel's
 * "Method#initialize"): a sign of a broken map. */
typedef struct name_seen {
    const char *name;
    UT_hash_handle hh;
} name_seen;

static int add_seen(name_seen **set, name_seen *slot, const char *name)
{
    name_seen *e;
    HASH_FIND_STR(*set, name, e);
    if (e)
        return 0;
    slot->name = name;
    HASH_ADD_KEYPTR(hh, *set, slot->name, strlen(slot->name), slot);
    return 1;
}

static void count_absent_rows(gen *g)
{
    if (!g->map.json_path)
        return;
    size_t n = g->dw.nsubs + g->dw.ninlines;
    for (size_t i = 0; i < g->elf.nfuncs; i++)
        n += 1 + g->elf.funcs[i].naliases;
    char **names = calloc(n + 1, sizeof *names);
    name_seen *slots = calloc(n + 1, sizeof *slots);
    name_seen *set = NULL;
    size_t k = 0;
    if (!names || !slots)
        goto out;
#define ADD_NAME(s)                                                                                 \
    do {                                                                                            \
        if ((s) && k < n) {                                                                         \
            names[k] = strndup((s), sprof_base_name_len(s));                                        \
            if (names[k] && !add_seen(&set, &slots[k], names[k])) {                                 \
                free(names[k]);                                                                     \
                names[k] = NULL;                                                                    \
            }                                                                                       \
            k++;                                                                                    \
        }                                                                                           \
    } while (0)
    for (size_t i = 0; i < g->elf.nfuncs; i++) {
        ADD_NAME(g->elf.funcs[i].name);
        for (size_t a = 0; a < g->elf.funcs[i].naliases; a++)
            ADD_NAME(g->elf.funcs[i].aliases[a]);
    }
    for (size_t i = 0; i < g->dw.nsubs; i++)
        ADD_NAME(g->dw.subs[i].name);
    for (size_t i = 0; i < g->dw.ninlines; i++)
        ADD_NAME(g->dw.inlines[i].name);
#undef ADD_NAME
    sprof_map_entry *e, *tmp;
    HASH_ITER(hh, g->map.by_c, e, tmp)
    {
        if (e->file)
            continue; /* a real method Spinel listed but never emitted (dead code) */
        name_seen *hit;
        HASH_FIND_STR(set, e->c, hit);
        if (!hit) {
            if (!g->map.stats.absent_rows++)
                snprintf(g->map.stats.absent_example, sizeof g->map.stats.absent_example, "%s", e->ruby);
        }
    }
out:
    HASH_CLEAR(hh, set);
    for (size_t i = 0; i < k; i++)
        free(names[i]);
    free(names);
    free(slots);
}

/* One line about a map that cannot be trusted as it is. Printed even under
 * --quiet (sprof-cc passes it on): it says the names are not Spinel's. */
static void map_verdict(const gen *g)
{
    const sprof_map_stats *st = &g->map.stats;
    const char *path = g->map.json_path;
    if (!path)
        return;
    const char *fallback = g->map.exact ? "guessed from the C names (approximate)"
                                        : "taken from the C sources (approximate)";
    if (st->rows == 0) {
        fprintf(stderr, "sprof-symmap: warning: %s: broken name map: it has no rows; Ruby names are %s\n",
                path, fallback);
        return;
    }
    if (st->nameless_rows == st->rows) {
        fprintf(stderr,
                "sprof-symmap: warning: %s: broken name map: none of its %zu rows names a C function"
                " (%s; Spinel's self-hosted code generator writes such maps, the Ruby-run one does"
                " not); Ruby names are %s\n",
                path, st->rows, st->empty_rows == st->rows ? "every string is empty" : "no \"c\"",
                fallback);
        return;
    }
    char parts[512] = "";
    size_t used = 0;
    if (st->empty_rows)
        used += (size_t)snprintf(parts + used, sizeof parts - used,
                                 "%zu of %zu rows have empty strings (treated as missing, %zu without a"
                                 " C name dropped)",
                                 st->empty_rows, st->rows, st->nameless_rows);
    if (st->absent_rows && used < sizeof parts)
        used += (size_t)snprintf(parts + used, sizeof parts - used,
                                 "%s%zu row(s) without a file name, for a C function the binary does not have"
                                 " (%s): ignored",
                                 used ? "; " : "", st->absent_rows, st->absent_example);
    if (used)
        fprintf(stderr, "sprof-symmap: warning: %s: suspicious name map: %s\n", path, parts);
}

/* Spinel names every compiled method sp_*: a binary with such functions
 * came from Spinel (a plain C program's guessed names need no note). */
static int looks_like_spinel(const sprof_elf_info *elf)
{
    for (size_t i = 0; i < elf->nfuncs; i++)
        if (strncmp(elf->funcs[i].name, "sp_", 3) == 0)
            return 1;
    return 0;
}

/* dir (at most len - 1 bytes) of path; "." for a bare name */
static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    snprintf(dir, len, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
}

/* The .rb files the map names, read for the exact extent of each method
 * (blocks are placed in the method whose def..end holds their lines):
 * where the map says, else beside the binary, beside the map, beside the
 * C sources the DWARF line tables name (the generated C of a program built
 * outside its source tree, as examples/build.sh does; a wrong file there
 * is refused: its defs must be at the map's lines), or in the current
 * directory. Without the source a method is taken to run
 * to the next def, and the blocks placed so are marked guessed. */
static void read_rb_sources(gen *g)
{
    enum { MAX_DIRS = 3 + 16 };
    char dirbuf[MAX_DIRS][4096];
    const char *dirs[MAX_DIRS];
    size_t nd = 0;
    dir_of(g->o->binary, dirbuf[nd], sizeof dirbuf[nd]);
    dirs[nd] = dirbuf[nd];
    nd++;
    if (g->map.json_path) {
        dir_of(g->map.json_path, dirbuf[nd], sizeof dirbuf[nd]);
        dirs[nd] = dirbuf[nd];
        nd++;
    }
    const char *last = NULL;
    for (size_t i = 0; g->have_dwarf && i < g->dw.nlines && nd < MAX_DIRS - 1; i++) {
        const char *f = g->dw.lines[i].file;
        if (!f || f == last)
            continue;
        last = f;
        size_t n = strlen(f);
        if (n < 3 || strcmp(f + n - 2, ".c") != 0)
            continue;
        char d[4096];
        dir_of(f, d, sizeof d);
        size_t k = 0;
        while (k < nd && strcmp(dirs[k], d) != 0)
            k++;
        if (k < nd)
            continue;
        snprintf(dirbuf[nd], sizeof dirbuf[nd], "%s", d);
        dirs[nd] = dirbuf[nd];
        nd++;
    }
    dirs[nd++] = ".";
    sprof_name_map_read_sources(&g->map, dirs, nd);
}

/* No Spinel map and no C sources: every Ruby name is a guess from a C
 * name. Say so, and how each Spinel writes the map (docs/spinel.md). */
static void no_map_note(const char *binary)
{
    fprintf(stderr,
            "sprof-symmap: note: %s: no Spinel symbols JSON (%s.symbols.json, or --spinel-map PATH): Ruby names"
            " are guessed from the C names (approximate). To get one: newest Spinel: spinel --profile app.rb;"
            " the 2026 fork: spinel --emit-symbol-map app.rb (or SPINEL_EMIT_SYMBOL_MAP=app.symbols.json);"
            " any Spinel: spinel app.rb --cc=sprof-cc (names from the generated C)\n",
            binary, binary);
}

int sprof_generate(const sprof_gen_options *o, char *err, size_t errlen)
{
    gen g = { .o = o };
    int rc = -1;
    char out_path[4096];
    if (o->out)
        snprintf(out_path, sizeof out_path, "%s", o->out);
    else if ((size_t)snprintf(out_path, sizeof out_path, "%s.symmap", o->binary) >= sizeof out_path) {
        snprintf(err, errlen, "%s: path too long", o->binary);
        return -1;
    }
    sprof_name_map_init(&g.map);
    g.pool = sprof_strpool_new();
    if (!g.pool) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (sprof_elf_read(o->binary, o->quiet, &g.elf, err, errlen) < 0)
        goto out;
    if (load_names(&g, err, errlen) < 0)
        goto out;
    sprof_name_map_index(&g.map);

    char derr[512];
    int dr;
    if (g.elf.dwarf_problem[0]) {
        snprintf(derr, sizeof derr, "%s", g.elf.dwarf_problem);
        dr = -1;
    } else {
        dr = sprof_dwarf_read(o->binary, g.pool, &g.dw, derr, sizeof derr);
    }
    /* Even under --quiet (sprof-cc passes them on): a binary without usable
     * DWARF profiles without inline frames and lines, whatever built it. */
    if (dr < 0)
        fprintf(stderr, "sprof-symmap: warning: %s: unreadable DWARF (%s): symbol table only\n",
                o->binary, derr);
    else if (dr == 0 && !g.elf.dynsym_only) /* that warning said enough */
        fprintf(stderr,
                "sprof-symmap: warning: %s: no DWARF: symbol table only (no inline frames, no"
                " lines; rebuild with -g)\n",
                o->binary);
    g.have_dwarf = dr > 0;
    read_rb_sources(&g);
    count_absent_rows(&g);
    map_verdict(&g);
    /* under --quiet only for a Spinel program (sprof-cc passes it on) */
    if (!g.map.json_path && o->nc_sources == 0 && (!o->quiet || looks_like_spinel(&g.elf)))
        no_map_note(o->binary);

    g.w = sprof_symmap_writer_new();
    if (!g.w || build_functions(&g) < 0 || index_lines(&g) < 0) {
        snprintf(err, errlen, "%s: out of memory", o->binary);
        goto out;
    }
    sprof_symmap_writer_set_build_id(g.w, g.elf.build_id, g.elf.build_id_len);
    sprof_symmap_writer_set_binary_path(g.w, o->binary);
    sprof_symmap_writer_set_pie(g.w, g.elf.is_pie);
    for (size_t i = 0; i < g.elf.nsegs; i++)
        sprof_symmap_writer_add_segment(g.w, &g.elf.segs[i]);
    if (add_functions(&g) < 0 || add_inlines(&g) < 0) {
        snprintf(err, errlen, "%s: out of memory", o->binary);
        goto out;
    }
    if (add_lines(&g) < 0) {
        snprintf(err, errlen, "%s: out of memory", o->binary);
        goto out;
    }
    if (g.elf.ncfi)
        sprof_symmap_writer_add_cfi(g.w, g.elf.cfi, g.elf.ncfi);
    if (sprof_symmap_writer_write(g.w, out_path, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    if (g.w)
        sprof_symmap_writer_free(g.w);
    free(g.funcs);
    free(g.rows);
    free(g.inl_ranges);
    free(g.recs);
    free(g.bounds);
    {
        file_state *fs, *ftmp;
        HASH_ITER(hh, g.files, fs, ftmp)
        {
            HASH_DEL(g.files, fs);
            free(fs);
        }
    }
    sprof_dwarf_free(&g.dw);
    sprof_elf_free(&g.elf);
    sprof_name_map_free(&g.map);
    sprof_strpool_free(g.pool);
    return rc;
}
