/* Building the call graph from the profile, pprof style:
 *   1. per method: self (leaf) and cum (once per stack, so recursion never
 *      pushes cum over the total);
 *   2. keep methods with cum >= nodefraction * total, then the nodecount
 *      highest by cum;
 *   3. edges between consecutive KEPT methods of each stack (a pruned
 *      method in between makes the edge "residual"), once per stack;
 *   4. drop edges lighter than edgefraction * total. */
#include "sprof/callgraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

void sprof_callgraph_options_init(sprof_callgraph_options *o)
{
    memset(o, 0, sizeof *o);
    o->nodefraction = 0.005;
    o->edgefraction = 0.001;
    o->nodecount = 80;
}

typedef struct edge_slot {
    uint64_t key; /* from << 32 | to */
    size_t stamp; /* last stack (1-based) that counted this edge */
    sprof_cg_edge e;
    UT_hash_handle hh;
} edge_slot;

typedef struct {
    const sprof_methods *m;
    const uint64_t *cum, *self;
} rank_ctx;
static rank_ctx g_rank; /* qsort has no context argument in C11 */

static int by_cum_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (g_rank.cum[x] != g_rank.cum[y])
        return g_rank.cum[x] > g_rank.cum[y] ? -1 : 1;
    if (g_rank.self[x] != g_rank.self[y])
        return g_rank.self[x] > g_rank.self[y] ? -1 : 1;
    return strcmp(g_rank.m->methods[x].name, g_rank.m->methods[y].name);
}

static int edge_by_weight_desc(const void *a, const void *b)
{
    const sprof_cg_edge *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : (x->to > y->to);
}

/* Cutoff = ceil(fraction * total) so "weight < cutoff" means below the fraction. */
static uint64_t cutoff_of(double fraction, uint64_t total)
{
    if (!(fraction > 0))
        return 0;
    double c = ceil(fraction * (double)total);
    return c >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)c;
}

int sprof_callgraph_build(sprof_callgraph *g, const sprof_profile *p, const sprof_callgraph_options *o,
                          char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->weight_cpu = o->weight_cpu;
    if (sprof_methods_build(&g->methods, p, err, errlen) != 0)
        return -1;
    const sprof_methods *m = &g->methods;
    size_t nm = m->nmethods ? m->nmethods : 1;
    uint8_t *keep = calloc(p->nstacks ? p->nstacks : 1, 1);
    uint64_t *cum = calloc(nm, sizeof *cum);
    uint64_t *self = calloc(nm, sizeof *self);
    size_t *stamp = calloc(nm, sizeof *stamp);
    uint32_t *order = calloc(nm, sizeof *order);
    int32_t *node_of = calloc(nm, sizeof *node_of);
    edge_slot *edges = NULL;
    int rc = -1;
    if (!keep || !cum || !self || !stamp || !order || !node_of)
        goto oom;
    if (sprof_methods_select(m, p, o->focus, o->ignore, keep, err, errlen) != 0)
        goto out;

    /* 1. self and cum per method. */
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        uint64_t w = sprof_pstack_weight(s, o->weight_cpu);
        g->profile_total += w;
        if (!keep[i])
            continue;
        g->selected += w;
        for (uint32_t j = 0; j < s->nframes; j++) {
            uint32_t id = m->of_frame[s->frames[j]];
            if (stamp[id] != i + 1) {
                stamp[id] = i + 1;
                cum[id] += w;
            }
        }
        if (s->nframes)
            self[m->of_frame[s->frames[s->nframes - 1]]] += w;
    }
    g->total = o->relative ? g->selected : g->profile_total;

    /* 2. node pruning. */
    g->node_cutoff = cutoff_of(o->nodefraction, g->total);
    size_t ncand = 0;
    for (size_t id = 0; id < m->nmethods; id++) {
        if (stamp[id] == 0)
            continue; /* not in any selected stack */
        g->all_nodes++;
        if (cum[id] < g->node_cutoff || cum[id] == 0) {
            g->dropped_by_fraction++;
            continue;
        }
        order[ncand++] = (uint32_t)id;
    }
    g_rank = (rank_ctx){ m, cum, self };
    qsort(order, ncand, sizeof *order, by_cum_desc);
    size_t nkeep = ncand;
    if (o->nodecount && nkeep > o->nodecount) {
        g->dropped_by_count = nkeep - o->nodecount;
        nkeep = o->nodecount;
    }
    g->nodes = calloc(nkeep ? nkeep : 1, sizeof *g->nodes);
    if (!g->nodes)
        goto oom;
    for (size_t id = 0; id < m->nmethods; id++)
        node_of[id] = -1;
    for (size_t k = 0; k < nkeep; k++) {
        uint32_t id = order[k];
        node_of[id] = (int32_t)k;
        g->nodes[k] = (sprof_cg_node){ id, self[id], cum[id] };
        g->shown_self += self[id];
    }
    g->nnodes = nkeep;

    /* 3. edges between consecutive kept methods, once per stack. */
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        if (!keep[i])
            continue;
        uint64_t w = sprof_pstack_weight(s, o->weight_cpu);
        int32_t prev = -1;
        int gap = 0;
        for (uint32_t j = 0; j < s->nframes; j++) {
            const sprof_pframe *f = &p->frames[s->frames[j]];
            int32_t node = node_of[m->of_frame[s->frames[j]]];
            if (node < 0) {
                gap = 1;
                continue;
            }
            if (prev >= 0) {
                uint64_t key = ((uint64_t)(uint32_t)prev << 32) | (uint32_t)node;
                edge_slot *e = NULL;
                HASH_FIND(hh, edges, &key, sizeof key, e);
                int inl = !gap && (f->flags & SPROF_FRAME_INLINED);
                if (!e) {
                    e = calloc(1, sizeof *e);
                    if (!e)
                        goto oom;
                    e->key = key;
                    e->e = (sprof_cg_edge){ (uint32_t)prev, (uint32_t)node, 0, inl, gap };
                    HASH_ADD(hh, edges, key, sizeof e->key, e);
                }
                if (e->stamp != i + 1) {
                    e->stamp = i + 1;
                    e->e.weight += w;
                }
                if (!inl)
                    e->e.inlined = 0;
                if (gap)
                    e->e.residual = 1;
            }
            prev = node;
            gap = 0;
        }
    }

    /* 4. edge pruning. */
    g->edge_cutoff = cutoff_of(o->edgefraction, g->total);
    size_t nedges = HASH_COUNT(edges);
    g->edges = calloc(nedges ? nedges : 1, sizeof *g->edges);
    if (!g->edges)
        goto oom;
    for (edge_slot *e = edges; e; e = e->hh.next) {
        if (e->e.weight < g->edge_cutoff || e->e.weight == 0)
            g->dropped_edges++;
        else
            g->edges[g->nedges++] = e->e;
    }
    qsort(g->edges, g->nedges, sizeof *g->edges, edge_by_weight_desc);
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    {
        edge_slot *e, *tmp;
        HASH_ITER(hh, edges, e, tmp) {
            HASH_DEL(edges, e);
            free(e);
        }
    }
    free(keep);
    free(cum);
    free(self);
    free(stamp);
    free(order);
    free(node_of);
    if (rc != 0)
        sprof_callgraph_free(g);
    return rc;
}

void sprof_callgraph_free(sprof_callgraph *g)
{
    sprof_methods_free(&g->methods);
    free(g->nodes);
    free(g->edges);
    memset(g, 0, sizeof *g);
}
