/* Resolve frames that other tools print as "symbol+offset" (perf script) or
 * as module-relative addresses (glibc backtrace_symbols, Spinel allocation
 * reports) through the symmap: the symbol's link-time address comes from
 * the symmap's function table (indexed by C name here, once per symmap),
 * so no runtime load address is needed, PIE or not. */
#include <stdlib.h>
#include <string.h>

#include "perf_script_internal.h"

typedef struct name_entry {
    const char *name; /* C symbol, points into the symmap */
    uint64_t lo, hi;
    size_t index;     /* function index in the symmap */
} name_entry;

struct sprof_symres {
    const sprof_symmap *m;
    name_entry *names;
    size_t nnames;
    const char *binary;      /* path as given to the generator */
    const char *binary_base; /* its base name */
};

static int cmp_entry(const void *a, const void *b)
{
    const name_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

sprof_symres *sprof_symres_new(const sprof_symmap *m)
{
    sprof_symres *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->m = m;
    r->binary = sprof_symmap_binary_path(m);
    if (!r->binary)
        r->binary = "";
    r->binary_base = base_name(r->binary);
    size_t n = sprof_symmap_function_count(m);
    r->names = calloc(n ? n : 1, sizeof *r->names);
    if (!r->names) {
        free(r);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        sprof_frame f;
        sprof_symmap_function(m, i, &f);
        if (!f.c_name || !f.c_name[0])
            continue;
        r->names[r->nnames++] = (name_entry){ f.c_name, f.func_lo, f.func_hi, i };
    }
    qsort(r->names, r->nnames, sizeof *r->names, cmp_entry);
    return r;
}

void sprof_symres_free(sprof_symres *r)
{
    if (!r)
        return;
    free(r->names);
    free(r);
}

int sprof_symres_is_binary(const sprof_symres *r, const char *dso, size_t dsolen)
{
    if (!r || !r->binary[0] || dsolen == 0)
        return 0;
    if (strlen(r->binary) == dsolen && memcmp(r->binary, dso, dsolen) == 0)
        return 1;
    const char *b = dso + dsolen;
    while (b > dso && b[-1] != '/')
        b--;
    size_t blen = (size_t)(dso + dsolen - b);
    return blen > 0 && strlen(r->binary_base) == blen && memcmp(r->binary_base, b, blen) == 0;
}

/* First entry whose name equals name[0..len) (entries sorted by name);
 * NULL if none, and for no resolver (no symmap) or an empty name. */
static const name_entry *find_name(const sprof_symres *r, const char *name, size_t len, size_t *count)
{
    if (!r || len == 0)
        return NULL;
    size_t lo = 0, hi = r->nnames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *s = r->names[mid].name;
        int c = strncmp(s, name, len);
        if (c == 0 && s[len] != '\0')
            c = 1; /* s is longer: sorts after name */
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < r->nnames && strncmp(r->names[lo + n].name, name, len) == 0 &&
           r->names[lo + n].name[len] == '\0')
        n++;
    *count = n;
    return n ? &r->names[lo] : NULL;
}

int sprof_symres_symbol_addr(const sprof_symres *r, const char *name, size_t namelen, uint64_t off,
                             uint64_t *link)
{
    size_t n;
    const name_entry *e = find_name(r, name, namelen, &n);
    if (!e)
        return -1;
    /* Several local functions may share a name: prefer one the offset fits in. */
    for (size_t i = 0; i < n; i++) {
        if (off < e[i].hi - e[i].lo) {
            *link = e[i].lo + off;
            return 0;
        }
    }
    if (e[0].lo + off < e[0].lo)
        return -1; /* overflow: hostile offset */
    *link = e[0].lo + off;
    return 0;
}

int sprof_symres_symbol_range(const sprof_symres *r, const char *name, size_t namelen,
                              uint64_t *lo, uint64_t *hi)
{
    size_t n;
    const name_entry *e = find_name(r, name, namelen, &n);
    if (!e)
        return -1;
    *lo = e->lo;
    *hi = e->hi;
    return 0;
}

int sprof_symres_covers(const sprof_symres *r, uint64_t addr)
{
    sprof_frame f;
    return r && sprof_symmap_lookup(r->m, addr, &f, 1) > 0;
}

static uint32_t intern_symmap_frame(sprof_profile *p, const sprof_frame *f, const char *module,
                                    uint64_t addr)
{
    sprof_pframe pf;
    memset(&pf, 0, sizeof pf);
    pf.c_name = f->c_name ? f->c_name : "";
    pf.name = f->ruby_name && f->ruby_name[0] ? f->ruby_name : pf.c_name;
    pf.file = f->file ? f->file : "";
    pf.module = module ? module : "";
    pf.line = f->line;
    pf.kind = f->kind;
    pf.cost = f->cost;
    pf.flags = f->flags;
    pf.address = addr;
    pf.def_line = f->def_line;
    return sprof_profile_intern_frame(p, &pf);
}

#define SYMRES_MAX_INLINE 64

size_t sprof_symres_frames(const sprof_symres *r, sprof_profile *p, uint64_t addr, int is_return,
                           int no_inline, const char *module, uint32_t *out, size_t max)
{
    if (!r)
        return 0;
    sprof_frame fr[SYMRES_MAX_INLINE];
    uint64_t look = is_return && addr > 0 ? addr - 1 : addr;
    size_t n = sprof_symmap_lookup(r->m, look, fr, SYMRES_MAX_INLINE);
    if (n > SYMRES_MAX_INLINE)
        n = SYMRES_MAX_INLINE;
    size_t k = 0;
    for (size_t i = 0; i < n && k < max; i++) {
        if (no_inline && (fr[i].flags & SPROF_FRAME_INLINED))
            continue;
        out[k++] = intern_symmap_frame(p, &fr[i], module, addr);
    }
    return k;
}

int sprof_symres_function_frame(const sprof_symres *r, sprof_profile *p, const char *name,
                                size_t namelen, const char *module, uint32_t *out)
{
    size_t n;
    const name_entry *e = find_name(r, name, namelen, &n);
    if (!e)
        return 0;
    sprof_frame f;
    sprof_symmap_function(r->m, e->index, &f);
    f.line = f.def_line;
    *out = intern_symmap_frame(p, &f, module, e->lo);
    return 1;
}

uint32_t sprof_text_plain_frame(sprof_profile *p, const char *name, size_t namelen,
                                const char *module, uint16_t flags)
{
    char stackbuf[512];
    char *buf = namelen < sizeof stackbuf ? stackbuf : malloc(namelen + 1);
    if (!buf)
        return UINT32_MAX;
    memcpy(buf, name, namelen);
    buf[namelen] = '\0';
    sprof_pframe pf;
    memset(&pf, 0, sizeof pf);
    pf.name = buf;
    pf.c_name = (flags & SPROF_PFRAME_SYNTHETIC) ? "" : buf;
    pf.file = "";
    pf.module = module ? module : "";
    pf.kind = SPROF_KIND_NATIVE;
    pf.cost = SPROF_COST_NATIVE;
    pf.flags = flags;
    uint32_t id = sprof_profile_intern_frame(p, &pf);
    if (buf != stackbuf)
        free(buf);
    return id;
}
