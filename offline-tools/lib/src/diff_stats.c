/* The statistics of sprof-diff: the pooled two-proportion z-test and the
 * Benjamini-Hochberg false-discovery-rate adjustment. */
#include "sprof/diff.h"

#include <math.h>
#include <stdlib.h>

double sprof_diff_ztest(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2, double *z)
{
    if (z)
        *z = 0;
    if (n1 == 0 || n2 == 0 || x1 > n1 || x2 > n2)
        return 1.0;
    double p1 = (double)x1 / (double)n1, p2 = (double)x2 / (double)n2;
    double pooled = ((double)x1 + (double)x2) / ((double)n1 + (double)n2);
    double var = pooled * (1 - pooled) * (1.0 / (double)n1 + 1.0 / (double)n2);
    if (!(var > 0))
        return 1.0; /* both shares 0 or both 1: no evidence of change */
    double zz = (p2 - p1) / sqrt(var);
    if (z)
        *z = zz;
    return erfc(fabs(zz) / sqrt(2.0));
}

typedef struct ranked {
    double p;
    size_t i;
} ranked;

static int by_p(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p ? 1 : (x->i > y->i) - (x->i < y->i);
}

int sprof_diff_bh_adjust(const double *p, double *q, size_t n)
{
    ranked *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(p[i]))
            r[m++] = (ranked){ p[i], i };
    qsort(r, m, sizeof *r, by_p);
    /* q_(k) = min over j >= k of p_(j) * m / j, capped at 1. */
    double running = 1.0;
    for (size_t k = m; k-- > 0;) {
        double v = r[k].p * (double)m / (double)(k + 1);
        if (v < running)
            running = v;
        r[k].p = running;
    }
    for (size_t i = 0; i < n; i++)
        if (isnan(p[i]))
            q[i] = NAN;
    for (size_t k = 0; k < m; k++)
        q[r[k].i] = r[k].p;
    free(r);
    return 0;
}
