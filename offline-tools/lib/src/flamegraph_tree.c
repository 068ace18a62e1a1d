/* The flame graph's prefix tree: stacks merged frame by frame by display
 * name. Names are interned once, so a child is found by (parent, name
 * pointer) in one hash table. */
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

typedef struct child_key {
    const char *name; /* interned pointer */
    uint32_t parent;
    uint32_t pad;     /* zeroed: the key is hashed as bytes */
} child_key;

typedef struct child_entry {
    child_key key;
    uint32_t node;
    UT_hash_handle hh;
} child_entry;

struct sprof_flame_tree_internal {
    name_entry *names;
    child_entry *children;
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
    if (parent != SPROF_FLAME_NONE) {
        n->depth = t->nodes[parent].depth + 1;
        n->next_sibling = t->nodes[parent].first_child;
        t->nodes[parent].first_child = id;
    }
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
        child_entry *ce, *ctmp;
        HASH_ITER(hh, t->internal->children, ce, ctmp) {
            HASH_DEL(t->internal->children, ce);
            free(ce);
        }
        free(t->internal);
    }
    free(t->nodes);
    memset(t, 0, sizeof *t);
}

/* The child of `parent` named `name` (interned), created if missing. */
static uint32_t child_of(sprof_flame_tree *t, uint32_t parent, const char *name, uint8_t cost)
{
    child_key key;
    memset(&key, 0, sizeof key);
    key.name = name;
    key.parent = parent;
    child_entry *e;
    HASH_FIND(hh, t->internal->children, &key, sizeof key, e);
    if (e)
        return e->node;
    uint32_t id = new_node(t, name, parent, cost);
    if (id == SPROF_FLAME_NONE)
        return id;
    e = calloc(1, sizeof *e);
    if (!e)
        return SPROF_FLAME_NONE;
    e->key = key;
    e->node = id;
    HASH_ADD(hh, t->internal->children, key, sizeof key, e);
    return id;
}

static void add_weight(sprof_flame_node *n, uint64_t w, int baseline)
{
    if (baseline)
        n->before += w;
    else
        n->value += w;
}

/* Add a stack whose names are already interned. */
static int add_interned(sprof_flame_tree *t, const char *const *names, const uint8_t *costs, uint32_t n,
                        uint64_t weight, int baseline)
{
    uint32_t node = 0;
    add_weight(&t->nodes[0], weight, baseline);
    for (uint32_t i = 0; i < n; i++) {
        node = child_of(t, node, names[i], costs ? costs[i] : SPROF_COST_NATIVE);
        if (node == SPROF_FLAME_NONE)
            return -1;
        add_weight(&t->nodes[node], weight, baseline);
    }
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

static int by_name(const void *a, const void *b, void *arg)
{
    const sprof_flame_node *nodes = arg;
    return strcmp(nodes[*(const uint32_t *)a].name, nodes[*(const uint32_t *)b].name);
}

void sprof_flame_tree_finish(sprof_flame_tree *t)
{
    uint32_t *kids = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < t->nnodes; i++) {
        sprof_flame_node *n = &t->nodes[i];
        size_t k = 0;
        for (uint32_t c = n->first_child; c != SPROF_FLAME_NONE; c = t->nodes[c].next_sibling)
            k++;
        if (k < 2)
            continue;
        if (k > cap) {
            free(kids);
            cap = k;
            kids = malloc(cap * sizeof *kids);
            if (!kids)
                return; /* unsorted but still a valid tree */
        }
        k = 0;
        for (uint32_t c = n->first_child; c != SPROF_FLAME_NONE; c = t->nodes[c].next_sibling)
            kids[k++] = c;
        qsort_r(kids, k, sizeof *kids, by_name, t->nodes);
        n->first_child = kids[0];
        for (size_t j = 0; j + 1 < k; j++)
            t->nodes[kids[j]].next_sibling = kids[j + 1];
        t->nodes[kids[k - 1]].next_sibling = SPROF_FLAME_NONE;
    }
    free(kids);
}
