/* speedscope export: "sampled" profiles over shared frames.
 * A speedscope frame is a method (frames merged by display name, as in the
 * call graph): name, file and def line.
 * From traces (the profile's timeline): one profile per thread, named
 * "NAME TID", its samples in time order with their real weights (CPU
 * nanoseconds, wall in wall mode; 1 each with --weight=samples), runs of
 * one stack merged, starting where the thread's first sample is in the
 * program's time: speedscope's Time Order view is each thread's timeline.
 * Otherwise (folded or perf script input, no times): one profile where each
 * distinct root-first method sequence is one sample, sorted by name like
 * folded output. */
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

typedef struct tl_ref {
    uint32_t thread; /* index into p->threads */
    uint64_t time_ns;
    size_t index; /* into p->timeline: ties keep file order */
} tl_ref;

static int tl_cmp(const void *a, const void *b)
{
    const tl_ref *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void write_frames(FILE *out, const sprof_methods *m)
{
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n\"shared\":{\"frames\":[", out);
    for (size_t i = 0; i < m->nmethods; i++) {
        const sprof_method *mm = &m->methods[i];
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
    fputs("]},\n\"profiles\":[", out);
}

/* A stack as method ids, root first, with the recursion of one method kept. */
static void write_stack(FILE *out, const sprof_profile *p, const sprof_methods *m, uint32_t stack)
{
    const sprof_pstack *s = &p->stacks[stack];
    fputc('[', out);
    for (uint32_t j = 0; j < s->nframes; j++)
        fprintf(out, j ? ",%u" : "%u", m->of_frame[s->frames[j]]);
    fputc(']', out);
}

typedef struct tid_slot {
    uint32_t tid, thread;
    UT_hash_handle hh;
} tid_slot;

/* One sampled profile per thread, in time order (see the top). */
static int write_thread_profiles(FILE *out, const sprof_profile *p, const sprof_export_options *o,
                                 const sprof_methods *m, size_t *heaviest)
{
    uint64_t most = 0;
    *heaviest = 0;
    tl_ref *all = malloc((p->ntimeline ? p->ntimeline : 1) * sizeof *all);
    tid_slot *slots = calloc(p->nthreads ? p->nthreads : 1, sizeof *slots), *index = NULL, *f;
    if (!all || !slots) {
        free(all);
        free(slots);
        return -1;
    }
    for (size_t k = 0; k < p->nthreads; k++) {
        slots[k] = (tid_slot){ .tid = p->threads[k].tid, .thread = (uint32_t)k };
        HASH_ADD(hh, index, tid, sizeof slots[k].tid, &slots[k]);
    }
    uint64_t t0 = UINT64_MAX;
    size_t nall = 0;
    for (size_t i = 0; i < p->ntimeline; i++) {
        const sprof_timeline_sample *e = &p->timeline[i];
        if (e->time_ns < t0)
            t0 = e->time_ns;
        HASH_FIND(hh, index, &e->tid, sizeof e->tid, f);
        if (f && p->stacks[e->stack].nframes)
            all[nall++] = (tl_ref){ f->thread, e->time_ns, i };
    }
    HASH_CLEAR(hh, index);
    free(slots);
    qsort(all, nall, sizeof *all, tl_cmp);
    const char *unit = o->weight_cpu ? "nanoseconds" : "none";
    size_t nprof = 0;
    for (size_t from = 0; from < nall;) {
        size_t k = all[from].thread, n = 0;
        while (from + n < nall && all[from + n].thread == k)
            n++;
        const tl_ref *refs = all + from;
        from += n;
        uint32_t tid = p->threads[k].tid;
        /* the weights first: the header needs their sum */
        uint64_t total = 0;
        for (size_t i = 0; i < n; i++) {
            const sprof_timeline_sample *e = &p->timeline[refs[i].index];
            total += o->weight_cpu ? e->weight_ns : e->count;
        }
        char name[64];
        if (p->threads[k].name[0])
            snprintf(name, sizeof name, "%s %u", p->threads[k].name, tid);
        else
            snprintf(name, sizeof name, "%u", tid);
        uint64_t start = o->weight_cpu ? refs[0].time_ns - t0 : 0;
        if (total > most) {
            most = total;
            *heaviest = nprof;
        }
        fputs(nprof++ ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", out);
        sprof_json_string(out, name);
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":%llu,\"endValue\":%llu,\n\"samples\":[", unit,
                (unsigned long long)start, (unsigned long long)(start + total));
        /* runs of one stack are one sample: the same timeline, a smaller file */
        size_t runs = 0;
        for (size_t i = 0; i < n;) {
            uint32_t st = p->timeline[refs[i].index].stack;
            size_t j = i + 1;
            while (j < n && p->timeline[refs[j].index].stack == st)
                j++;
            if (runs++)
                fputc(',', out);
            write_stack(out, p, m, st);
            i = j;
        }
        fputs("],\n\"weights\":[", out);
        runs = 0;
        for (size_t i = 0; i < n;) {
            uint32_t st = p->timeline[refs[i].index].stack;
            uint64_t w = 0;
            size_t j = i;
            for (; j < n && p->timeline[refs[j].index].stack == st; j++)
                w += o->weight_cpu ? p->timeline[refs[j].index].weight_ns : p->timeline[refs[j].index].count;
            fprintf(out, runs++ ? ",%llu" : "%llu", (unsigned long long)w);
            i = j;
        }
        fputs("]}", out);
    }
    free(all);
    return 0;
}

int sprof_write_speedscope(const sprof_profile *p, const sprof_export_options *o, FILE *out, char *err,
                           size_t errlen)
{
    if (p->ntimeline && p->nthreads) {
        sprof_methods m;
        if (sprof_methods_build(&m, p, err, errlen) != 0)
            return -1;
        write_frames(out, &m);
        size_t heaviest;
        int rc = write_thread_profiles(out, p, o, &m, &heaviest);
        char pname[1024];
        profile_name(p, o, pname, sizeof pname);
        fputs("],\n\"name\":", out);
        sprof_json_string(out, pname);
        /* shown first: the thread that carries the most */
        fprintf(out, ",\"activeProfileIndex\":%zu,\"exporter\":\"sprof\"}\n", heaviest);
        sprof_methods_free(&m);
        if (rc != 0 || ferror(out)) {
            snprintf(err, errlen, rc != 0 ? "out of memory" : "write error");
            return -1;
        }
        return 0;
    }
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

    write_frames(out, &m);
    char pname[1024];
    profile_name(p, o, pname, sizeof pname);
    fputs("{\"type\":\"sampled\",\"name\":", out);
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
