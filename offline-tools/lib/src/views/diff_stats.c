/* The statistics of sprof-diff: the pooled two-proportion z-test (one run
 * a side), Welch's t-test on per-run shares (replicates), the run-to-run
 * dispersion the runs show (a diagnostic), and the
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

/* Continued fraction of the regularized incomplete beta function
 * (modified Lentz), valid for x < (a + 1) / (a + b + 2). */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    d = 1 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        for (int step = 0; step < 2; step++) {
            d = 1 + num * d;
            d = 1 / (fabs(d) < tiny ? tiny : d);
            c = 1 + num / c;
            c = fabs(c) < tiny ? tiny : c;
            h *= d * c;
            num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        }
        if (fabs(d * c - 1) < 1e-12)
            break;
    }
    return h;
}

/* I_x(a, b). */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double sprof_diff_t_pvalue(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return 1.0;
    if (isinf(t))
        return 0.0;
    return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

/* Mean and sample variance of the shares x[i]/n[i]; *nbar: mean run size. */
static void share_moments(const uint64_t *x, const uint64_t *n, size_t k, double *mean, double *var, double *nbar)
{
    double sum = 0, sumn = 0;
    for (size_t i = 0; i < k; i++) {
        sum += n[i] ? (double)x[i] / (double)n[i] : 0;
        sumn += (double)n[i];
    }
    *mean = sum / (double)k;
    *nbar = sumn / (double)k;
    double ss = 0;
    for (size_t i = 0; i < k; i++) {
        double d = (n[i] ? (double)x[i] / (double)n[i] : 0) - *mean;
        ss += d * d;
    }
    *var = ss / (double)(k - 1);
}

/* The pooled within-side variance of the per-run shares over the binomial
 * variance of one run's share at the pooled share; NaN if it has no meaning
 * (fewer than 2 runs a side, or a share of 0 or 1 everywhere). */
double sprof_diff_runs_dispersion(const uint64_t *x0, const uint64_t *n0, size_t k0, const uint64_t *x1,
                                  const uint64_t *n1, size_t k1)
{
    if (k0 < 2 || k1 < 2)
        return NAN;
    double m0, v0, nb0, m1, v1, nb1;
    share_moments(x0, n0, k0, &m0, &v0, &nb0);
    share_moments(x1, n1, k1, &m1, &v1, &nb1);
    double pooled = (m0 + m1) / 2, binom = pooled * (1 - pooled);
    if (!(nb0 > 0) || !(nb1 > 0) || !(binom > 0))
        return NAN;
    /* sum of squares over binomial variance, per degree of freedom */
    double ss = v0 * (double)(k0 - 1) * nb0 / binom + v1 * (double)(k1 - 1) * nb1 / binom;
    return ss / (double)(k0 + k1 - 2);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sprof_diff_median_dispersion(double *d, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(d[i]))
            d[m++] = d[i];
    if (m == 0)
        return 1.0; /* nothing to learn from: the binomial variance */
    qsort(d, m, sizeof *d, by_value);
    return m % 2 ? d[m / 2] : (d[m / 2 - 1] + d[m / 2]) / 2;
}

double sprof_diff_runs_test(const uint64_t *x0, const uint64_t *n0, size_t k0, const uint64_t *x1, const uint64_t *n1,
                            size_t k1, double *t)
{
    if (t)
        *t = 0;
    if (k0 < 2 || k1 < 2)
        return 1.0;
    double m0, v0, nb0, m1, v1, nb1;
    share_moments(x0, n0, k0, &m0, &v0, &nb0);
    share_moments(x1, n1, k1, &m1, &v1, &nb1);
    if (!(nb0 > 0) || !(nb1 > 0))
        return 1.0;
    /* Each side's own variance: Welch's t distribution already allows for
     * runs that agree by chance. No binomial floor: timer sampling is
     * systematic, and a deterministic program's shares vary ~10x less than
     * binomially between runs (knob.c: 0.1 vs 0.37 pp), so that floor hid
     * real changes (0 of 10 3 %-slower methods found; docs/diff.md). The
     * only floor: a count is never known better than one sample. */
    if (v0 < 1.0 / (nb0 * nb0))
        v0 = 1.0 / (nb0 * nb0);
    if (v1 < 1.0 / (nb1 * nb1))
        v1 = 1.0 / (nb1 * nb1);
    double e0 = v0 / (double)k0, e1 = v1 / (double)k1;
    if (!(e0 + e1 > 0))
        return 1.0;
    double tt = (m1 - m0) / sqrt(e0 + e1);
    double df = (e0 + e1) * (e0 + e1) / (e0 * e0 / (double)(k0 - 1) + e1 * e1 / (double)(k1 - 1));
    if (t)
        *t = tt;
    return sprof_diff_t_pvalue(tt, df);
}

double sprof_diff_values_test(const double *x0, size_t k0, double floor0, const double *x1, size_t k1,
                              double floor1, double *t)
{
    if (t)
        *t = 0;
    if (k0 < 2 || k1 < 2)
        return 1.0;
    double m0 = 0, m1 = 0, v0 = 0, v1 = 0;
    for (size_t i = 0; i < k0; i++)
        m0 += x0[i] / (double)k0;
    for (size_t i = 0; i < k1; i++)
        m1 += x1[i] / (double)k1;
    for (size_t i = 0; i < k0; i++)
        v0 += (x0[i] - m0) * (x0[i] - m0) / (double)(k0 - 1);
    for (size_t i = 0; i < k1; i++)
        v1 += (x1[i] - m1) * (x1[i] - m1) / (double)(k1 - 1);
    if (v0 < floor0)
        v0 = floor0;
    if (v1 < floor1)
        v1 = floor1;
    double e0 = v0 / (double)k0, e1 = v1 / (double)k1;
    if (!(e0 + e1 > 0))
        return 1.0;
    double tt = (m1 - m0) / sqrt(e0 + e1);
    double df = (e0 + e1) * (e0 + e1) / (e0 * e0 / (double)(k0 - 1) + e1 * e1 / (double)(k1 - 1));
    if (t)
        *t = tt;
    return sprof_diff_t_pvalue(tt, df);
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
