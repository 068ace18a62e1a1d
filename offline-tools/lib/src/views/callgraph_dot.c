/* Writing the call graph as Graphviz DOT, in the manner of pprof: a legend
 * box, boxes labelled "name / file:line / self (self%) / of cum (cum%)",
 * colored by cost class and sized by self, edges labelled with their
 * weight, thicker when heavier, dashed when the callee was inlined,
 * dotted when pruned nodes were skipped. */
#include "sprof/callgraph.h"

#include <math.h>
#include <string.h>

#include "sprof/caveats.h"
#include "sprof/json_out.h"

/* Bytes safe inside a double-quoted DOT string: quotes and backslashes
 * escaped, control characters as spaces, invalid UTF-8 as '?'. */
static void dot_escaped(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        if (*s == '"' || *s == '\\') {
            putc('\\', out);
            putc(*s++, out);
        } else if (*s < 0x20 || *s == 0x7f) {
            putc(' ', out);
            s++;
        } else {
            int n = sprof_utf8_seq_len(s);
            if (n == 0) {
                putc('?', out);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, out);
                s += n;
            }
        }
    }
}

/* Saturated color per cost class (user blue, runtime grey, gc red, native
 * yellow, kernel orange). */
static const unsigned char class_rgb[SPROF_COST_COUNT][3] = {
    [SPROF_COST_USER] = { 0x3b, 0x7d, 0xd8 },
    [SPROF_COST_RUNTIME] = { 0x9a, 0x9a, 0x9a },
    [SPROF_COST_GC] = { 0xe0, 0x3c, 0x31 },
    [SPROF_COST_NATIVE] = { 0xe6, 0xb8, 0x20 },
    [SPROF_COST_KERNEL] = { 0xf0, 0x78, 0x00 },
};

static void class_color(FILE *out, unsigned cost, double t)
{
    if (cost >= SPROF_COST_COUNT)
        cost = SPROF_COST_NATIVE;
    unsigned char c[3];
    for (int k = 0; k < 3; k++)
        c[k] = (unsigned char)lround(255.0 + (class_rgb[cost][k] - 255.0) * t);
    fprintf(out, "#%02x%02x%02x", c[0], c[1], c[2]);
}

static void class_border(FILE *out, unsigned cost)
{
    if (cost >= SPROF_COST_COUNT)
        cost = SPROF_COST_NATIVE;
    fprintf(out, "#%02x%02x%02x", class_rgb[cost][0] * 3 / 5, class_rgb[cost][1] * 3 / 5,
            class_rgb[cost][2] * 3 / 5);
}

static void write_legend(const sprof_callgraph *g, const sprof_callgraph_options *o, FILE *out)
{
    char a[32], b[32];
    const char *unit = g->weight_cpu ? "CPU time" : "samples";
    fputs(" subgraph cluster_L { \"legend\" [shape=box fontsize=16 label=\"", out);
    if (o->title && *o->title) {
        fputs("File: ", out);
        dot_escaped(out, o->title);
        fputs("\\l", out);
    }
    fprintf(out, "Type: %s\\l", unit);
    if (o->focus) {
        fputs("Focus: ", out);
        dot_escaped(out, o->focus);
        fputs("\\l", out);
    }
    if (o->ignore) {
        fputs("Ignore: ", out);
        dot_escaped(out, o->ignore);
        fputs("\\l", out);
    }
    fprintf(out, "Showing nodes accounting for %s, %.2f%% of %s total\\l",
            sprof_format_weight(g->shown_self, g->weight_cpu, a, sizeof a),
            sprof_percent(g->shown_self, g->total), sprof_format_weight(g->total, g->weight_cpu, b, sizeof b));
    if (g->dropped_by_fraction)
        fprintf(out, "Dropped %zu nodes (cum < %s)\\l", g->dropped_by_fraction,
                sprof_format_weight(g->node_cutoff, g->weight_cpu, a, sizeof a));
    if (g->dropped_edges)
        fprintf(out, "Dropped %zu edges (weight < %s)\\l", g->dropped_edges,
                sprof_format_weight(g->edge_cutoff, g->weight_cpu, a, sizeof a));
    if (g->dropped_by_count)
        fprintf(out, "Showing top %zu nodes out of %zu\\l", g->nnodes, g->all_nodes);
    char text[256];
    if (o->caveats && sprof_caveats_short(o->caveats, text, sizeof text)) {
        text[0] = 'W'; /* "Warning: ...", a line of its own */
        dot_escaped(out, text);
        fputs("\\l", out);
    }
    fputs("Colors: user blue, runtime grey, gc red, native yellow, kernel orange\\l\" tooltip=\"sprof call graph\"] }\n", out);
}

int sprof_callgraph_write_dot(const sprof_callgraph *g, const sprof_callgraph_options *o, FILE *out)
{
    char a[32], b[32];
    uint64_t max_self = 0, max_edge = 0;
    for (size_t k = 0; k < g->nnodes; k++)
        if (g->nodes[k].self > max_self)
            max_self = g->nodes[k].self;
    for (size_t k = 0; k < g->nedges; k++)
        if (g->edges[k].weight > max_edge)
            max_edge = g->edges[k].weight;

    fputs("digraph \"sprof\" {\n node [style=filled fillcolor=\"#f8f8f8\" fontname=\"Helvetica\"]\n", out);
    write_legend(g, o, out);
    for (size_t k = 0; k < g->nnodes; k++) {
        const sprof_cg_node *n = &g->nodes[k];
        const sprof_method *m = &g->methods.methods[n->method];
        double self_share = max_self ? (double)n->self / (double)max_self : 0;
        double cum_share = g->total ? (double)n->cum / (double)g->total : 0;
        int fontsize = 8 + (int)ceil(24.0 * sqrt(self_share));
        fprintf(out, " N%zu [label=\"", k + 1);
        dot_escaped(out, m->name);
        if (m->file[0]) {
            fputs("\\n", out);
            dot_escaped(out, m->file);
            if (m->def_line)
                fprintf(out, ":%u", m->def_line);
        }
        fprintf(out, "\\n%s (%.2f%%)\\nof %s (%.2f%%)\" id=\"node%zu\" fontsize=%d shape=box tooltip=\"",
                sprof_format_weight(n->self, g->weight_cpu, a, sizeof a), sprof_percent(n->self, g->total),
                sprof_format_weight(n->cum, g->weight_cpu, b, sizeof b), sprof_percent(n->cum, g->total),
                k + 1, fontsize);
        dot_escaped(out, m->name);
        fprintf(out, " (%s, %s)\" color=\"", sprof_cost_name((enum sprof_cost)m->cost), b);
        class_border(out, m->cost);
        fputs("\" fillcolor=\"", out);
        class_color(out, m->cost, 0.15 + 0.75 * sqrt(cum_share));
        fputs("\"]\n", out);
    }
    for (size_t k = 0; k < g->nedges; k++) {
        const sprof_cg_edge *e = &g->edges[k];
        double share = g->total ? (double)e->weight / (double)g->total : 0;
        double rel = max_edge ? (double)e->weight / (double)max_edge : 0;
        unsigned grey = (unsigned)lround(0xb0 * (1.0 - rel));
        fprintf(out, " N%u -> N%u [label=\" %s%s\" weight=%d penwidth=%.2f color=\"#%02x%02x%02x\"",
                e->from + 1, e->to + 1, sprof_format_weight(e->weight, g->weight_cpu, a, sizeof a),
                e->inlined ? " (inline)" : "", 1 + (int)lround(100.0 * share), 1.0 + 5.0 * share, grey,
                grey, grey);
        if (e->inlined)
            fputs(" style=\"dashed\"", out);
        else if (e->residual)
            fputs(" style=\"dotted\"", out);
        fputs(" tooltip=\"", out);
        dot_escaped(out, g->methods.methods[g->nodes[e->from].method].name);
        fputs(" -> ", out);
        dot_escaped(out, g->methods.methods[g->nodes[e->to].method].name);
        fprintf(out, " (%s)\"]\n", a);
    }
    fputs("}\n", out);
    return ferror(out) ? -1 : 0;
}
