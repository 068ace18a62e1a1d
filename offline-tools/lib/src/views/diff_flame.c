/* The differential flame tree: after's shape with before's counts on the
 * same paths, and a BH-adjusted q-value on every drawn frame: a z-test on
 * the summed counts (set to 1 where the change is under the floor), or,
 * with replicate runs on both sides, the table's runs test on each frame's
 * per-run inclusive shares. */
#include "sprof/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sprof_diff_flame_tree(sprof_flame_tree *t, const sprof_profile *before, const sprof_profile *after,
                          const sprof_fold_format *fmt, double floor_pp)
{
    if (sprof_flame_tree_init(t) != 0)
        return -1;
    if (sprof_flame_tree_add_profile(t, after, fmt, 0) != 0 || sprof_flame_tree_add_profile(t, before, fmt, 1) != 0 ||
        sprof_flame_tree_finish(t) != 0) {
        sprof_flame_tree_free(t);
        return -1;
    }
    double *p = malloc((t->nnodes ? t->nnodes : 1) * sizeof *p);
    if (!p) {
        sprof_flame_tree_free(t);
        return -1;
    }
    uint64_t na = t->nodes[0].value, nb = t->nodes[0].before;
    /* The family: every frame drawn (present in after), root excluded. */
    p[0] = NAN;
    for (size_t i = 1; i < t->nnodes; i++) {
        const sprof_flame_node *n = &t->nodes[i];
        p[i] = n->value > 0 ? sprof_diff_ztest(n->before, nb, n->value, na, NULL) : NAN;
    }
    if (sprof_diff_bh_adjust(p, p, t->nnodes) != 0) {
        free(p);
        sprof_flame_tree_free(t);
        return -1;
    }
    for (size_t i = 0; i < t->nnodes; i++) {
        const sprof_flame_node *n = &t->nodes[i];
        double pp = (na ? 100.0 * (double)n->value / (double)na : 0) - (nb ? 100.0 * (double)n->before / (double)nb : 0);
        /* Under the floor: not significant (q 1), as in the table with one run a side. */
        t->nodes[i].qvalue = !isnan(p[i]) && fabs(pp) < floor_pp ? 1.0 : p[i];
    }
    free(p);
    return 0;
}

/* Add the weights of run tree r's node rn (and its subtree) to the per-run
 * counts of the matching nodes of the combined tree from cn down: children
 * of both are in name order, so one merge walk matches them. */
static void match_run(const sprof_flame_tree *c, uint32_t cn, const sprof_flame_tree *r, uint32_t rn, uint64_t *counts,
                      size_t stride, size_t run)
{
    counts[(size_t)cn * stride + run] += r->nodes[rn].value + r->nodes[rn].before;
    uint32_t a = c->nodes[cn].first_child, b = r->nodes[rn].first_child;
    while (a != SPROF_FLAME_NONE && b != SPROF_FLAME_NONE) {
        int cmp = strcmp(c->nodes[a].name, r->nodes[b].name);
        if (cmp == 0) {
            match_run(c, a, r, b, counts, stride, run);
            a = c->nodes[a].next_sibling;
            b = r->nodes[b].next_sibling;
        } else if (cmp < 0) {
            a = c->nodes[a].next_sibling;
        } else {
            b = r->nodes[b].next_sibling; /* a path only this run has, absent in after: not drawn */
        }
    }
}

int sprof_diff_flame_tree_runs(sprof_flame_tree *t, const sprof_profile *before, const sprof_profile *after,
                               const sprof_profile *before_runs, size_t nbefore, const sprof_profile *after_runs,
                               size_t nafter, const sprof_fold_format *fmt)
{
    if (nbefore < 2 || nafter < 2)
        return -1;
    if (sprof_flame_tree_init(t) != 0)
        return -1;
    if (sprof_flame_tree_add_profile(t, after, fmt, 0) != 0 || sprof_flame_tree_add_profile(t, before, fmt, 1) != 0 ||
        sprof_flame_tree_finish(t) != 0) {
        sprof_flame_tree_free(t);
        return -1;
    }
    size_t k = nbefore + nafter;
    uint64_t *counts = calloc(t->nnodes * k + 1, sizeof *counts);
    double *p = malloc((t->nnodes ? t->nnodes : 1) * sizeof *p);
    int rc = counts && p ? 0 : -1;
    for (size_t run = 0; rc == 0 && run < k; run++) {
        const sprof_profile *prof = run < nbefore ? &before_runs[run] : &after_runs[run - nbefore];
        sprof_flame_tree one;
        if (sprof_flame_tree_init(&one) != 0 || sprof_flame_tree_add_profile(&one, prof, fmt, 0) != 0 ||
            sprof_flame_tree_finish(&one) != 0) {
            rc = -1;
        } else {
            match_run(t, 0, &one, 0, counts, k, run);
        }
        sprof_flame_tree_free(&one);
    }
    if (rc == 0) {
        /* per run: frame count x of the run's total n (the root's count) */
        const uint64_t *n = counts; /* node 0: the root */
        p[0] = NAN;
        for (size_t i = 1; i < t->nnodes; i++) {
            const uint64_t *x = counts + i * k;
            p[i] = t->nodes[i].value > 0 ? sprof_diff_runs_test(x, n, nbefore, x + nbefore, n + nbefore, nafter, NULL)
                                         : NAN;
        }
        rc = sprof_diff_bh_adjust(p, p, t->nnodes);
    }
    for (size_t i = 0; rc == 0 && i < t->nnodes; i++)
        t->nodes[i].qvalue = p[i];
    free(counts);
    free(p);
    if (rc != 0)
        sprof_flame_tree_free(t);
    return rc;
}
