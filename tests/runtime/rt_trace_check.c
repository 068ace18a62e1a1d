/* Checks a trace written by the runtime stub against what the test program
 * printed (tests/runtime/rt_prog.c). Uses the shared reader library.
 *   valid TRACE MIN_SAMPLES end|truncated|any [PID]
 *   rate TRACE PROGOUT HZ TOL_PCT          samples ≈ CPU × Hz
 *   shares TRACE PROGOUT TOL_PP COUNT_TOL_PP  each thread's weight share (what the
 *                                          profile shows) and sample-count share vs its CPU share
 *   depth TRACE MIN_FRAMES MIN_PCT         FP chains at least MIN_FRAMES deep
 *   cand TRACE PROGOUT leaf|libc MIN_PCT   leaf samples carry a candidate into a caller
 *   mech TRACE NAME                        the mechanism that ran */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/trace_reader.h"

#define MAXT 256

struct prog_out {
    uint32_t tid[MAXT];
    double cpu_ns[MAXT];
    int nt;
    uint64_t range_lo[16], range_hi[16];
    char range_name[16][32];
    int nr;
};

static int fail(const char *fmt, const char *a)
{
    fprintf(stderr, "FAIL: ");
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    return 1;
}

static void read_prog(const char *path, struct prog_out *p)
{
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    char line[512];
    while (fgets(line, sizeof line, f)) {
        unsigned tid;
        long long ns;
        char name[32];
        unsigned long long lo, hi;
        if (sscanf(line, "thread %u %lld", &tid, &ns) == 2 && p->nt < MAXT) {
            p->tid[p->nt] = tid;
            p->cpu_ns[p->nt++] = (double)ns;
        } else if (sscanf(line, "range %31s %llx %llx", name, &lo, &hi) == 3 && p->nr < 16) {
            snprintf(p->range_name[p->nr], sizeof p->range_name[p->nr], "%s", name);
            p->range_lo[p->nr] = lo;
            p->range_hi[p->nr++] = hi;
        }
    }
    fclose(f);
}

static sprof_trace *open_or_die(const char *path)
{
    char err[512];
    sprof_trace *t = sprof_trace_open(path, err, sizeof err);
    if (!t) {
        fprintf(stderr, "FAIL: %s\n", err);
        exit(1);
    }
    return t;
}

/* iterate samples; returns -1 on a malformed record */
typedef void (*sample_fn)(const sprof_trace_record *r, void *ctx);
static int each(sprof_trace *t, sample_fn fn, void *ctx)
{
    char err[512];
    sprof_trace_record r;
    int rc;
    while ((rc = sprof_trace_next(t, &r, err, sizeof err)) > 0) fn(&r, ctx);
    if (rc < 0) fprintf(stderr, "FAIL: %s\n", err);
    return rc;
}

struct counts {
    uint64_t samples, ends, have_info, pid, mech, hz, libc_lo[8], libc_hi[8];
    int nlibc;
    /* per_tid_n: samples as the format counts them (a PARTIAL, THREAD_TAIL
     * or KERNEL_TICK sample: its weight's share of a period, the fractions
     * carried in per_tid_frac) */
    uint64_t per_tid_n[MAXT], per_tid_w[MAXT], per_tid_frac[MAXT];
    uint32_t tids[MAXT];
    int ntids;
};

static void count_cb(const sprof_trace_record *r, void *ctx)
{
    struct counts *c = ctx;
    if (r->type == SPROF_REC_SAMPLE) {
        c->samples++;
        int i;
        for (i = 0; i < c->ntids && c->tids[i] != r->u.sample.tid; i++) {
        }
        if (i == c->ntids && c->ntids < MAXT) c->tids[c->ntids++] = r->u.sample.tid;
        if (i < MAXT) {
            uint32_t by_weight = SPROF_SAMPLE_PARTIAL | SPROF_SAMPLE_THREAD_TAIL | SPROF_SAMPLE_KERNEL_TICK;
            uint64_t period = c->hz ? 1000000000ull / c->hz : 0;
            if ((r->u.sample.flags & by_weight) && period) {
                uint64_t total = c->per_tid_frac[i] + r->u.sample.weight_ns;
                c->per_tid_n[i] += total / period;
                c->per_tid_frac[i] = total % period;
            } else {
                c->per_tid_n[i]++;
            }
            c->per_tid_w[i] += r->u.sample.weight_ns;
        }
    } else if (r->type == SPROF_REC_END) {
        c->ends++;
    } else if (r->type == SPROF_REC_INFO) {
        c->have_info = 1;
        c->pid = r->u.info.pid;
        c->mech = r->u.info.mechanism;
        c->hz = r->u.info.hz;
    } else if (r->type == SPROF_REC_MAPPING && strstr(r->u.mapping.path, "/libc.so") && c->nlibc < 8) {
        c->libc_lo[c->nlibc] = r->u.mapping.start;
        c->libc_hi[c->nlibc++] = r->u.mapping.end;
    }
}

static int load_counts(const char *path, struct counts *c)
{
    memset(c, 0, sizeof *c);
    sprof_trace *t = open_or_die(path);
    int rc = each(t, count_cb, c);
    int trunc = sprof_trace_truncated(t);
    sprof_trace_close(t);
    if (rc < 0) exit(1);
    return trunc;
}

struct depth_ctx {
    uint64_t n, deep;
    uint32_t min;
};
static void depth_cb(const sprof_trace_record *r, void *ctx)
{
    struct depth_ctx *d = ctx;
    if (r->type != SPROF_REC_SAMPLE) return;
    d->n++;
    if (r->u.sample.nframes >= d->min) d->deep++;
}

struct cand_ctx {
    const struct prog_out *p;
    const struct counts *c;
    int libc;
    uint64_t leaf_lo, leaf_hi;
    uint64_t in_leaf, found, in_chain;
};

static int in_callers(const struct prog_out *p, uint64_t v)
{
    for (int i = 0; i < p->nr; i++)
        if (!strncmp(p->range_name[i], "caller", 6) && v >= p->range_lo[i] && v < p->range_hi[i]) return 1;
    return 0;
}

static void cand_cb(const sprof_trace_record *r, void *ctx)
{
    struct cand_ctx *x = ctx;
    if (r->type != SPROF_REC_SAMPLE) return;
    const sprof_sample_view *s = &r->u.sample;
    int leaf = 0;
    if (x->libc) {
        for (int i = 0; i < x->c->nlibc; i++)
            if (s->pc >= x->c->libc_lo[i] && s->pc < x->c->libc_hi[i]) leaf = 1;
    } else {
        leaf = s->pc >= x->leaf_lo && s->pc < x->leaf_hi;
    }
    if (!leaf) return;
    x->in_leaf++;
    int found = 0;
    for (uint32_t i = 0; i < s->ncand; i++) {
        uint64_t v;
        memcpy(&v, &s->cand_val[i], 8);
        if (in_callers(x->p, v)) found = 1;
    }
    for (uint32_t i = 0; i < s->nframes; i++) {
        uint64_t v;
        memcpy(&v, &s->ret[i], 8);
        if (in_callers(x->p, v)) x->in_chain++;
    }
    x->found += (uint64_t)found;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: see the comment at the top of rt_trace_check.c\n");
        return 2;
    }
    const char *cmd = argv[1], *trace = argv[2];
    if (!strcmp(cmd, "valid") && argc >= 5) {
        struct counts c;
        int trunc = load_counts(trace, &c);
        printf("samples %" PRIu64 " end %" PRIu64 " truncated %d pid %" PRIu64 "\n", c.samples, c.ends, trunc, c.pid);
        if (!c.have_info) return fail("%s: no INFO record", trace);
        if (c.samples < strtoull(argv[3], NULL, 10)) return fail("%s: too few samples", trace);
        if (!strcmp(argv[4], "end") && (trunc || c.ends != 1)) return fail("%s: not closed with END", trace);
        if (!strcmp(argv[4], "truncated") && !trunc) return fail("%s: expected a cut (no END)", trace);
        if (argc >= 6 && c.pid != strtoull(argv[5], NULL, 10)) return fail("%s: INFO pid differs", trace);
        return 0;
    }
    if (!strcmp(cmd, "mech") && argc == 4) {
        struct counts c;
        load_counts(trace, &c);
        printf("mechanism %s\n", sprof_mechanism_name((uint32_t)c.mech));
        return strcmp(sprof_mechanism_name((uint32_t)c.mech), argv[3]) ? fail("mechanism is not %s", argv[3]) : 0;
    }
    if (!strcmp(cmd, "rate") && argc == 6) {
        struct prog_out p;
        read_prog(argv[3], &p);
        struct counts c;
        load_counts(trace, &c);
        double cpu = 0;
        uint64_t n = 0;
        for (int i = 0; i < p.nt; i++) {
            cpu += p.cpu_ns[i];
            for (int j = 0; j < c.ntids; j++)
                if (c.tids[j] == p.tid[i]) n += c.per_tid_n[j];
        }
        double expect = cpu / 1e9 * atof(argv[4]);
        double dev = expect > 0 ? 100.0 * ((double)n - expect) / expect : 100;
        printf("samples %" PRIu64 " expected %.0f (cpu %.3f s) deviation %.1f%%\n", n, expect, cpu / 1e9, dev);
        return dev < -atof(argv[5]) || dev > atof(argv[5]) ? fail("%s", "sample count off") : 0;
    }
    if (!strcmp(cmd, "shares") && argc == 6) {
        struct prog_out p;
        read_prog(argv[3], &p);
        struct counts c;
        load_counts(trace, &c);
        double cpu = 0;
        uint64_t n = 0;
        uint64_t nt[MAXT] = {0}, w = 0, wt[MAXT] = {0};
        for (int i = 0; i < p.nt; i++) {
            cpu += p.cpu_ns[i];
            for (int j = 0; j < c.ntids; j++)
                if (c.tids[j] == p.tid[i]) {
                    nt[i] = c.per_tid_n[j];
                    wt[i] = c.per_tid_w[j];
                }
            n += nt[i];
            w += wt[i];
        }
        int bad = 0;
        double tol = atof(argv[4]), ctol = atof(argv[5]);
        for (int i = 0; i < p.nt; i++) {
            double want = 100 * p.cpu_ns[i] / cpu, got = n ? 100.0 * (double)nt[i] / (double)n : 0;
            double gotw = w ? 100.0 * (double)wt[i] / (double)w : 0;
            printf("tid %u cpu share %.1f%% weight share %.1f%% sample share %.1f%% (%" PRIu64 " samples)\n",
                   p.tid[i], want, gotw, got, nt[i]);
            if (!nt[i] || gotw - want > tol || want - gotw > tol || got - want > ctol || want - got > ctol) bad = 1;
        }
        return bad ? fail("%s", "a thread's share is off or it has no samples") : 0;
    }
    if (!strcmp(cmd, "depth") && argc == 5) {
        struct depth_ctx d = {0, 0, (uint32_t)atoi(argv[3])};
        sprof_trace *t = open_or_die(trace);
        if (each(t, depth_cb, &d) < 0) return 1;
        sprof_trace_close(t);
        double pct = d.n ? 100.0 * (double)d.deep / (double)d.n : 0;
        printf("samples %" PRIu64 " with >= %u frames: %" PRIu64 " (%.1f%%)\n", d.n, d.min, d.deep, pct);
        return pct < atof(argv[4]) ? fail("%s", "chains too short") : 0;
    }
    if (!strcmp(cmd, "cand") && argc == 6) {
        struct prog_out p;
        read_prog(argv[3], &p);
        struct counts c;
        load_counts(trace, &c);
        struct cand_ctx x = {&p, &c, !strcmp(argv[4], "libc"), 0, 0, 0, 0, 0};
        for (int i = 0; i < p.nr; i++)
            if (!strcmp(p.range_name[i], "leaf")) {
                x.leaf_lo = p.range_lo[i];
                x.leaf_hi = p.range_hi[i];
            }
        if (!x.libc && !x.leaf_hi) return fail("%s", "no leaf range printed");
        sprof_trace *t = open_or_die(trace);
        if (each(t, cand_cb, &x) < 0) return 1;
        sprof_trace_close(t);
        double pct = x.in_leaf ? 100.0 * (double)x.found / (double)x.in_leaf : 0;
        printf("leaf samples %" PRIu64 ", with a caller return address among candidates %" PRIu64
               " (%.1f%%), caller in fp chain %" PRIu64 "\n",
               x.in_leaf, x.found, pct, x.in_chain);
        return x.in_leaf < 20 || pct < atof(argv[5]) ? fail("%s", "caller missing from candidates") : 0;
    }
    fprintf(stderr, "rt_trace_check: bad arguments\n");
    return 2;
}
