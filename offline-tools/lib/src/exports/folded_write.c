/* Folded output: one line per distinct displayed stack, sorted bytewise,
 * "root;...;leaf N" with a single space and an integer count (the exact
 * counts of folded input that had fractional ones). Stacks that
 * differ only in what the format hides (lines, inline flags, threads
 * without --threads) are merged here. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/profile.h"

typedef struct folded_line {
    char *text;
    uint64_t count;
    double exact; /* the exact count when the profile has fractional ones */
} folded_line;

static int line_order(const void *a, const void *b)
{
    const folded_line *x = a, *y = b;
    return strcmp(x->text, y->text);
}

int sprof_profile_write_folded(const sprof_profile *p, FILE *out, const sprof_fold_format *fmt)
{
    static const sprof_fold_format plain;
    if (!fmt)
        fmt = &plain;
    int rc = -1;
    char **names = calloc(p->nframes ? p->nframes : 1, sizeof *names);
    size_t *lens = calloc(p->nframes ? p->nframes : 1, sizeof *lens);
    folded_line *lines = calloc(p->nstacks ? p->nstacks : 1, sizeof *lines);
    size_t nlines = 0;
    if (!names || !lens || !lines)
        goto out;
    char buf[4096];
    for (size_t i = 0; i < p->nframes; i++) {
        sprof_pframe_display(&p->frames[i], fmt, buf, sizeof buf);
        lens[i] = strlen(buf);
        if (!(names[i] = strdup(buf)))
            goto out;
    }
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        uint64_t count = fmt->weight_cpu ? s->cpu_ns : s->samples;
        double exact = p->exact_counts && i < p->nexact ? p->exact_counts[i] : (double)count;
        if ((count == 0 && exact == 0) || s->nframes == 0)
            continue;
        size_t len = 0;
        for (uint32_t j = 0; j < s->nframes; j++)
            len += lens[s->frames[j]] + 1;
        char *t = malloc(len);
        if (!t)
            goto out;
        size_t o = 0;
        for (uint32_t j = 0; j < s->nframes; j++) {
            if (j)
                t[o++] = ';';
            memcpy(t + o, names[s->frames[j]], lens[s->frames[j]]);
            o += lens[s->frames[j]];
        }
        t[o] = '\0';
        lines[nlines++] = (folded_line){ t, count, exact };
    }
    qsort(lines, nlines, sizeof *lines, line_order);
    size_t written = 0;
    for (size_t i = 0; i < nlines;) {
        uint64_t count = lines[i].count;
        double exact = lines[i].exact;
        size_t j = i + 1;
        while (j < nlines && strcmp(lines[j].text, lines[i].text) == 0) {
            exact += lines[j].exact;
            count += lines[j++].count;
        }
        if (p->exact_counts) /* fractional folded input: its counts as they were (docs/folded.md) */
            fprintf(out, "%s %.10g\n", lines[i].text, exact);
        else
            fprintf(out, "%s %" PRIu64 "\n", lines[i].text, count);
        written++;
        i = j;
    }
    rc = ferror(out) ? -1 : (int)written;
out:
    for (size_t i = 0; names && i < p->nframes; i++)
        free(names[i]);
    free(names);
    free(lens);
    for (size_t i = 0; i < nlines; i++)
        free(lines[i].text);
    free(lines);
    return rc;
}
