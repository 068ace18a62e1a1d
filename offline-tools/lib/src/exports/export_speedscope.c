/* speedscope export: one "sampled" profile over shared frames.
 * A speedscope frame is a method (frames merged by display name, as in the
 * call graph): name, file and def line. Each distinct root-first method
 * sequence is one sample, weighted by its samples (unit "none") or its
 * CPU nanoseconds (unit "nanoseconds"); samples are sorted by their names,
 * root first, like folded output, so the time-order view reads like a
 * flame graph. */
#include "sprof/export.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "sprof/caveats.h"
#include "sprof/json_out.h"
#include "sprof/out_file.h"
#include "sprof/view_methods.h"

typedef struct seq_slot {
    uint32_t *ids;  /* method ids, root first (key) */
    uint32_t n;
    uint64_t weight;
    UT_hash_handle hh;
} seq_slot;

static const sprof_methods *g_methods; /* qsort context */

static int seq_cmp(const void *a, const void *b)
{
    const seq_slot *x = *(seq_slot *const *)a, *y = *(seq_slot *const *)b;
    for (uint32_t i = 0; i < x->n && i < y->n; i++) {
        if (x->ids[i] == y->ids[i])
            continue;
        int c = strcmp(g_methods->methods[x->ids[i]].name, g_methods->methods[y->ids[i]].name);
        if (c)
            return c;
        return x->ids[i] < y->ids[i] ? -1 : 1;
    }
    return x->n < y->n ? -1 : x->n > y->n;
}

static const char *default_name(const sprof_profile *p)
{
    if (!p->binary_path || !*p->binary_path)
        return "sprof";
    const char *slash = strrchr(p->binary_path, '/');
    return slash && slash[1] ? slash + 1 : p->binary_path;
}

/* The profile's name, with the short caveat (incomplete stacks, guessed
 * names) appended: speedscope shows it above the flame chart, and the
 * format has no other place for a note. */
static void profile_name(const sprof_profile *p, const sprof_export_options *o, char *buf, size_t buflen)
{
    const char *name = o->name ? o->name : default_name(p);
    sprof_caveats cv;
    sprof_caveats_of(p, &cv);
    char warn[256];
    if (sprof_caveats_short(&cv, warn, sizeof warn))
        snprintf(buf, buflen, "%s (%s)", name, warn);
    else
        snprintf(buf, buflen, "%s", name);
}

int sprof_write_speedscope(const sprof_profile *p, const sprof_export_options *o, FILE *out, char *err,
                           size_t errlen)
{
    sprof_methods m;
    if (sprof_methods_build(&m, p, err, errlen) != 0)
        return -1;
    seq_slot *table = NULL, **sorted = NULL;
    uint32_t *ids = NULL;
    uint32_t cap = 0;
    int rc = -1;
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        uint64_t w = sprof_pstack_weight(s, o->weight_cpu);
        if (!w || !s->nframes)
            continue;
        if (s->nframes > cap) {
            uint32_t *n = realloc(ids, s->nframes * sizeof *n);
            if (!n)
                goto oom;
            ids = n;
            cap = s->nframes;
        }
        for (uint32_t j = 0; j < s->nframes; j++)
            ids[j] = m.of_frame[s->frames[j]];
        seq_slot *q = NULL;
        HASH_FIND(hh, table, ids, s->nframes * sizeof *ids, q);
        if (!q) {
            q = calloc(1, sizeof *q);
            if (!q || !(q->ids = malloc(s->nframes * sizeof *ids))) {
                free(q);
                goto oom;
            }
            memcpy(q->ids, ids, s->nframes * sizeof *ids);
            q->n = s->nframes;
            HASH_ADD_KEYPTR(hh, table, q->ids, q->n * sizeof *q->ids, q);
        }
        q->weight += w;
    }
    size_t nseq = HASH_COUNT(table), k = 0;
    sorted = calloc(nseq ? nseq : 1, sizeof *sorted);
    if (!sorted)
        goto oom;
    uint64_t total = 0;
    for (seq_slot *q = table; q; q = q->hh.next) {
        sorted[k++] = q;
        total += q->weight;
    }
    g_methods = &m;
    qsort(sorted, nseq, sizeof *sorted, seq_cmp);

    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[", out);
    for (size_t i = 0; i < m.nmethods; i++) {
        const sprof_method *mm = &m.methods[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        sprof_json_string(out, mm->name);
        if (mm->file[0]) {
            fputs(",\"file\":", out);
            sprof_json_string(out, mm->file);
        }
        if (mm->def_line)
            fprintf(out, ",\"line\":%u", mm->def_line);
        fputc('}', out);
    }
    char pname[1024];
    profile_name(p, o, pname, sizeof pname);
    fputs("]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":", out);
    sprof_json_string(out, pname);
    fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\n\"samples\":[",
            o->weight_cpu ? "nanoseconds" : "none", (unsigned long long)total);
    for (size_t i = 0; i < nseq; i++) {
        fputs(i ? ",\n[" : "\n[", out);
        for (uint32_t j = 0; j < sorted[i]->n; j++)
            fprintf(out, j ? ",%u" : "%u", sorted[i]->ids[j]);
        fputc(']', out);
    }
    fputs("],\n\"weights\":[", out);
    for (size_t i = 0; i < nseq; i++)
        fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)sorted[i]->weight);
    fputs("]}],\n\"name\":", out);
    sprof_json_string(out, pname);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"sprof\"}\n", out);
    rc = ferror(out) ? -1 : 0;
    if (rc)
        snprintf(err, errlen, "write error");
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    {
        seq_slot *q, *tmp;
        HASH_ITER(hh, table, q, tmp) {
            HASH_DEL(table, q);
            free(q->ids);
            free(q);
        }
    }
    free(sorted);
    free(ids);
    sprof_methods_free(&m);
    return rc;
}

int sprof_export_speedscope(const sprof_profile *p, const sprof_export_options *o, const char *path, char *err,
                            size_t errlen)
{
    sprof_out_file f;
    if (sprof_out_open(&f, path, err, errlen) != 0)
        return -1;
    char why[256];
    if (sprof_write_speedscope(p, o, f.fp, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        sprof_out_abort(&f);
        return -1;
    }
    return sprof_out_commit(&f, err, errlen);
}
