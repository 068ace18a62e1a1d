/* sprof-diff --folded: difffolded.pl-compatible "stack before after" lines,
 * stacks spelled with the same frame names as the folded writer, sorted,
 * so flamegraph.pl and inferno's differential modes read them. */
#include "sprof/diff.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct stack_entry {
    UT_hash_handle hh;
    uint64_t count[2];
    double exact[2]; /* the exact counts (fractional folded input) */
    char stack[];
} stack_entry;

static int add_side(stack_entry **index, const sprof_profile *p, int side, const sprof_fold_format *fmt,
                    uint64_t *total, double *exact_total)
{
    /* Spell each frame once. */
    char **names = calloc(p->nframes ? p->nframes : 1, sizeof *names);
    if (!names)
        return -1;
    int rc = 0;
    char buf[4096];
    for (size_t i = 0; i < p->nframes && rc == 0; i++) {
        names[i] = strdup(sprof_pframe_display(&p->frames[i], fmt, buf, sizeof buf));
        if (!names[i])
            rc = -1;
    }
    char *line = NULL;
    size_t cap = 0;
    for (size_t s = 0; s < p->nstacks && rc == 0; s++) {
        const sprof_pstack *st = &p->stacks[s];
        double exact = p->exact_counts && s < p->nexact ? p->exact_counts[s] : (double)st->samples;
        if (st->samples == 0 && exact == 0)
            continue;
        size_t len = 0;
        for (uint32_t k = 0; k < st->nframes; k++)
            if (st->frames[k] < p->nframes)
                len += strlen(names[st->frames[k]]) + 1;
        if (len + 1 > cap) {
            free(line);
            cap = 2 * (len + 1);
            line = malloc(cap);
            if (!line) {
                rc = -1;
                break;
            }
        }
        size_t o = 0;
        for (uint32_t k = 0; k < st->nframes; k++) {
            if (st->frames[k] >= p->nframes)
                continue;
            if (o)
                line[o++] = ';';
            size_t l = strlen(names[st->frames[k]]);
            memcpy(line + o, names[st->frames[k]], l);
            o += l;
        }
        line[o] = '\0';
        if (o == 0)
            continue; /* a stack with no frames cannot be written as a folded line */
        stack_entry *e;
        HASH_FIND(hh, *index, line, o, e);
        if (!e) {
            e = calloc(1, sizeof *e + o + 1);
            if (!e) {
                rc = -1;
                break;
            }
            memcpy(e->stack, line, o + 1);
            HASH_ADD_KEYPTR(hh, *index, e->stack, o, e);
        }
        e->count[side] += st->samples;
        e->exact[side] += exact;
        *total += st->samples;
        *exact_total += exact;
    }
    free(line);
    for (size_t i = 0; i < p->nframes; i++)
        free(names[i]);
    free(names);
    return rc;
}

static int by_stack(const void *a, const void *b)
{
    return strcmp((*(stack_entry *const *)a)->stack, (*(stack_entry *const *)b)->stack);
}

int sprof_diff_write_folded(const sprof_profile *before, const sprof_profile *after, int normalize,
                            const sprof_fold_format *fmt, FILE *out)
{
    stack_entry *index = NULL, *e, *tmp;
    uint64_t total[2] = { 0, 0 };
    double exact_total[2] = { 0, 0 };
    int rc = 0;
    if (add_side(&index, before, 0, fmt, &total[0], &exact_total[0]) != 0 ||
        add_side(&index, after, 1, fmt, &total[1], &exact_total[1]) != 0)
        rc = -1;
    /* fractional folded input on either side: its counts as they were */
    int exact = before->exact_counts || after->exact_counts;
    size_t n = HASH_COUNT(index), k = 0;
    stack_entry **sorted = rc == 0 ? malloc((n ? n : 1) * sizeof *sorted) : NULL;
    if (!sorted)
        rc = -1;
    if (rc == 0) {
        HASH_ITER(hh, index, e, tmp) sorted[k++] = e;
        qsort(sorted, n, sizeof *sorted, by_stack);
        for (k = 0; k < n && exact; k++) {
            double b = sorted[k]->exact[0];
            if (normalize && exact_total[0] != exact_total[1] && exact_total[0] > 0)
                b = b * exact_total[1] / exact_total[0];
            fprintf(out, "%s %.10g %.10g\n", sorted[k]->stack, b, sorted[k]->exact[1]);
        }
        for (k = 0; k < n && !exact; k++) {
            uint64_t b = sorted[k]->count[0];
            /* difffolded.pl -n: before * total_after / total_before, truncated */
            if (normalize && total[0] != total[1] && total[0] > 0)
                b = (uint64_t)((unsigned __int128)b * total[1] / total[0]);
            fprintf(out, "%s %llu %llu\n", sorted[k]->stack, (unsigned long long)b,
                    (unsigned long long)sorted[k]->count[1]);
        }
    }
    free(sorted);
    HASH_ITER(hh, index, e, tmp) {
        HASH_DEL(index, e);
        free(e);
    }
    if (rc == 0 && ferror(out))
        rc = -1;
    return rc;
}
