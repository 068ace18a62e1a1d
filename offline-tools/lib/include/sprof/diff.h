/* Before/after comparison of two profiles joined by frame names (never by
 * address: the two sides may come from different builds).
 *
 * Significance: for every method (or .rb line) and for each of its self
 * and total counts, a two-sided two-proportion z-test on sample counts
 * (x_before of n_before vs x_after of n_after, pooled variance), then the
 * Benjamini-Hochberg step-up adjustment across every test in the table
 * (q-values: the false discovery rate at which the change would be
 * called significant). Tests whose count is 0 on both sides are not run
 * and are not part of the family. Samples are treated as independent
 * draws, which sampling profiles approximate; see docs/diff.md. */
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
    double self_z, self_p, self_q;    /* NaN when not tested */
    double total_z, total_p, total_q;
} sprof_diff_row;

typedef struct sprof_diff_table {
    sprof_diff_row *rows;
    size_t nrows;
    uint64_t n[2];      /* total samples before / after */
    size_t ntests;      /* size of the multiple-comparison family */
} sprof_diff_table;

/* Build the table (sample counts, not CPU time: the test needs counts).
 * by_lines: key by .rb file:line instead of method. 0, or -1 + err. */
int sprof_diff_table_build(sprof_diff_table *t, const sprof_profile *before, const sprof_profile *after,
                           int by_lines, char *err, size_t errlen);
void sprof_diff_table_free(sprof_diff_table *t);

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
 * share, BH-adjusted across all nodes present in after. 0, or -1. */
int sprof_diff_flame_tree(sprof_flame_tree *t, const sprof_profile *before, const sprof_profile *after,
                          const sprof_fold_format *fmt);

#ifdef __cplusplus
}
#endif
#endif
