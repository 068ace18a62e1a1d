/* The generator: joins ELF symbols, DWARF subprograms/inline trees/lines,
 * and Ruby names, then hands everything to the symmap writer (which sorts,
 * so the output depends only on the inputs). */
#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_input.h"
#include "elf_input.h"
#include "name_map.h"
#include "naming.h"
#include "sprof/native_demangle.h"
#include "sprof/symmap_writer.h"
#include "strpool.h"

typedef struct gen_func {
    const char *name;
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
    if (json)
        return sprof_name_map_load_json(&g->map, json, o->quiet, err, errlen);
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

static int add_functions(gen *g)
{
    for (size_t i = 0; i < g->nfuncs; i++) {
        gen_func *f = &g->funcs[i];
        sprof_line_ref lines[MAX_SITE_LINES];
        sprof_code_site site = { lines, 0, f->decl_file, f->decl_line };
        if (g->map.count)
            site.nlines = code_lines(g, f, f->lo, f->hi, lines, MAX_SITE_LINES);
        sprof_symmap_names names;
        char ruby[1024];
        sprof_name_code(&g->map, f->name, &site, &names, ruby, sizeof ruby);
        demangle_native(&names, ruby, sizeof ruby);
        if (!f->has_dwarf)
            names.flags |= SPROF_FRAME_NO_DEBUG;
        f->writer_index = sprof_symmap_writer_add_function(g->w, f->lo, f->hi, &names);
        if (f->writer_index < 0)
            return -1;
    }
    return 0;
}

static int add_inlines(gen *g)
{
    size_t n = g->dw.ninlines;
    /* Placements of inline i: at most a few functions (main body, .cold part). */
    enum { MAXP = 4 };
    inline_placement(*place)[MAXP] = calloc(n + 1, sizeof *place);
    uint8_t *nplace = calloc(n + 1, 1);
    size_t maxr = 1;
    for (size_t i = 0; i < n; i++)
        if (g->dw.inlines[i].nranges > maxr)
            maxr = g->dw.inlines[i].nranges;
    uint64_t(*ranges)[2] = malloc(maxr * sizeof *ranges);
    size_t *rfunc = malloc(maxr * sizeof *rfunc);
    int rc = -1;
    if (!place || !nplace || !ranges || !rfunc)
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
            if (g->map.count)
                site.nlines = code_lines(g, NULL, ranges[0][0], ranges[0][1], lines, MAX_SITE_LINES);
            sprof_symmap_names names;
            char ruby[1024];
            sprof_name_code(&g->map, in->name, &site, &names, ruby, sizeof ruby);
            demangle_native(&names, ruby, sizeof ruby);
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
    free(ranges);
    free(rfunc);
    return rc;
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
    if (dr < 0 && !o->quiet)
        fprintf(stderr, "sprof-symmap: warning: %s: unreadable DWARF (%s): symbol table only\n",
                o->binary, derr);
    else if (dr == 0 && !o->quiet && !g.elf.dynsym_only) /* that warning said enough */
        fprintf(stderr,
                "sprof-symmap: warning: %s: no DWARF: symbol table only (no inline frames, no"
                " lines; rebuild with -g)\n",
                o->binary);
    g.have_dwarf = dr > 0;

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
    for (size_t i = 0; i < g.dw.nlines; i++) {
        const sprof_dw_line *l = &g.dw.lines[i];
        /* Several rows at one address (gcc's location views): the last one
         * is the state of the line machine there, as debuggers read it. */
        if (l->file && i + 1 < g.dw.nlines && g.dw.lines[i + 1].file && g.dw.lines[i + 1].addr == l->addr)
            continue;
        if (l->file)
            sprof_symmap_writer_add_line(g.w, l->addr, l->file, l->line);
        else
            sprof_symmap_writer_end_line_sequence(g.w, l->addr);
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
    sprof_dwarf_free(&g.dw);
    sprof_elf_free(&g.elf);
    sprof_name_map_free(&g.map);
    sprof_strpool_free(g.pool);
    return rc;
}
