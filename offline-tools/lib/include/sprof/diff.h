/* Before/after comparison of profiles joined by frame names (never by
 * address: the two sides may come from different builds). Each side is
 * one or more runs (replicates) of the program.
 *
 * Significance, for every method (or .rb line) and for each of its self
 * and total shares (docs/diff.md "The test"):
 *  - 2 or more runs per side: Welch's t-test on the per-run shares (each
 *    side's own variance, at least one sample's worth);
 *  - 1 run on a side: run-to-run variance is unknown; the pooled
 *    two-proportion z-test on sample counts, and a change is significant
 *    only if it is also at least floor_pp percentage points.
 * Then the Benjamini-Hochberg step-up adjustment across every test in the
 * table (q-values). Tests whose count is 0 on both sides are not run and
 * are not part of the family. */
#ifndef SPROF_DIFF_H
#define SPROF_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/flamegraph.h"
#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Two-sided p-value of the pooled two-proportion z-test of x1/n1 against
 * x2/n2; *z (may be NULL) gets the signed statistic (positive: grew).
 * 1 when there is nothing to test (n1 or n2 is 0, or both shares are 0 or 1). */
double sprof_diff_ztest(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2, double *z);

/* Two-sided p-value of Welch's t-test of the per-run shares x0[i]/n0[i]
 * (k0 runs) against x1[i]/n1[i] (k1 runs), k0, k1 >= 2, each side with its
 * own sample variance, at least one sample's worth (1/n^2: identical
 * counts are not infinitely precise). *t (may be NULL) gets the signed
 * statistic (positive: grew). 1 when there is nothing to test. */
double sprof_diff_runs_test(const uint64_t *x0, const uint64_t *n0, size_t k0, const uint64_t *x1, const uint64_t *n1,
                            size_t k1, double *t);

/* One measure's run-to-run dispersion: its per-run shares' variance within
 * the sides (pooled) over the binomial variance of one run's share. A
 * diagnostic of how noisy the runs are: timer sampling is systematic, so a
 * deterministic program's shares vary less than binomially between runs
 * (knob.c: ~0.1-0.7); real run-to-run noise (the collector, the machine)
 * makes it larger (gcbench: 3-20). NaN when undefined (under 2 runs a
 * side, or a share of 0 or 1). */
double sprof_diff_runs_dispersion(const uint64_t *x0, const uint64_t *n0, size_t k0, const uint64_t *x1,
                                  const uint64_t *n1, size_t k1);

/* The median of d[0..n) ignoring NaN (d is reordered); 1 if all are NaN. */
double sprof_diff_median_dispersion(double *d, size_t n);

/* Welch's t-test on per-run values (CPU seconds of a method, say): each
 * side's sample variance raised to at least floor0/floor1. Two-sided p; 1
 * with fewer than 2 runs a side or nothing to test. */
double sprof_diff_values_test(const double *x0, size_t k0, double floor0, const double *x1, size_t k1,
                              double floor1, double *t);

/* Two-sided p-value of Student's t distribution with df degrees of freedom. */
double sprof_diff_t_pvalue(double t, double df);

/* Benjamini-Hochberg adjusted p-values (q-values) of p[0..n). NaN entries
 * are skipped (left NaN in q, not counted in the family). q may alias p. */
int sprof_diff_bh_adjust(const double *p, double *q, size_t n);

/* One method (or .rb line) of the table. Index 0 = before, 1 = after. */
typedef struct sprof_diff_row {
    char *key;          /* method display name, or "file:line" with --lines */
    char *method;       /* with --lines: the method the line is in (first seen); else == key */
    uint8_t cost;       /* enum sprof_cost of the first frame seen */
    uint64_t self[2];   /* samples with this as the leaf */
    uint64_t total[2];  /* samples with this anywhere on the stack (once per stack) */
    uint64_t *run_self[2], *run_total[2]; /* per run of each side (table.nruns[side] entries) */
    double self_z, self_p, self_q;    /* z (one run a side) or t (replicates); NaN when not tested */
    double total_z, total_p, total_q;
    int self_sig, total_sig;          /* q < alpha, and with one run a side also |change| >= floor_pp */
    /* CPU time (the samples' weights), per run of each side, in ns */
    uint64_t *run_self_ns[2], *run_total_ns[2];
    double cpu_self_t, cpu_self_p, cpu_self_q; /* Welch on per-run seconds; NaN when not tested */
    double cpu_total_t, cpu_total_p, cpu_total_q;
    int cpu_self_sig, cpu_total_sig;
} sprof_diff_row;

/* How a change is called significant. */
typedef struct sprof_diff_test {
    double alpha;       /* false discovery rate (BH) */
    double floor_pp;    /* with one run on a side: smallest change (pp) that may be significant */
} sprof_diff_test;

/* The default floor: A/A pairs of one run each (gcbench, 10 kHz, a busy
 * 2-core machine) moved some method's share by up to 8.9 pp (docs/diff.md),
 * so one run a side calls nothing under 10 pp. */
#define SPROF_DIFF_DEFAULT_FLOOR_PP 10.0

typedef struct sprof_diff_table {
    sprof_diff_row *rows;
    size_t nrows;
    uint64_t n[2];      /* total samples before / after */
    size_t nruns[2];    /* runs per side */
    uint64_t *run_n[2]; /* samples of each run */
    int replicated;     /* both sides have >= 2 runs: the runs test was used */
    double dispersion;  /* with replicates: median run-to-run dispersion of the tested measures (a diagnostic) */
    uint64_t *run_ns[2];      /* CPU (sample weights, ns) of each run */
    int cpu_known;            /* every run is a cpu-mode trace: its samples carry CPU weights */
    size_t ncpu_tests;        /* the CPU columns' own multiple-comparison family */
    sprof_diff_test test;
    size_t ntests;      /* size of the multiple-comparison family */
} sprof_diff_table;

/* Build the table from nbefore runs before and nafter runs after (sample
 * counts, not CPU time: the tests need counts). by_lines: key by .rb
 * file:line instead of method. 0, or -1 + err. */
int sprof_diff_table_build(sprof_diff_table *t, const sprof_profile *before, size_t nbefore,
                           const sprof_profile *after, size_t nafter, int by_lines, const sprof_diff_test *test,
                           char *err, size_t errlen);
void sprof_diff_table_free(sprof_diff_table *t);

/* Mean CPU seconds per run of one side: of the whole side (ns = t->run_ns[side])
 * or of a row (r->run_self_ns[side] / run_total_ns[side]). */
double sprof_diff_cpu_s(const sprof_diff_table *t, const uint64_t *run_ns, int side);

/* Percentage points of change of a row: after share - before share. */
double sprof_diff_self_pp(const sprof_diff_table *t, const sprof_diff_row *r);
double sprof_diff_total_pp(const sprof_diff_table *t, const sprof_diff_row *r);

/* difffolded-compatible text: "stack before after" per distinct stack
 * (frames by Ruby display name), sorted by stack. normalize: before counts
 * scaled to after's total as difffolded.pl -n does (truncated). 0, or -1. */
int sprof_diff_write_folded(const sprof_profile *before, const sprof_profile *after, int normalize,
                            const sprof_fold_format *fmt, FILE *out);

/* Build a differential flame tree (after's widths, before's counts in
 * `before`) and set every drawn node's q-value: z-test of its inclusive
 * share (summed runs), BH-adjusted across all nodes present in after; a
 * node whose change is under floor_pp gets q = 1 (the one-run rule of the
 * table; pass 0 for no floor). Not replicate-aware. 0, or -1. */
int sprof_diff_flame_tree(sprof_flame_tree *t, const sprof_profile *before, const sprof_profile *after,
                          const sprof_fold_format *fmt, double floor_pp);

/* The same with 2 or more runs on both sides (before/after: the summed
 * runs, which give the shape and widths): every drawn frame's q-value is
 * the table's runs test (Welch on per-run inclusive shares), BH-adjusted
 * across the drawn frames; no pp floor. 0, or -1. */
int sprof_diff_flame_tree_runs(sprof_flame_tree *t, const sprof_profile *before, const sprof_profile *after,
                               const sprof_profile *before_runs, size_t nbefore, const sprof_profile *after_runs,
                               size_t nafter, const sprof_fold_format *fmt);

#ifdef __cplusplus
}
#endif
#endif
