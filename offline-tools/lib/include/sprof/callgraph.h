/* The call graph view (pprof's graph, over Ruby methods): one node per
 * method with self and cumulative weight, edges weighted by the samples
 * that went through that call, then pruned for readability, written as
 * Graphviz DOT. A projection of sprof_profile; see docs/views.md. */
#ifndef SPROF_CALLGRAPH_H
#define SPROF_CALLGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/caveats.h"
#include "sprof/profile.h"
#include "sprof/view_methods.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_callgraph_options {
    int weight_cpu;         /* 1: CPU ns, 0: samples */
    double nodefraction;    /* drop nodes with cum < nodefraction * total (default 0.005) */
    double edgefraction;    /* drop edges with weight < edgefraction * total (default 0.001) */
    size_t nodecount;       /* keep at most this many nodes, highest cum first; 0 = no limit (default 80) */
    const char *focus;      /* ERE on method names, or NULL (see sprof_methods_select) */
    const char *ignore;     /* ERE, or NULL */
    int relative;           /* percentages of the focused total instead of the whole profile */
    const char *title;      /* legend's first line (e.g. the binary), may be NULL */
    const sprof_caveats *caveats; /* incomplete stacks / guessed names for the legend, or NULL */
} sprof_callgraph_options;

void sprof_callgraph_options_init(sprof_callgraph_options *o);

typedef struct sprof_cg_node {
    uint32_t method;  /* index into graph.methods */
    uint64_t self;    /* weight of stacks whose leaf is this method */
    uint64_t cum;     /* weight of stacks through this method (counted once per stack) */
} sprof_cg_node;

typedef struct sprof_cg_edge {
    uint32_t from, to; /* node indices (caller -> callee) */
    uint64_t weight;   /* weight of stacks with this call (counted once per stack) */
    int inlined;       /* every such call was to an inlined copy of the callee */
    int residual;      /* some stacks reached `to` through pruned nodes in between */
} sprof_cg_edge;

typedef struct sprof_callgraph {
    sprof_methods methods;
    sprof_cg_node *nodes;  /* kept nodes, sorted by cum desc */
    size_t nnodes;
    sprof_cg_edge *edges;  /* kept edges, sorted by weight desc */
    size_t nedges;
    uint64_t total;        /* denominator of every percentage */
    uint64_t profile_total;/* weight of the whole profile */
    uint64_t selected;     /* weight of the stacks focus/ignore kept */
    uint64_t shown_self;   /* sum of self over kept nodes */
    size_t all_nodes;      /* methods seen in selected stacks */
    size_t dropped_by_fraction, dropped_by_count, dropped_edges;
    uint64_t node_cutoff, edge_cutoff;
    int weight_cpu;
} sprof_callgraph;

/* 0, or -1 + err (bad regex, out of memory). */
int sprof_callgraph_build(sprof_callgraph *g, const sprof_profile *p, const sprof_callgraph_options *o,
                          char *err, size_t errlen);
void sprof_callgraph_free(sprof_callgraph *g);

/* Write g as Graphviz DOT. 0, or -1 on a write error. */
int sprof_callgraph_write_dot(const sprof_callgraph *g, const sprof_callgraph_options *o, FILE *out);

/* Render DOT text to SVG at `svg_path` by running Graphviz `dot` (found on
 * PATH; no shell). Written through a temp file + rename. 0, or -1 + err
 * (dot missing: a message saying to install graphviz). */
int sprof_dot_render_svg(const char *dot_text, size_t len, const char *svg_path, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
