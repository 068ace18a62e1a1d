/* PC lookups on a validated symmap: binary searches, no allocation. */
#include "reader_internal.h"

/* Index of the last entry in [first, first + n) whose key (the first u64 of
 * every entry of the tables searched here) is <= addr, or (size_t)-1.
 * Branch-free halving: the loop runs log2(n) times whatever the data, and
 * the compiler turns the select into a conditional move. */
static size_t last_le(const rtable *t, uint64_t addr, size_t first, size_t n)
{
    if (n == 0)
        return (size_t)-1;
    const uint8_t *base = t->p + first * t->stride;
    while (n > 1) {
        size_t half = n / 2;
        const uint8_t *mid = base + half * t->stride;
        base = *(const uint64_t *)(const void *)mid <= addr ? mid : base;
        n -= half;
    }
    if (*(const uint64_t *)(const void *)base > addr)
        return (size_t)-1;
    return (size_t)(base - t->p) / t->stride;
}

static void fill_from_func(const sprof_symmap *m, const symmap_func *f, sprof_frame *out)
{
    out->c_name = r_str(m, f->c_name);
    out->ruby_name = r_str(m, f->ruby_name);
    out->file = r_str(m, f->file);
    out->def_line = f->def_line;
    out->line = f->def_line;
    out->kind = f->kind;
    out->cost = f->cost;
    out->flags = f->flags;
    out->func_lo = f->lo;
    out->func_hi = f->hi;
}

static void fill_from_node(const sprof_symmap *m, const symmap_node *n, const symmap_func *f,
                           sprof_frame *out)
{
    out->c_name = r_str(m, n->c_name);
    out->ruby_name = r_str(m, n->ruby_name);
    out->file = r_str(m, n->file);
    out->def_line = n->def_line;
    out->line = 0;
    out->kind = n->kind;
    out->cost = n->cost;
    out->flags = n->flags;
    out->func_lo = f->lo;
    out->func_hi = f->hi;
}

size_t sprof_symmap_lookup(const sprof_symmap *m, uint64_t addr, sprof_frame *out, size_t max)
{
    size_t first, n;
    addr_index_range(&m->frange_index, &m->franges, addr, &first, &n);
    size_t r = last_le(&m->franges, addr, first, n);
    if (r == (size_t)-1 || addr >= R_FRANGE(m, r)->hi)
        return 0;
    uint32_t fi = R_FRANGE(m, r)->func;
    const symmap_func *f = R_FUNC(m, fi);

    uint32_t node = SYMMAP_NONE;
    size_t iv = last_le(&m->intervals, addr, f->interval_first, f->interval_count);
    if (iv != (size_t)-1 && addr < R_INTERVAL(m, iv)->hi)
        node = R_INTERVAL(m, iv)->node;

    /* Line of the innermost frame: the line-table row covering addr, searched
     * in the function's slice (the row covering its start, then its rows). */
    const char *file = NULL;
    uint32_t line = 0;
    size_t li = last_le(&m->lines, addr, f->line_first, f->line_count);
    if (li != (size_t)-1) {
        const symmap_line *l = R_LINE(m, li);
        if (l->line != 0) {
            file = r_str(m, l->file);
            line = l->line;
        }
    }

    size_t count = 0;
    while (node != SYMMAP_NONE) {
        const symmap_node *n = R_NODE(m, node);
        if (count < max) {
            fill_from_node(m, n, f, &out[count]);
            out[count].line = line;
            if (file)
                out[count].file = file;
        }
        count++;
        /* The enclosing frame is at the call site of this one. */
        file = r_str(m, n->call_file);
        line = n->call_line;
        node = n->parent; /* validated: parent < node, so this ends */
    }
    if (count < max) {
        fill_from_func(m, f, &out[count]);
        out[count].line = line;
        if (file)
            out[count].file = file;
    }
    return count + 1;
}

int sprof_symmap_cfi_lookup(const sprof_symmap *m, uint64_t addr, sprof_cfi_row *row)
{
    size_t first, n;
    addr_index_range(&m->cfi_index, &m->cfi, addr, &first, &n);
    size_t i = last_le(&m->cfi, addr, first, n);
    if (i == (size_t)-1 || addr >= R_CFI(m, i)->hi)
        return -1;
    const symmap_cfi *c = R_CFI(m, i);
    *row = (sprof_cfi_row){ .lo = c->lo, .hi = c->hi, .cfa_reg = c->cfa_reg,
                            .cfa_offset = c->cfa_offset, .ra_offset = c->ra_offset,
                            .rbp_saved = c->rbp_saved, .rbp_offset = c->rbp_offset };
    return 0;
}

int sprof_symmap_file_offset_to_vaddr(const sprof_symmap *m, uint64_t file_off, uint64_t *vaddr)
{
    int found = 0;
    for (size_t i = 0; i < m->segs.n; i++) {
        const symmap_segment_disk *s = R_SEG(m, i);
        if (file_off < s->file_offset || file_off - s->file_offset >= s->filesz)
            continue;
        /* Executable segments win where file ranges share a page. */
        if (!found || (s->flags & 1u)) {
            *vaddr = s->vaddr + (file_off - s->file_offset);
            found = 1;
            if (s->flags & 1u)
                break;
        }
    }
    return found ? 0 : -1;
}
