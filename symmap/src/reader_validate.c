/* One-time validation of a symmap image. After this succeeds, every offset,
 * count, string ref and index the lookups follow is known to be in bounds,
 * so lookups need no checks of their own whatever the file contained. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_internal.h"

static int fail(const struct sprof_symmap *m, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        int k = snprintf(err, errlen, "%s: ", m->name);
        if (k >= 0 && (size_t)k < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static const char *const section_names[SYMMAP_SEC_COUNT_V1] = {
    "string table", "function table", "function range table", "inline node table",
    "inline interval table", "line table", "CFI table", "segment table", "build-id",
};

static const uint32_t section_min_size[SYMMAP_SEC_COUNT_V1] = {
    1, sizeof(symmap_func), sizeof(symmap_frange), sizeof(symmap_node),
    sizeof(symmap_interval), sizeof(symmap_line), sizeof(symmap_cfi),
    sizeof(symmap_segment_disk), 1,
};

static int check_sections(struct sprof_symmap *m, const symmap_header *h, char *err, size_t errlen)
{
    rtable *tables[SYMMAP_SEC_COUNT_V1] = {
        NULL, &m->funcs, &m->franges, &m->nodes, &m->intervals, &m->lines, &m->cfi, &m->segs, NULL,
    };
    for (unsigned i = 0; i < SYMMAP_SEC_COUNT_V1; i++) {
        symmap_section_entry s;
        memcpy(&s, m->base + sizeof(*h) + i * sizeof(s), sizeof(s));
        const char *what = section_names[i];
        uint32_t min = section_min_size[i];
        if (s.entry_size < min || (min > 1 && s.entry_size % 8 != 0) || (min == 1 && s.entry_size != 1))
            return fail(m, err, errlen, "%s: bad entry size %u", what, s.entry_size);
        if (s.offset % 8 != 0)
            return fail(m, err, errlen, "%s: offset %llu not 8-byte aligned", what,
                        (unsigned long long)s.offset);
        if (s.offset < h->header_size || s.offset > m->size)
            return fail(m, err, errlen, "truncated: %s starts at %llu outside the file (size %zu)",
                        what, (unsigned long long)s.offset, m->size);
        uint64_t bytes, end;
        if (__builtin_mul_overflow(s.count, (uint64_t)s.entry_size, &bytes) ||
            __builtin_add_overflow(s.offset, bytes, &end))
            return fail(m, err, errlen, "%s: entry count %llu too large", what, (unsigned long long)s.count);
        if (end > m->size)
            return fail(m, err, errlen, "truncated: %s ends at %llu beyond file size %zu", what,
                        (unsigned long long)end, m->size);
        if (s.count > 0xFFFFFFF0u && i != SYMMAP_SEC_STRINGS && i != SYMMAP_SEC_BUILD_ID)
            return fail(m, err, errlen, "%s: too many entries (%llu)", what, (unsigned long long)s.count);
        const uint8_t *p = m->base + s.offset;
        if (tables[i]) {
            tables[i]->p = p;
            tables[i]->n = (size_t)s.count;
            tables[i]->stride = s.entry_size;
        } else if (i == SYMMAP_SEC_STRINGS) {
            m->strings = (const char *)p;
            m->strings_size = (size_t)s.count;
        } else {
            m->build_id = p;
            m->build_id_len = (size_t)s.count;
        }
    }
    return 0;
}

/* A string ref is good if it lies inside the table (which ends in NUL). */
#define STR_OK(ref) ((size_t)(ref) < m->strings_size)

static int check_functions(struct sprof_symmap *m, char *err, size_t errlen)
{
    for (size_t i = 0; i < m->funcs.n; i++) {
        const symmap_func *f = R_FUNC(m, i);
        if (!STR_OK(f->c_name) || !STR_OK(f->ruby_name) || !STR_OK(f->file))
            return fail(m, err, errlen, "function %zu: string reference outside the string table", i);
        if (f->lo > f->hi)
            return fail(m, err, errlen, "function %zu: range ends before it starts", i);
        if (f->kind >= SPROF_KIND_COUNT || f->cost >= SPROF_COST_STORED_COUNT)
            return fail(m, err, errlen, "function %zu: bad kind %u or cost %u", i, f->kind, f->cost);
        if (i > 0) {
            const symmap_func *p = R_FUNC(m, i - 1);
            if (p->lo > f->lo || (p->lo == f->lo && p->hi > f->hi))
                return fail(m, err, errlen, "function table not sorted at entry %zu", i);
        }
        if ((uint64_t)f->interval_first + f->interval_count > m->intervals.n)
            return fail(m, err, errlen, "function %zu: inline intervals %u+%u beyond the table (%zu)", i,
                        f->interval_first, f->interval_count, m->intervals.n);
        if ((uint64_t)f->line_first + f->line_count > m->lines.n)
            return fail(m, err, errlen, "function %zu: line rows %u+%u beyond the table (%zu)", i,
                        f->line_first, f->line_count, m->lines.n);
        for (uint32_t k = 0; k < f->interval_count; k++) {
            const symmap_interval *iv = R_INTERVAL(m, (size_t)f->interval_first + k);
            if (iv->lo >= iv->hi || iv->lo < f->lo || iv->hi > f->hi)
                return fail(m, err, errlen, "function %zu: inline interval %u outside the function", i, k);
            if (k > 0 && R_INTERVAL(m, (size_t)f->interval_first + k - 1)->hi > iv->lo)
                return fail(m, err, errlen, "function %zu: inline intervals not sorted/disjoint", i);
            if (iv->node >= m->nodes.n || R_NODE(m, iv->node)->func != i)
                return fail(m, err, errlen, "function %zu: inline interval %u names a bad node", i, k);
        }
    }
    for (size_t i = 0; i < m->franges.n; i++) {
        const symmap_frange *r = R_FRANGE(m, i);
        if (r->lo >= r->hi || r->func >= m->funcs.n)
            return fail(m, err, errlen, "function range %zu: empty or bad function index", i);
        const symmap_func *f = R_FUNC(m, r->func);
        if (r->lo < f->lo || r->hi > f->hi)
            return fail(m, err, errlen, "function range %zu: outside its function", i);
        if (i > 0 && R_FRANGE(m, i - 1)->hi > r->lo)
            return fail(m, err, errlen, "function range table not sorted/disjoint at entry %zu", i);
    }
    return 0;
}

static int check_nodes(struct sprof_symmap *m, char *err, size_t errlen)
{
    for (size_t i = 0; i < m->nodes.n; i++) {
        const symmap_node *n = R_NODE(m, i);
        if (!STR_OK(n->c_name) || !STR_OK(n->ruby_name) || !STR_OK(n->file) || !STR_OK(n->call_file))
            return fail(m, err, errlen, "inline node %zu: string reference outside the string table", i);
        if (n->func >= m->funcs.n)
            return fail(m, err, errlen, "inline node %zu: bad function index %u", i, n->func);
        if (n->kind >= SPROF_KIND_COUNT || n->cost >= SPROF_COST_STORED_COUNT)
            return fail(m, err, errlen, "inline node %zu: bad kind %u or cost %u", i, n->kind, n->cost);
        if (n->parent == SYMMAP_NONE) {
            if (n->depth != 1)
                return fail(m, err, errlen, "inline node %zu: depth %u without a parent", i, n->depth);
            continue;
        }
        /* parent < i makes every parent chain finite (no cycles). */
        if (n->parent >= i)
            return fail(m, err, errlen, "inline node %zu: parent %u does not precede it", i, n->parent);
        const symmap_node *p = R_NODE(m, n->parent);
        if (p->func != n->func || p->depth + 1 != n->depth)
            return fail(m, err, errlen, "inline node %zu: inconsistent with its parent %u", i, n->parent);
    }
    return 0;
}

static int check_rows(struct sprof_symmap *m, char *err, size_t errlen)
{
    for (size_t i = 0; i < m->lines.n; i++) {
        const symmap_line *l = R_LINE(m, i);
        if (!STR_OK(l->file))
            return fail(m, err, errlen, "line row %zu: string reference outside the string table", i);
        if (i > 0 && R_LINE(m, i - 1)->addr >= l->addr)
            return fail(m, err, errlen, "line table not sorted at row %zu", i);
    }
    for (size_t i = 0; i < m->cfi.n; i++) {
        const symmap_cfi *c = R_CFI(m, i);
        if (c->lo >= c->hi)
            return fail(m, err, errlen, "CFI row %zu: empty range", i);
        if ((c->cfa_reg != SPROF_CFA_UNDEFINED && c->cfa_reg != SPROF_CFA_RSP &&
             c->cfa_reg != SPROF_CFA_RBP) || c->rbp_saved > 1)
            return fail(m, err, errlen, "CFI row %zu: bad register rule", i);
        if (i > 0 && R_CFI(m, i - 1)->hi > c->lo)
            return fail(m, err, errlen, "CFI table not sorted/disjoint at row %zu", i);
    }
    for (size_t i = 0; i < m->segs.n; i++) {
        const symmap_segment_disk *s = R_SEG(m, i);
        if (s->vaddr + s->memsz < s->vaddr || s->file_offset + s->filesz < s->file_offset)
            return fail(m, err, errlen, "segment %zu: range wraps around", i);
        if (i > 0 && R_SEG(m, i - 1)->vaddr > s->vaddr)
            return fail(m, err, errlen, "segment table not sorted at entry %zu", i);
    }
    return 0;
}

int symmap_validate(struct sprof_symmap *m, char *err, size_t errlen)
{
    symmap_header h;
    if (m->size < 12 || memcmp(m->base, SYMMAP_MAGIC, 8) != 0)
        return fail(m, err, errlen, m->size < 8 ? "not a symmap (file too short)" : "not a symmap (bad magic)");
    memcpy(&h.version, m->base + 8, 4);
    if (h.version != SYMMAP_VERSION)
        return fail(m, err, errlen, "unsupported symmap version %u (this reader knows %u)", h.version,
                    SYMMAP_VERSION);
    if (m->size < sizeof(h))
        return fail(m, err, errlen, "truncated: header ends at %zu beyond file size %zu", sizeof(h), m->size);
    memcpy(&h, m->base, sizeof(h));
    if (h.nsections < SYMMAP_SEC_COUNT_V1 || h.nsections > 4096)
        return fail(m, err, errlen, "bad section count %u", h.nsections);
    uint64_t need = sizeof(h) + (uint64_t)h.nsections * sizeof(symmap_section_entry);
    if (h.header_size < need || h.header_size % 8 != 0)
        return fail(m, err, errlen, "bad header size %u", h.header_size);
    if (h.header_size > m->size)
        return fail(m, err, errlen, "truncated: header ends at %u beyond file size %zu", h.header_size, m->size);
    if (check_sections(m, &h, err, errlen) != 0)
        return -1;
    if (m->strings_size == 0 || m->strings[0] != '\0' || m->strings[m->strings_size - 1] != '\0')
        return fail(m, err, errlen, "string table must start and end with a NUL byte");
    if (!STR_OK(h.binary_path))
        return fail(m, err, errlen, "binary path: string reference outside the string table");
    m->binary_path = r_str(m, h.binary_path);
    m->flags = h.flags;
    if (check_nodes(m, err, errlen) != 0 || check_functions(m, err, errlen) != 0 ||
        check_rows(m, err, errlen) != 0)
        return -1;
    return 0;
}
