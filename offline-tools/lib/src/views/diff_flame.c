/* The differential flame tree: after's shape with before's counts on the
 * same paths, and a BH-adjusted z-test q-value on every drawn frame (set
 * to 1 where the change is under the floor). */
#include "sprof/diff.h"

#include <math.h>
#include <stdlib.h>

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
