/* Flame graphs: a prefix tree of frames merged by display name, rendered
 * as a self-contained interactive SVG (click to zoom, search with match
 * percentage, tooltips, legend), in the manner of flamegraph.pl.
 *
 * The same tree carries an optional baseline ("before") count per node so
 * sprof-diff can render a differential flame graph: widths from the main
 * ("after") profile, colour by the change of each frame's share. */
#ifndef SPROF_FLAMEGRAPH_H
#define SPROF_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPROF_FLAME_NONE UINT32_MAX

typedef struct sprof_flame_node {
    const char *name;      /* display name (owned by the tree) */
    uint32_t parent;       /* SPROF_FLAME_NONE for the root */
    uint32_t first_child;  /* children in name order */
    uint32_t next_sibling;
    uint32_t depth;        /* root ("all") is 0 */
    uint8_t cost;          /* enum sprof_cost of the first frame merged here */
    uint64_t value;        /* weight of this frame and everything above it (the width) */
    uint64_t before;       /* differential: the same path's weight in the baseline */
    double qvalue;         /* differential: corrected p-value of the change; NaN = not tested */
} sprof_flame_node;

typedef struct sprof_flame_tree {
    sprof_flame_node *nodes; /* nodes[0] is the root "all" */
    size_t nnodes;
    size_t cap;
    struct sprof_flame_tree_internal *internal; /* name pool, child index */
} sprof_flame_tree;

/* 0, or -1 when out of memory. */
int sprof_flame_tree_init(sprof_flame_tree *t);
void sprof_flame_tree_free(sprof_flame_tree *t);

/* Add every stack of p to the tree, frames named by
 * sprof_pframe_display(fmt) (fmt->weight_cpu chooses CPU ns or samples).
 * baseline = 0 adds to `value`, 1 adds to `before`. 0, or -1 (out of memory). */
int sprof_flame_tree_add_profile(sprof_flame_tree *t, const sprof_profile *p,
                                 const sprof_fold_format *fmt, int baseline);

/* Add one stack of already-named frames (root first). */
int sprof_flame_tree_add_names(sprof_flame_tree *t, const char *const *names, const uint8_t *costs,
                               uint32_t n, uint64_t weight, int baseline);

/* Build the tree from every stack added (merged by name, siblings in name
 * order, as flamegraph.pl orders them). Call once after the last add and
 * before reading nodes or rendering. 0, or -1 (out of memory). */
int sprof_flame_tree_finish(sprof_flame_tree *t);

typedef struct sprof_flame_options {
    const char *title;       /* NULL: "Flame Graph" / "Differential Flame Graph" */
    const char *subtitle;    /* NULL: none */
    const char *count_name;  /* NULL: "samples" */
    int width;               /* image width in px; <= 0: 1200 */
    int inverted;            /* icicle: root at the top */
    double minwidth;         /* hide frames narrower than this (px, or % of total when minwidth_pct) */
    int minwidth_pct;
    int differential;        /* colour by before/after change, tooltips with both */
    double alpha;            /* differential: q-value below which a change is significant (<= 0: 0.05) */
} sprof_flame_options;

/* Write the whole SVG. 0, or -1 if the stream failed. */
int sprof_flame_write_svg(const sprof_flame_tree *t, const sprof_flame_options *o, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
