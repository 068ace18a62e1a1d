/* The before/after table of sprof-diff: self and total sample counts per
 * method (or .rb line) on both sides, per run and summed, joined by name,
 * then tested. */
#include "sprof/diff.h"
#include "sprof/trace_format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct key_entry {
    UT_hash_handle hh;
    size_t row;
    char key[];
} key_entry;

typedef struct builder {
    sprof_diff_table *t;
    size_t cap;
    key_entry *index;
    uint64_t *stamp; /* per row: last stack (1-based, per side) that counted its total */
} builder;

/* Saturating add: hostile counts must not wrap below a row's own count. */
static void add_sat(uint64_t *v, uint64_t w)
{
    *v = *v > UINT64_MAX - w ? UINT64_MAX : *v + w;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* Row of `key`, created with `method`/`cost` if new. SIZE_MAX if out of memory. */
static size_t row_of(builder *b, const char *key, const char *method, uint8_t cost)
{
    key_entry *e;
    size_t len = strlen(key);
    HASH_FIND(hh, b->index, key, len, e);
    if (e)
        return e->row;
    sprof_diff_table *t = b->t;
    if (t->nrows == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        sprof_diff_row *rows = realloc(t->rows, cap * sizeof *rows);
        if (!rows)
            return SIZE_MAX;
        t->rows = rows;
        uint64_t *stamp = realloc(b->stamp, cap * sizeof *stamp);
        if (!stamp)
            return SIZE_MAX;
        b->stamp = stamp;
        b->cap = cap;
    }
    e = malloc(sizeof *e + len + 1);
    if (!e)
        return SIZE_MAX;
    memcpy(e->key, key, len + 1);
    sprof_diff_row *r = &t->rows[t->nrows];
    memset(r, 0, sizeof *r);
    r->key = strdup(key);
    r->method = strdup(method);
    if (!r->key || !r->method) {
        free(r->key);
        free(r->method);
        free(e);
        return SIZE_MAX;
    }
    size_t k = t->nruns[0] + t->nruns[1];
    /* one block: self, then total, per side; then the same in CPU ns */
    r->run_self[0] = calloc(4 * k, sizeof(uint64_t));
    if (!r->run_self[0]) {
        free(r->key);
        free(r->method);
        free(e);
        return SIZE_MAX;
    }
    r->run_self[1] = r->run_self[0] + t->nruns[0];
    r->run_total[0] = r->run_self[0] + k;
    r->run_total[1] = r->run_total[0] + t->nruns[0];
    r->run_self_ns[0] = r->run_self[0] + 2 * k;
    r->run_self_ns[1] = r->run_self_ns[0] + t->nruns[0];
    r->run_total_ns[0] = r->run_self_ns[0] + k;
    r->run_total_ns[1] = r->run_total_ns[0] + t->nruns[0];
    r->cost = cost;
    e->row = t->nrows;
    b->stamp[t->nrows] = 0;
    HASH_ADD_KEYPTR(hh, b->index, e->key, len, e);
    return t->nrows++;
}

/* Key every frame of p once: its row, or SIZE_MAX - 1 when the frame has
 * no row (with --lines: not a .rb line). */
#define NO_ROW (SIZE_MAX - 1)
static int key_frames(builder *b, const sprof_profile *p, int by_lines, size_t *rows)
{
    static const sprof_fold_format names = { 0 };
    char name[2048], key[4096 + 32];
    for (size_t i = 0; i < p->nframes; i++) {
        const sprof_pframe *f = &p->frames[i];
        const char *d = sprof_pframe_display(f, &names, name, sizeof name);
        if (!d)
            d = "?";
        if (by_lines && f->line && ends_with(f->file, ".rb")) {
            snprintf(key, sizeof key, "%s:%u", f->file, f->line);
            rows[i] = row_of(b, key, d, f->cost);
        } else if (by_lines) {
            /* Folded input written with lines ("Foo#bar:12") has the line
             * in the name only: key by that name, method without ":12". */
            size_t len = strlen(d), k = len;
            while (k > 0 && d[k - 1] >= '0' && d[k - 1] <= '9')
                k--;
            if (f->file[0] || k == len || k < 2 || d[k - 1] != ':') {
                rows[i] = NO_ROW;
                continue;
            }
            snprintf(key, sizeof key, "%.*s", (int)(k - 1), d);
            rows[i] = row_of(b, d, key, f->cost);
        } else {
            rows[i] = row_of(b, d, d, f->cost);
        }
        if (rows[i] == SIZE_MAX)
            return -1;
    }
    return 0;
}

/* Add run `run` of `side`: to its per-run counts and the side's sums. */
static int add_run(builder *b, const sprof_profile *p, int side, size_t run, int by_lines)
{
    size_t *rows = malloc((p->nframes ? p->nframes : 1) * sizeof *rows);
    if (!rows || key_frames(b, p, by_lines, rows) != 0) {
        free(rows);
        return -1;
    }
    sprof_diff_table *t = b->t;
    for (size_t r = 0; r < t->nrows; r++)
        b->stamp[r] = 0;
    for (size_t s = 0; s < p->nstacks; s++) {
        const sprof_pstack *st = &p->stacks[s];
        uint64_t w = st->samples, ns = st->cpu_ns;
        add_sat(&t->n[side], w);
        add_sat(&t->run_n[side][run], w);
        add_sat(&t->run_ns[side][run], ns);
        if (w == 0)
            continue;
        /* self: the leaf; with --lines, the innermost .rb line. */
        for (uint32_t k = st->nframes; k-- > 0;) {
            uint32_t f = st->frames[k];
            if (f >= p->nframes)
                continue;
            if (rows[f] != NO_ROW) {
                add_sat(&t->rows[rows[f]].self[side], w);
                add_sat(&t->rows[rows[f]].run_self[side][run], w);
                add_sat(&t->rows[rows[f]].run_self_ns[side][run], ns);
                break;
            }
            if (!by_lines)
                break;
        }
        /* total: every row on the stack, once (recursion counted once). */
        for (uint32_t k = 0; k < st->nframes; k++) {
            uint32_t f = st->frames[k];
            if (f >= p->nframes || rows[f] == NO_ROW)
                continue;
            size_t r = rows[f];
            if (b->stamp[r] == s + 1)
                continue;
            b->stamp[r] = s + 1;
            add_sat(&t->rows[r].total[side], w);
            add_sat(&t->rows[r].run_total[side][run], w);
            add_sat(&t->rows[r].run_total_ns[side][run], ns);
        }
    }
    free(rows);
    return 0;
}

double sprof_diff_self_pp(const sprof_diff_table *t, const sprof_diff_row *r)
{
    double a = t->n[1] ? 100.0 * (double)r->self[1] / (double)t->n[1] : 0;
    double b = t->n[0] ? 100.0 * (double)r->self[0] / (double)t->n[0] : 0;
    return a - b;
}

double sprof_diff_total_pp(const sprof_diff_table *t, const sprof_diff_row *r)
{
    double a = t->n[1] ? 100.0 * (double)r->total[1] / (double)t->n[1] : 0;
    double b = t->n[0] ? 100.0 * (double)r->total[0] / (double)t->n[0] : 0;
    return a - b;
}

/* p-value of one measure of a row: the runs test with replicates on both
 * sides, else the z-test on the summed counts. */
static double test_measure(const sprof_diff_table *t, uint64_t *const sum, uint64_t *const *runs, double *stat)
{
    if (t->replicated)
        return sprof_diff_runs_test(runs[0], t->run_n[0], t->nruns[0], runs[1], t->run_n[1], t->nruns[1], stat);
    return sprof_diff_ztest(sum[0], t->n[0], sum[1], t->n[1], stat);
}

/* Independent filtering: a measure whose pooled count is under 0.1 % of
 * all samples (or under 10) cannot reach significance, and testing it would
 * only make the false-discovery family larger (a real change in a method
 * at 40 % went unmarked because ~40 frames of a few samples each were in the
 * family). The same holds for a share within as little of 100 % (main, the
 * thread's start: what is not under them is the few samples with a cut
 * stack), so the rule applies to the samples outside the row too: on
 * knob.c's 3 %-slower trials the two ~99.99 % rows made the family 8 tests
 * instead of 6 and left 1 trial in 10 just over q 0.05. The pooled counts do
 * not depend on which side the samples are on, so leaving such measures out
 * keeps the FDR control valid. */
static int worth_testing(const sprof_diff_table *t, const uint64_t *x)
{
    uint64_t pooled = x[0] + x[1], all = t->n[0] + t->n[1];
    uint64_t rest = all > pooled ? all - pooled : 0;
    return pooled >= 10 && (double)pooled >= 0.001 * (double)all && rest >= 10 && (double)rest >= 0.001 * (double)all;
}

/* With replicates: the median run-to-run dispersion of every measure that
 * will be tested, in units of the binomial variance (how noisy the runs
 * are: shown to the user, not used by the tests). */
static int estimate_dispersion(sprof_diff_table *t)
{
    t->dispersion = NAN;
    if (!t->replicated)
        return 0;
    double *d = malloc((t->nrows ? 2 * t->nrows : 1) * sizeof *d);
    if (!d)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        const sprof_diff_row *r = &t->rows[i];
        if (worth_testing(t, r->self))
            d[m++] = sprof_diff_runs_dispersion(r->run_self[0], t->run_n[0], t->nruns[0], r->run_self[1],
                                                t->run_n[1], t->nruns[1]);
        if (worth_testing(t, r->total))
            d[m++] = sprof_diff_runs_dispersion(r->run_total[0], t->run_n[0], t->nruns[0], r->run_total[1],
                                                t->run_n[1], t->nruns[1]);
    }
    t->dispersion = sprof_diff_median_dispersion(d, m);
    free(d);
    return 0;
}

double sprof_diff_cpu_s(const sprof_diff_table *t, const uint64_t *run_ns, int side)
{
    double sum = 0;
    for (size_t i = 0; i < t->nruns[side]; i++)
        sum += (double)run_ns[i] / 1e9;
    return t->nruns[side] ? sum / (double)t->nruns[side] : 0;
}

/* Welch on a row's per-run CPU seconds, each side's own variance (as for
 * shares: timer samples are systematic, so a Poisson floor, w x seconds,
 * would be far wider than what deterministic runs show), at least one
 * sample's worth: w^2, w the mean weight (CPU) of a sample. */
static double test_cpu(const sprof_diff_table *t, uint64_t *const *run_ns, double *stat)
{
    double x[2][64], fl[2];
    for (int s = 0; s < 2; s++) {
        if (t->nruns[s] > 64)
            return NAN;
        uint64_t n = 0, ns = 0;
        for (size_t i = 0; i < t->nruns[s]; i++) {
            x[s][i] = (double)run_ns[s][i] / 1e9;
            n += t->run_n[s][i];
            ns += t->run_ns[s][i];
        }
        double w = n ? (double)ns / 1e9 / (double)n : 0;
        fl[s] = w * w;
    }
    return sprof_diff_values_test(x[0], t->nruns[0], fl[0], x[1], t->nruns[1], fl[1], stat);
}

/* The CPU columns: tested only with replicates on both sides and weights
 * in every run; a family of their own for the false-discovery correction. */
static int run_cpu_tests(sprof_diff_table *t)
{
    size_t n = t->nrows;
    for (size_t i = 0; i < n; i++) {
        sprof_diff_row *r = &t->rows[i];
        r->cpu_self_t = r->cpu_self_p = r->cpu_self_q = NAN;
        r->cpu_total_t = r->cpu_total_p = r->cpu_total_q = NAN;
        r->cpu_self_sig = r->cpu_total_sig = 0;
    }
    t->ncpu_tests = 0;
    if (!t->cpu_known || !t->replicated)
        return 0;
    double *p = malloc((n ? 2 * n : 1) * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = 0; i < n; i++) {
        sprof_diff_row *r = &t->rows[i];
        if (worth_testing(t, r->self)) {
            r->cpu_self_p = test_cpu(t, r->run_self_ns, &r->cpu_self_t);
            t->ncpu_tests += !isnan(r->cpu_self_p);
        }
        if (worth_testing(t, r->total)) {
            r->cpu_total_p = test_cpu(t, r->run_total_ns, &r->cpu_total_t);
            t->ncpu_tests += !isnan(r->cpu_total_p);
        }
        p[2 * i] = r->cpu_self_p;
        p[2 * i + 1] = r->cpu_total_p;
    }
    if (sprof_diff_bh_adjust(p, p, 2 * n) != 0) {
        free(p);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        sprof_diff_row *r = &t->rows[i];
        r->cpu_self_q = p[2 * i];
        r->cpu_total_q = p[2 * i + 1];
        r->cpu_self_sig = !isnan(r->cpu_self_q) && r->cpu_self_q < t->test.alpha;
        r->cpu_total_sig = !isnan(r->cpu_total_q) && r->cpu_total_q < t->test.alpha;
    }
    free(p);
    return 0;
}

static int significant(const sprof_diff_table *t, double q, double pp)
{
    if (isnan(q) || !(q < t->test.alpha))
        return 0;
    return t->replicated || fabs(pp) >= t->test.floor_pp;
}

/* Test every (row, self|total) worth testing, then BH across them all. */
static int run_tests(sprof_diff_table *t)
{
    size_t n = t->nrows;
    double *p = malloc((n ? 2 * n : 1) * sizeof *p);
    if (!p)
        return -1;
    t->ntests = 0;
    if (estimate_dispersion(t) != 0) {
        free(p);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        sprof_diff_row *r = &t->rows[i];
        r->self_z = r->self_p = r->self_q = NAN;
        r->total_z = r->total_p = r->total_q = NAN;
        if (worth_testing(t, r->self)) {
            r->self_p = test_measure(t, r->self, r->run_self, &r->self_z);
            t->ntests++;
        }
        if (worth_testing(t, r->total)) {
            r->total_p = test_measure(t, r->total, r->run_total, &r->total_z);
            t->ntests++;
        }
        p[2 * i] = r->self_p;
        p[2 * i + 1] = r->total_p;
    }
    if (sprof_diff_bh_adjust(p, p, 2 * n) != 0) {
        free(p);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        sprof_diff_row *r = &t->rows[i];
        r->self_q = p[2 * i];
        r->total_q = p[2 * i + 1];
        r->self_sig = significant(t, r->self_q, sprof_diff_self_pp(t, r));
        r->total_sig = significant(t, r->total_q, sprof_diff_total_pp(t, r));
    }
    free(p);
    return 0;
}

static int add_runs(builder *b, const sprof_profile *runs, size_t nruns, int side, int by_lines)
{
    for (size_t i = 0; i < nruns; i++)
        if (add_run(b, &runs[i], side, i, by_lines) != 0)
            return -1;
    return 0;
}

int sprof_diff_table_build(sprof_diff_table *t, const sprof_profile *before, size_t nbefore,
                           const sprof_profile *after, size_t nafter, int by_lines, const sprof_diff_test *test,
                           char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->test = *test;
    t->nruns[0] = nbefore;
    t->nruns[1] = nafter;
    t->replicated = nbefore >= 2 && nafter >= 2;
    builder b = { .t = t };
    int rc = 0;
    size_t k = nbefore + nafter;
    t->run_n[0] = calloc(2 * k + 1, sizeof(uint64_t)); /* counts, then CPU ns */
    if (t->run_n[0]) {
        t->run_n[1] = t->run_n[0] + nbefore;
        t->run_ns[0] = t->run_n[0] + k;
        t->run_ns[1] = t->run_ns[0] + nbefore;
    }
    if (t->run_n[0]) {
        /* CPU figures need the weights of traces; folded text has counts only */
        t->cpu_known = 1;
        for (size_t i = 0; i < nbefore; i++)
            t->cpu_known &= before[i].ntraces > 0 && before[i].mode == SPROF_MODE_CPU;
        for (size_t i = 0; i < nafter; i++)
            t->cpu_known &= after[i].ntraces > 0 && after[i].mode == SPROF_MODE_CPU;
    }
    if (!t->run_n[0] || add_runs(&b, before, nbefore, 0, by_lines) != 0 ||
        add_runs(&b, after, nafter, 1, by_lines) != 0 || run_tests(t) != 0 || run_cpu_tests(t) != 0) {
        snprintf(err, errlen, "sprof-diff: out of memory");
        rc = -1;
    }
    key_entry *e, *tmp;
    HASH_ITER(hh, b.index, e, tmp) {
        HASH_DEL(b.index, e);
        free(e);
    }
    free(b.stamp);
    if (rc != 0)
        sprof_diff_table_free(t);
    return rc;
}

void sprof_diff_table_free(sprof_diff_table *t)
{
    for (size_t i = 0; i < t->nrows; i++) {
        free(t->rows[i].key);
        free(t->rows[i].method);
        free(t->rows[i].run_self[0]);
    }
    free(t->rows);
    free(t->run_n[0]);
    memset(t, 0, sizeof *t);
}
