/* Whole-map iteration and header accessors (dumps, tests, the offline
 * tools' mapping logic). Out-of-range indexes yield empty values. */
#include <string.h>

#include "reader_internal.h"

const uint8_t *sprof_symmap_build_id(const sprof_symmap *m, size_t *len)
{
    *len = m->build_id_len;
    return m->build_id;
}

const char *sprof_symmap_binary_path(const sprof_symmap *m)
{
    return m->binary_path;
}

int sprof_symmap_is_pie(const sprof_symmap *m)
{
    return (m->flags & SYMMAP_FLAG_PIE) != 0;
}

size_t sprof_symmap_segment_count(const sprof_symmap *m)
{
    return m->segs.n;
}

const sprof_segment *sprof_symmap_segment(const sprof_symmap *m, size_t i)
{
    return i < m->segs.n ? &m->segments[i] : NULL;
}

static void empty_frame(sprof_frame *out)
{
    memset(out, 0, sizeof(*out));
    out->c_name = out->ruby_name = out->file = "";
    out->kind = SPROF_KIND_NATIVE;
    out->cost = SPROF_COST_NATIVE;
}

size_t sprof_symmap_function_count(const sprof_symmap *m)
{
    return m->funcs.n;
}

void sprof_symmap_function(const sprof_symmap *m, size_t i, sprof_frame *out)
{
    if (i >= m->funcs.n) {
        empty_frame(out);
        return;
    }
    const symmap_func *f = R_FUNC(m, i);
    out->c_name = r_str(m, f->c_name);
    out->ruby_name = r_str(m, f->ruby_name);
    out->file = r_str(m, f->file);
    out->line = out->def_line = f->def_line;
    out->kind = f->kind;
    out->cost = f->cost;
    out->flags = f->flags;
    out->func_lo = f->lo;
    out->func_hi = f->hi;
}

size_t sprof_symmap_cfi_count(const sprof_symmap *m)
{
    return m->cfi.n;
}

void sprof_symmap_cfi_row_at(const sprof_symmap *m, size_t i, sprof_cfi_row *row)
{
    memset(row, 0, sizeof(*row));
    if (i >= m->cfi.n)
        return;
    const symmap_cfi *c = R_CFI(m, i);
    row->lo = c->lo;
    row->hi = c->hi;
    row->cfa_reg = c->cfa_reg;
    row->cfa_offset = c->cfa_offset;
    row->ra_offset = c->ra_offset;
    row->rbp_saved = c->rbp_saved;
    row->rbp_offset = c->rbp_offset;
}

size_t sprof_symmap_line_count(const sprof_symmap *m)
{
    return m->lines.n;
}

void sprof_symmap_line_at(const sprof_symmap *m, size_t i, uint64_t *addr, const char **file, uint32_t *line)
{
    if (i >= m->lines.n) {
        *addr = 0;
        *file = "";
        *line = 0;
        return;
    }
    const symmap_line *l = R_LINE(m, i);
    *addr = l->addr;
    *file = r_str(m, l->file);
    *line = l->line;
}

size_t sprof_symmap_inline_count(const sprof_symmap *m)
{
    return m->nodes.n;
}

void sprof_symmap_inline_at(const sprof_symmap *m, size_t i, sprof_frame *out, size_t *parent,
                            size_t *func_index, const char **call_file, uint32_t *call_line)
{
    if (i >= m->nodes.n) {
        if (out)
            empty_frame(out);
        if (parent)
            *parent = SPROF_SYMMAP_NO_PARENT;
        if (func_index)
            *func_index = 0;
        if (call_file)
            *call_file = "";
        if (call_line)
            *call_line = 0;
        return;
    }
    const symmap_node *n = R_NODE(m, i);
    if (out) {
        const symmap_func *f = R_FUNC(m, n->func);
        out->c_name = r_str(m, n->c_name);
        out->ruby_name = r_str(m, n->ruby_name);
        out->file = r_str(m, n->file);
        out->def_line = n->def_line;
        out->line = n->call_line;
        out->kind = n->kind;
        out->cost = n->cost;
        out->flags = n->flags;
        out->func_lo = f->lo;
        out->func_hi = f->hi;
    }
    if (parent)
        *parent = n->parent == SYMMAP_NONE ? SPROF_SYMMAP_NO_PARENT : n->parent;
    if (func_index)
        *func_index = n->func;
    if (call_file)
        *call_file = r_str(m, n->call_file);
    if (call_line)
        *call_line = n->call_line;
}

size_t sprof_symmap_interval_count(const sprof_symmap *m)
{
    return m->intervals.n;
}

void sprof_symmap_interval_at(const sprof_symmap *m, size_t i, uint64_t *lo, uint64_t *hi, size_t *node)
{
    if (i >= m->intervals.n) {
        *lo = *hi = 0;
        *node = 0;
        return;
    }
    const symmap_interval *iv = R_INTERVAL(m, i);
    *lo = iv->lo;
    *hi = iv->hi;
    *node = iv->node;
}
