/* The writer's collection half: everything added is copied and kept until
 * write time (writer_emit.c lays it out, writer_flatten.c flattens it). */
#include <stdlib.h>
#include <string.h>

#include "writer_internal.h"

sprof_symmap_writer *sprof_symmap_writer_new(void)
{
    sprof_symmap_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->binary_path = wstr_intern(&w->strings, "");
    if (!w->binary_path) {
        free(w);
        return NULL;
    }
    return w;
}

void sprof_symmap_writer_free(sprof_symmap_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->inlines.n; i++)
        free(w->inlines.v[i].ranges);
    free(w->inlines.v);
    free(w->funcs.v);
    free(w->lines.v);
    free(w->cfi.v);
    free(w->segments.v);
    free(w->build_id);
    wstr_set_free(&w->strings);
    free(w);
}

void sprof_symmap_writer_set_build_id(sprof_symmap_writer *w, const uint8_t *id, size_t len)
{
    free(w->build_id);
    w->build_id = NULL;
    w->build_id_len = 0;
    if (!id || len == 0)
        return;
    w->build_id = malloc(len);
    if (!w->build_id) {
        w->failed = 1;
        return;
    }
    memcpy(w->build_id, id, len);
    w->build_id_len = len;
}

void sprof_symmap_writer_set_binary_path(sprof_symmap_writer *w, const char *path)
{
    wstr *s = wstr_intern(&w->strings, path);
    if (!s)
        w->failed = 1;
    else
        w->binary_path = s;
}

void sprof_symmap_writer_set_pie(sprof_symmap_writer *w, int is_pie)
{
    w->is_pie = is_pie ? 1 : 0;
}

void sprof_symmap_writer_add_segment(sprof_symmap_writer *w, const sprof_segment *seg)
{
    sprof_segment *slot = WVEC_PUSH_SLOT(w->segments);
    if (!slot) {
        w->failed = 1;
        return;
    }
    *slot = *seg;
}

/* Copy caller names into interned form; -1 on bad input or out of memory. */
static int intern_names(sprof_symmap_writer *w, const sprof_symmap_names *in, wnames *out)
{
    if (!in || !in->c_name || in->kind >= SPROF_KIND_COUNT || in->cost >= SPROF_COST_STORED_COUNT)
        return -1;
    const char *ruby = in->ruby_name && in->ruby_name[0] ? in->ruby_name : in->c_name;
    out->c_name = wstr_intern(&w->strings, in->c_name);
    out->ruby_name = wstr_intern(&w->strings, ruby);
    out->file = wstr_intern(&w->strings, in->file);
    if (!out->c_name || !out->ruby_name || !out->file) {
        w->failed = 1;
        return -1;
    }
    out->def_line = in->def_line;
    out->kind = in->kind;
    out->cost = in->cost;
    out->flags = in->flags;
    return 0;
}

long sprof_symmap_writer_add_function(sprof_symmap_writer *w, uint64_t lo, uint64_t hi,
                                      const sprof_symmap_names *names)
{
    wnames n;
    if (hi < lo || w->funcs.n >= 0xFFFFFFF0u || intern_names(w, names, &n) != 0)
        return -1;
    wfunc *f = WVEC_PUSH_SLOT(w->funcs);
    if (!f) {
        w->failed = 1;
        return -1;
    }
    f->lo = lo;
    f->hi = hi;
    f->n = n;
    f->n.flags &= (uint16_t)~SPROF_FRAME_INLINED;
    f->ninlines = 0;
    return (long)(w->funcs.n - 1);
}

long sprof_symmap_writer_add_inline(sprof_symmap_writer *w, long func_index, long parent,
                                    const uint64_t (*ranges)[2], size_t nranges,
                                    const sprof_symmap_names *names,
                                    const char *call_file, uint32_t call_line)
{
    if (func_index < 0 || (size_t)func_index >= w->funcs.n || w->inlines.n >= 0xFFFFFFF0u)
        return -1;
    uint32_t depth = 1;
    if (parent >= 0) {
        if ((size_t)parent >= w->inlines.n || w->inlines.v[parent].func != (size_t)func_index)
            return -1;
        depth = w->inlines.v[parent].depth + 1;
    } else if (parent != -1) {
        return -1;
    }
    if (nranges && !ranges)
        return -1;
    wnames n;
    if (intern_names(w, names, &n) != 0)
        return -1;
    wstr *cf = wstr_intern(&w->strings, call_file);
    uint64_t (*copy)[2] = NULL;
    size_t kept = 0;
    if (nranges) {
        copy = malloc(nranges * sizeof(*copy));
        if (!copy || !cf) {
            free(copy);
            w->failed = 1;
            return -1;
        }
        for (size_t i = 0; i < nranges; i++) {
            if (ranges[i][0] >= ranges[i][1])
                continue; /* empty or reversed range: covers nothing */
            copy[kept][0] = ranges[i][0];
            copy[kept][1] = ranges[i][1];
            kept++;
        }
    }
    winline *in = WVEC_PUSH_SLOT(w->inlines);
    if (!in) {
        free(copy);
        w->failed = 1;
        return -1;
    }
    in->func = (size_t)func_index;
    in->parent = parent;
    in->depth = depth;
    in->ranges = copy;
    in->nranges = kept;
    in->n = n;
    in->n.flags |= SPROF_FRAME_INLINED;
    in->call_file = cf;
    in->call_line = call_line;
    w->funcs.v[func_index].ninlines++;
    return (long)(w->inlines.n - 1);
}

void sprof_symmap_writer_add_line(sprof_symmap_writer *w, uint64_t addr, const char *file,
                                  uint32_t line)
{
    wstr *f = wstr_intern(&w->strings, file);
    wline *l = f ? WVEC_PUSH_SLOT(w->lines) : NULL;
    if (!l) {
        w->failed = 1;
        return;
    }
    l->addr = addr;
    l->file = line ? f : wstr_intern(&w->strings, ""); /* line 0: "no line", file irrelevant */
    l->line = line;
    l->seq = w->lines.n - 1;
    if (!l->file)
        w->failed = 1;
}

void sprof_symmap_writer_end_line_sequence(sprof_symmap_writer *w, uint64_t addr)
{
    sprof_symmap_writer_add_line(w, addr, "", 0);
}

void sprof_symmap_writer_add_cfi(sprof_symmap_writer *w, const sprof_cfi_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sprof_cfi_row *r = WVEC_PUSH_SLOT(w->cfi);
        if (!r) {
            w->failed = 1;
            return;
        }
        *r = rows[i];
    }
}
