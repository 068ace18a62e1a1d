/* The flame graph's prefix tree: stacks merged frame by frame by display
 * name. Names are interned once; stacks are queued, then sorted by name
 * sequence and merged in one pass (sprof_flame_tree_finish), which needs
 * no per-node lookup and yields siblings in name order. */
#define _GNU_SOURCE /* qsort_r */
#include "sprof/flamegraph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct name_entry {
    UT_hash_handle hh;
    char name[]; /* key */
} name_entry;

/* A stack waiting for sprof_flame_tree_finish: names[first..first+n) in the pool. */
typedef struct pending {
    size_t first;
    uint32_t n;
    int baseline;
    uint64_t weight;
} pending;

struct sprof_flame_tree_internal {
    name_entry *names;
    const char **pool; /* interned names of all pending stacks, back to back */
    uint8_t *costs;    /* cost class of each pool entry */
    size_t npool, cappool;
    pending *stacks;
    size_t nstacks, capstacks;
};

static const char *intern(struct sprof_flame_tree_internal *in, const char *s)
{
    name_entry *e;
    size_t len = strlen(s);
    HASH_FIND(hh, in->names, s, len, e);
    if (e)
        return e->name;
    e = malloc(sizeof *e + len + 1);
    if (!e)
        return NULL;
    memcpy(e->name, s, len + 1);
    HASH_ADD_KEYPTR(hh, in->names, e->name, len, e);
    return e->name;
}

static uint32_t new_node(sprof_flame_tree *t, const char *name, uint32_t parent, uint8_t cost)
{
    if (t->nnodes == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        sprof_flame_node *n = realloc(t->nodes, cap * sizeof *n);
        if (!n)
            return SPROF_FLAME_NONE;
        t->nodes = n;
        t->cap = cap;
    }
    uint32_t id = (uint32_t)t->nnodes++;
    sprof_flame_node *n = &t->nodes[id];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->parent = parent;
    n->first_child = SPROF_FLAME_NONE;
    n->next_sibling = SPROF_FLAME_NONE;
    n->cost = cost;
    n->qvalue = NAN;
    if (parent != SPROF_FLAME_NONE)
        n->depth = t->nodes[parent].depth + 1;
    return id;
}

int sprof_flame_tree_init(sprof_flame_tree *t)
{
    memset(t, 0, sizeof *t);
    t->internal = calloc(1, sizeof *t->internal);
    if (!t->internal)
        return -1;
    const char *all = intern(t->internal, "all");
    if (!all || new_node(t, all, SPROF_FLAME_NONE, SPROF_COST_NATIVE) == SPROF_FLAME_NONE) {
        sprof_flame_tree_free(t);
        return -1;
    }
    return 0;
}

void sprof_flame_tree_free(sprof_flame_tree *t)
{
    if (t->internal) {
        name_entry *ne, *ntmp;
        HASH_ITER(hh, t->internal->names, ne, ntmp) {
            HASH_DEL(t->internal->names, ne);
            free(ne);
        }
        free(t->internal->pool);
        free(t->internal->costs);
        free(t->internal->stacks);
        free(t->internal);
    }
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

/* Saturating: hostile counts near 2^64 must not wrap and make a child
 * wider than its parent. */
static void add_weight(sprof_flame_node *n, uint64_t w, int baseline)
{
    uint64_t *v = baseline ? &n->before : &n->value;
    *v = *v > UINT64_MAX - w ? UINT64_MAX : *v + w;
}

/* Queue a stack whose names are already interned; the tree is built by
 * sprof_flame_tree_finish from all stacks sorted by name sequence, which
 * needs no per-node lookup: each stack shares a prefix with the path of
 * the one before it. */
static int add_interned(sprof_flame_tree *t, const char *const *names, const uint8_t *costs, uint32_t n,
                        uint64_t weight, int baseline)
{
    struct sprof_flame_tree_internal *in = t->internal;
    if (in->npool + n > in->cappool) {
        size_t cap = in->cappool ? in->cappool : 1024;
        while (cap < in->npool + n)
            cap *= 2;
        const char **pool = realloc(in->pool, cap * sizeof *pool);
        if (!pool)
            return -1;
        in->pool = pool;
        uint8_t *c = realloc(in->costs, cap);
        if (!c)
            return -1;
        in->costs = c;
        in->cappool = cap;
    }
    if (in->nstacks == in->capstacks) {
        size_t cap = in->capstacks ? in->capstacks * 2 : 256;
        pending *st = realloc(in->stacks, cap * sizeof *st);
        if (!st)
            return -1;
        in->stacks = st;
        in->capstacks = cap;
    }
    if (n > 0)
        memcpy(in->pool + in->npool, names, n * sizeof *names);
    for (uint32_t i = 0; i < n; i++)
        in->costs[in->npool + i] = costs ? costs[i] : SPROF_COST_NATIVE;
    in->stacks[in->nstacks++] = (pending){ in->npool, n, baseline, weight };
    in->npool += n;
    return 0;
}

int sprof_flame_tree_add_names(sprof_flame_tree *t, const char *const *names, const uint8_t *costs,
                               uint32_t n, uint64_t weight, int baseline)
{
    const char **interned = malloc((n ? n : 1) * sizeof *interned);
    if (!interned)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        interned[i] = intern(t->internal, names[i]);
        if (!interned[i]) {
            free(interned);
            return -1;
        }
    }
    int rc = add_interned(t, interned, costs, n, weight, baseline);
    free(interned);
    return rc;
}

int sprof_flame_tree_add_profile(sprof_flame_tree *t, const sprof_profile *p,
                                 const sprof_fold_format *fmt, int baseline)
{
    /* Name each distinct frame once. */
    const char **frame_names = malloc((p->nframes ? p->nframes : 1) * sizeof *frame_names);
    uint8_t *frame_costs = malloc(p->nframes ? p->nframes : 1);
    if (!frame_names || !frame_costs) {
        free(frame_names);
        free(frame_costs);
        return -1;
    }
    char buf[4096];
    int rc = 0;
    for (size_t i = 0; i < p->nframes && rc == 0; i++) {
        const char *d = sprof_pframe_display(&p->frames[i], fmt, buf, sizeof buf);
        frame_names[i] = intern(t->internal, d ? d : "?");
        frame_costs[i] = p->frames[i].cost;
        if (!frame_names[i])
            rc = -1;
    }
    const char **names = NULL;
    uint8_t *costs = NULL;
    uint32_t cap = 0;
    for (size_t s = 0; s < p->nstacks && rc == 0; s++) {
        const sprof_pstack *st = &p->stacks[s];
        uint64_t w = fmt && fmt->weight_cpu ? st->cpu_ns : st->samples;
        if (w == 0)
            continue;
        if (st->nframes > cap) {
            cap = st->nframes;
            free(names);
            free(costs);
            names = malloc(cap * sizeof *names);
            costs = malloc(cap);
            if (!names || !costs) {
                rc = -1;
                break;
            }
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < st->nframes; i++) {
            uint32_t f = st->frames[i];
            if (f >= p->nframes)
                continue;
            names[n] = frame_names[f];
            costs[n++] = frame_costs[f];
        }
        rc = add_interned(t, names, costs, n, w, baseline);
    }
    free(names);
    free(costs);
    free(frame_names);
    free(frame_costs);
    return rc;
}

/* Stacks in lexicographic order of their name sequences (strcmp per
 * frame; a prefix sorts first), so siblings come out in name order. */
static int by_names(const void *a, const void *b, void *arg)
{
    const struct sprof_flame_tree_internal *in = arg;
    const pending *x = a, *y = b;
    uint32_t n = x->n < y->n ? x->n : y->n;
    for (uint32_t i = 0; i < n; i++) {
        const char *p = in->pool[x->first + i], *q = in->pool[y->first + i];
        if (p != q) /* interned: equal names are the same pointer */
            return strcmp(p, q);
    }
    return (x->n > y->n) - (x->n < y->n);
}

int sprof_flame_tree_finish(sprof_flame_tree *t)
{
    struct sprof_flame_tree_internal *in = t->internal;
    int rc = 0;
    if (in->nstacks > 1)
        qsort_r(in->stacks, in->nstacks, sizeof *in->stacks, by_names, in);
    /* path[d] = node at depth d + 1 of the current path; last[] = last
     * child created under a node, to link siblings in creation order. */
    uint32_t *path = NULL, depth = 0, cap = 0;
    uint32_t *last = NULL;
    size_t caplast = 0;
    for (size_t s = 0; s < in->nstacks && rc == 0; s++) {
        const pending *st = &in->stacks[s];
        const char **names = in->pool + st->first;
        if (st->n > cap) {
            uint32_t *p = realloc(path, st->n * sizeof *p);
            if (!p) {
                rc = -1;
                break;
            }
            path = p;
            cap = st->n;
        }
        uint32_t k = 0;
        while (k < depth && k < st->n && t->nodes[path[k]].name == names[k])
            k++;
        depth = k;
        for (; depth < st->n; depth++) {
            uint32_t parent = depth ? path[depth - 1] : 0;
            uint32_t id = new_node(t, names[depth], parent, in->costs[st->first + depth]);
            if (id == SPROF_FLAME_NONE) {
                rc = -1;
                break;
            }
            if (t->nnodes > caplast) {
                size_t c = caplast ? caplast * 2 : 1024;
                uint32_t *l = realloc(last, c * sizeof *l);
                if (!l) {
                    rc = -1;
                    break;
                }
                last = l;
                caplast = c;
            }
            last[id] = SPROF_FLAME_NONE;
            if (t->nodes[parent].first_child == SPROF_FLAME_NONE)
                t->nodes[parent].first_child = id;
            else
                t->nodes[last[parent]].next_sibling = id;
            last[parent] = id;
            path[depth] = id;
        }
        if (rc != 0)
            break;
        add_weight(&t->nodes[0], st->weight, st->baseline);
        for (uint32_t i = 0; i < st->n; i++)
            add_weight(&t->nodes[path[i]], st->weight, st->baseline);
    }
    free(path);
    free(last);
    free(in->pool);
    free(in->costs);
    free(in->stacks);
    in->pool = NULL;
    in->costs = NULL;
    in->stacks = NULL;
    in->npool = in->cappool = in->nstacks = in->capstacks = 0;
    return rc;
}
