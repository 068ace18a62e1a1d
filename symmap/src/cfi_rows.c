/* Canonical CFI row arrays: normalisation and binary search. */
#include <stdlib.h>

#include "cfi_internal.h"
#include "sprof/cfi.h"

static void canonical_rule(sprof_cfi_row *r)
{
    if (r->cfa_reg != SPROF_CFA_RSP && r->cfa_reg != SPROF_CFA_RBP && r->cfa_reg != SPROF_CFA_RBX) {
        r->cfa_reg = SPROF_CFA_UNDEFINED;
        r->cfa_offset = 0;
        r->ra_offset = 0;
        r->rbp_saved = 0;
        r->rbx_rule = SPROF_REG_UNKNOWN;
    }
    r->rbp_saved = r->rbp_saved ? 1 : 0;
    if (!r->rbp_saved)
        r->rbp_offset = 0;
    if (r->rbx_rule != SPROF_REG_SAME && r->rbx_rule != SPROF_REG_SAVED)
        r->rbx_rule = SPROF_REG_UNKNOWN;
    if (r->rbx_rule != SPROF_REG_SAVED)
        r->rbx_offset = 0;
}

void sprof_cfi_strip_rbx(sprof_cfi_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (rows[i].cfa_reg == SPROF_CFA_RBX)
            rows[i].cfa_reg = SPROF_CFA_UNDEFINED;
        rows[i].rbx_rule = SPROF_REG_UNKNOWN;
        rows[i].rbx_offset = 0;
    }
}

int sprof_cfi_same_rule(const sprof_cfi_row *a, const sprof_cfi_row *b)
{
    return a->cfa_reg == b->cfa_reg && a->cfa_offset == b->cfa_offset &&
           a->ra_offset == b->ra_offset && a->rbp_saved == b->rbp_saved &&
           a->rbp_offset == b->rbp_offset && a->rbx_rule == b->rbx_rule && a->rbx_offset == b->rbx_offset;
}

#define CMP(x, y) do { if ((x) != (y)) return (x) < (y) ? -1 : 1; } while (0)
static int cmp_row(const void *pa, const void *pb)
{
    const sprof_cfi_row *a = pa, *b = pb;
    CMP(a->lo, b->lo);
    CMP(a->hi, b->hi);
    CMP(a->cfa_reg, b->cfa_reg);
    CMP(a->cfa_offset, b->cfa_offset);
    CMP(a->ra_offset, b->ra_offset);
    CMP(a->rbp_saved, b->rbp_saved);
    CMP(a->rbp_offset, b->rbp_offset);
    CMP(a->rbx_rule, b->rbx_rule);
    CMP(a->rbx_offset, b->rbx_offset);
    return 0;
}

size_t sprof_cfi_normalize(sprof_cfi_row *rows, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].lo >= rows[i].hi)
            continue;
        rows[m] = rows[i];
        canonical_rule(&rows[m]);
        m++;
    }
    if (m == 0)
        return 0;
    qsort(rows, m, sizeof(*rows), cmp_row);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        sprof_cfi_row r = rows[i];
        if (k) {
            sprof_cfi_row *last = &rows[k - 1];
            if (r.lo < last->hi) {
                if (r.hi <= last->hi)
                    continue;
                r.lo = last->hi;
            }
            if (r.lo == last->hi && sprof_cfi_same_rule(last, &r)) {
                last->hi = r.hi;
                continue;
            }
        }
        rows[k++] = r;
    }
    return k;
}

const sprof_cfi_row *sprof_cfi_find(const sprof_cfi_row *rows, size_t n, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr >= rows[lo - 1].hi)
        return NULL;
    return &rows[lo - 1];
}
