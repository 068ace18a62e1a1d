/* Aggregating the profile into top rows: per method, or per source line
 * (self: the leaf frame's line; cum: the line of every frame, once per
 * stack). */
#include "sprof/top.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct line_slot {
    char *key;        /* "line\tfile" */
    size_t row;
    UT_hash_handle hh;
} line_slot;

static int by_self(const void *a, const void *b)
{
    const sprof_top_row *x = a, *y = b;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    c = strcmp(x->file, y->file);
    return c ? c : (x->line < y->line ? -1 : x->line > y->line);
}

static int by_cum(const void *a, const void *b)
{
    const sprof_top_row *x = a, *y = b;
    if (x->cum != y->cum)
        return x->cum > y->cum ? -1 : 1;
    return by_self(a, b);
}

/* Row index of frame f's line, creating it; (size_t)-1 if the frame has no
 * line in a file the view shows, (size_t)-2 when out of memory. */
static size_t line_row(sprof_top *t, line_slot **table, const sprof_pframe *f, const char *method_name,
                       const sprof_top_options *o)
{
    if (!f->file[0] || f->line == 0 || (!o->all_files && !sprof_is_ruby_file(f->file)))
        return (size_t)-1;
    size_t klen = strlen(f->file) + 16;
    char *key = malloc(klen);
    if (!key)
        return (size_t)-2;
    snprintf(key, klen, "%u\t%s", f->line, f->file);
    line_slot *s = NULL;
    HASH_FIND_STR(*table, key, s);
    if (s) {
        free(key);
        return s->row;
    }
    s = calloc(1, sizeof *s);
    sprof_top_row *rows = realloc(t->rows, (t->nrows + 1) * sizeof *rows);
    if (!s || !rows) {
        free(s);
        free(key);
        if (rows)
            t->rows = rows;
        return (size_t)-2;
    }
    t->rows = rows;
    s->key = key;
    s->row = t->nrows++;
    t->rows[s->row] = (sprof_top_row){ method_name, f->file, f->line, 0, 0, f->cost, 0 };
    HASH_ADD_KEYPTR(hh, *table, s->key, strlen(s->key), s);
    return s->row;
}

int sprof_top_build(sprof_top *t, const sprof_profile *p, const sprof_top_options *o, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->weight_cpu = o->weight_cpu;
    t->lines = o->lines;
    t->nstacks = p->nstacks;
    if (sprof_methods_build(&t->methods, p, err, errlen) != 0)
        return -1;
    const sprof_methods *m = &t->methods;
    uint8_t *keep = calloc(p->nstacks ? p->nstacks : 1, 1);
    size_t *stamp = NULL;
    line_slot *table = NULL;
    int rc = -1;
    if (!keep)
        goto oom;
    if (sprof_methods_select(m, p, o->focus, o->ignore, keep, err, errlen) != 0)
        goto out;
    if (!o->lines) {
        t->rows = calloc(m->nmethods ? m->nmethods : 1, sizeof *t->rows);
        if (!t->rows)
            goto oom;
        for (size_t i = 0; i < m->nmethods; i++) {
            const sprof_method *mm = &m->methods[i];
            t->rows[i] = (sprof_top_row){ mm->name, mm->file, mm->def_line, 0, 0, mm->cost, mm->name_flags };
        }
        t->nrows = m->nmethods;
    }
    size_t nslots = o->lines ? 64 : (m->nmethods ? m->nmethods : 1);
    stamp = calloc(nslots, sizeof *stamp);
    if (!stamp)
        goto oom;
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        uint64_t w = sprof_pstack_weight(s, o->weight_cpu);
        t->profile_total += w;
        if (!keep[i])
            continue;
        t->selected += w;
        if (s->nframes == 0)
            continue;
        t->class_self[sprof_pstack_cost(p, s)] += w;
        for (uint32_t j = 0; j < s->nframes; j++) {
            uint32_t fi = s->frames[j];
            size_t row = m->of_frame[fi];
            if (o->lines) {
                row = line_row(t, &table, &p->frames[fi], m->methods[m->of_frame[fi]].name, o);
                if (row == (size_t)-2)
                    goto oom;
                if (row == (size_t)-1) {
                    if (j + 1 == s->nframes)
                        t->unlocated += w;
                    continue;
                }
                if (row >= nslots) {
                    size_t n2 = nslots;
                    while (n2 <= row)
                        n2 *= 2;
                    size_t *st = realloc(stamp, n2 * sizeof *st);
                    if (!st)
                        goto oom;
                    memset(st + nslots, 0, (n2 - nslots) * sizeof *st);
                    stamp = st;
                    nslots = n2;
                }
            }
            if (stamp[row] != i + 1) {
                stamp[row] = i + 1;
                t->rows[row].cum += w;
            }
            if (j + 1 == s->nframes)
                t->rows[row].self += w;
        }
    }
    t->total = o->relative ? t->selected : t->profile_total;
    /* Rows that no selected stack touched are not shown. */
    size_t n = 0;
    for (size_t i = 0; i < t->nrows; i++)
        if (t->rows[i].cum)
            t->rows[n++] = t->rows[i];
    t->nrows = n;
    if (t->nrows > 1) /* rows is NULL when nothing matched (--lines on a C-only program) */
        qsort(t->rows, t->nrows, sizeof *t->rows, o->by_cum ? by_cum : by_self);
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    {
        line_slot *s, *tmp;
        HASH_ITER(hh, table, s, tmp) {
            HASH_DEL(table, s);
            free(s->key);
            free(s);
        }
    }
    free(keep);
    free(stamp);
    if (rc != 0)
        sprof_top_free(t);
    return rc;
}

void sprof_top_free(sprof_top *t)
{
    sprof_methods_free(&t->methods);
    free(t->rows);
    memset(t, 0, sizeof *t);
}
