/* Sweep that turns possibly nested/overlapping ranges into disjoint
 * intervals, each owned by the item that wins there (the innermost inline
 * node, or the smallest function). */
#include <stdlib.h>

#include "writer_internal.h"

static int cmp_range(const void *pa, const void *pb)
{
    const wrange *a = pa, *b = pb;
    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi)
        return a->hi < b->hi ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

int wflatten(wrange *ranges, size_t n, wbetter_fn better, const void *ctx,
             wflat **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (n == 0)
        return 0;
    qsort(ranges, n, sizeof(*ranges), cmp_range);
    uint64_t *pts = malloc(2 * n * sizeof(*pts));
    size_t *active = malloc(n * sizeof(*active));
    WVEC(wflat) res = { 0 };
    if (!pts || !active)
        goto oom;
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        pts[np++] = ranges[i].lo;
        pts[np++] = ranges[i].hi;
    }
    qsort(pts, np, sizeof(*pts), cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || pts[u - 1] != pts[i])
            pts[u++] = pts[i];
    np = u;

    size_t nactive = 0, next = 0;
    for (size_t k = 0; k + 1 < np; k++) {
        uint64_t at = pts[k];
        size_t keep = 0;
        for (size_t a = 0; a < nactive; a++)
            if (ranges[active[a]].hi > at)
                active[keep++] = active[a];
        nactive = keep;
        while (next < n && ranges[next].lo <= at) {
            if (ranges[next].hi > at)
                active[nactive++] = next;
            next++;
        }
        if (nactive == 0)
            continue;
        size_t best = ranges[active[0]].id;
        for (size_t a = 1; a < nactive; a++)
            if (better(ranges[active[a]].id, best, ctx) < 0)
                best = ranges[active[a]].id;
        if (res.n && res.v[res.n - 1].hi == at && res.v[res.n - 1].id == best) {
            res.v[res.n - 1].hi = pts[k + 1];
            continue;
        }
        wflat *f = WVEC_PUSH_SLOT(res);
        if (!f)
            goto oom;
        f->lo = at;
        f->hi = pts[k + 1];
        f->id = best;
    }
    free(pts);
    free(active);
    *out = res.v;
    *nout = res.n;
    return 0;
oom:
    free(pts);
    free(active);
    free(res.v);
    return -1;
}
