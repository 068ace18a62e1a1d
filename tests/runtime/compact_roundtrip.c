/* The runtime's format 2.0 writer (runtime-stub/src/output/stack_table.c) against
 * the offline reader: samples go in as the rings carry them (SAMPLE
 * records) and must come out of the file exactly, every field, in order.
 * Inputs: every sample of the traces given on the command line (real
 * runs: tests/fuzz/corpus/trace, format 1 and 2), then synthetic ones
 * that reach what those may not: several threads interleaved, stacks that
 * keep a parent's outer frames at a lower sp, an alternate-stack sample
 * (a second candidate segment, never shared), frame offsets not known,
 * and 30,000 distinct stacks (past the table's 3/4: STACK_RESET). Also:
 * the bytes per sample stay under the issue-20 bound on the real ones.
 *
 * Usage: compact_roundtrip TRACE... */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"
#include "sprof/trace_reader.h"

struct sprof_globals g_sprof;

static uint8_t *file;
static size_t file_len, file_cap;

static void out(const void *p, size_t n)
{
    if (file_len + n > file_cap) {
        file_cap = (file_len + n) * 2;
        file = realloc(file, file_cap);
        if (!file) {
            perror("realloc");
            exit(1);
        }
    }
    memcpy(file + file_len, p, n);
    file_len += n;
}

/* what writer.c does with a record as it is */
void sprof_out_raw(const void *rec, uint32_t len) { out(rec, len); }

static struct sprof_rec_sample **in;
static size_t nin, capin;

/* a SAMPLE record of the view, kept and handed to the writer */
static void feed(const sprof_sample_view *v)
{
    size_t size = sizeof(struct sprof_rec_sample) + 8 * (size_t)v->nframes + ((4 * (size_t)v->nframes + 7) & ~7ul) +
                  ((4 * (size_t)v->ncand + 7) & ~7ul) + 8 * (size_t)v->ncand;
    struct sprof_rec_sample *r = calloc(1, size);
    if (!r) exit(1);
    r->h.type = SPROF_REC_SAMPLE;
    r->h.size = (uint32_t)size;
    r->tid = v->tid;
    r->flags = v->flags;
    r->nframes = (uint16_t)v->nframes;
    r->ncand = (uint16_t)v->ncand;
    r->fp0_off = v->fp0_off;
    r->time_ns = v->time_ns;
    r->weight_ns = v->weight_ns;
    r->pc = v->pc;
    r->sp = v->sp;
    r->fp = v->fp;
    uint8_t *q = (uint8_t *)(r + 1);
    memcpy(q, v->ret, 8 * (size_t)v->nframes);
    q += 8 * (size_t)v->nframes;
    memcpy(q, v->fpoff, 4 * (size_t)v->nframes);
    q += (4 * (size_t)v->nframes + 7) & ~7ul;
    memcpy(q, v->cand_off, 4 * (size_t)v->ncand);
    q += (4 * (size_t)v->ncand + 7) & ~7ul;
    memcpy(q, v->cand_val, 8 * (size_t)v->ncand);
    if (nin == capin) {
        capin = capin ? capin * 2 : 1024;
        in = realloc(in, capin * sizeof *in);
        if (!in) exit(1);
    }
    in[nin++] = r;
    sprof_compact_add(r);
}

static int same(const sprof_sample_view *v, const struct sprof_rec_sample *r)
{
    const uint8_t *q = (const uint8_t *)(r + 1);
    if (v->tid != r->tid || v->flags != r->flags || v->time_ns != r->time_ns || v->weight_ns != r->weight_ns ||
        v->pc != r->pc || v->sp != r->sp || v->fp != r->fp || v->fp0_off != r->fp0_off || v->nframes != r->nframes ||
        v->ncand != r->ncand)
        return 0;
    if (memcmp(v->ret, q, 8 * (size_t)r->nframes)) return 0;
    q += 8 * (size_t)r->nframes;
    if (memcmp(v->fpoff, q, 4 * (size_t)r->nframes)) return 0;
    q += (4 * (size_t)r->nframes + 7) & ~7ul;
    if (memcmp(v->cand_off, q, 4 * (size_t)r->ncand)) return 0;
    q += (4 * (size_t)r->ncand + 7) & ~7ul;
    return memcmp(v->cand_val, q, 8 * (size_t)r->ncand) == 0;
}

static void synthetic(void)
{
    uint64_t ret[8], val[8];
    uint32_t fpoff[8], coff[8];
    sprof_sample_view v;
    memset(&v, 0, sizeof v);
    v.ret = ret;
    v.fpoff = fpoff;
    v.cand_off = coff;
    v.cand_val = val;
    /* a recursion: each level 0x40 lower, keeping the callers' frames and
     * candidates at their addresses; three threads interleaved */
    for (int i = 0; i < 600; i++) {
        int depth = 1 + i % 7;
        uint64_t top = 0x7ffd0000f000ull;
        v.tid = 100 + (uint32_t)(i % 3);
        v.sp = top - 0x40u * (uint32_t)depth;
        v.nframes = (uint32_t)depth;
        v.ncand = (uint32_t)depth;
        for (int f = 0; f < depth; f++) {
            ret[f] = 0x401000 + 0x10u * (uint32_t)((depth - f) % 3); /* which call site at that level */
            fpoff[f] = 0x40u * (uint32_t)f + 0x10;
            coff[f] = 0x40u * (uint32_t)f + 0x20;
            val[f] = f % 2 ? v.sp + coff[f] + 0x18 : 0x402000 + (uint64_t)f;
        }
        if (i % 11 == 0) fpoff[depth - 1] = SPROF_FPOFF_UNKNOWN;
        v.fp0_off = i % 5 ? 0x10 : SPROF_FPOFF_UNKNOWN;
        v.pc = 0x401800 + (uint64_t)(i % 13);
        v.fp = i % 4 ? v.sp + 0x10 : 0x1234; /* rbp as data sometimes */
        v.time_ns = 1000000000ull + (uint64_t)i * 250000 - (uint64_t)(i % 3) * 7000;
        v.weight_ns = 1000000 + (uint64_t)(i % 9) * 1000 - 4000;
        v.flags = i % 17 ? 0 : SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_PAGE_FAULT;
        feed(&v);
    }
    /* a handler on an alternate stack: a second candidate segment */
    v.sp = 0x7f0000001000ull;
    v.nframes = 1;
    ret[0] = 0x401000;
    fpoff[0] = 0x20;
    v.ncand = 3;
    coff[0] = 0x8;
    val[0] = 0x401234;
    coff[1] = SPROF_CAND_REBASE;
    val[1] = 0x7ffd00001000ull;
    coff[2] = 0x10;
    val[2] = 0x401300;
    feed(&v);
    feed(&v);
    /* 30,000 distinct stacks: the table fills (STACK_RESET), and a stack
     * seen before the reset is written again after it */
    v.nframes = 2;
    v.ncand = 1;
    for (int i = 0; i < 30000; i++) {
        v.tid = 200;
        v.sp = 0x7ffd10000000ull - 0x10u * (uint32_t)i;
        ret[0] = 0x401000 + (uint64_t)i;
        ret[1] = 0x401100;
        fpoff[0] = 0x10;
        fpoff[1] = 0x30;
        coff[0] = 8;
        val[0] = 0x409000;
        v.pc = 0x401000;
        feed(&v);
        if (i % 1000 == 999) {
            v.sp = 0x7ffd10000000ull;
            ret[0] = 0x401000;
            feed(&v);
        }
    }
}

int main(int argc, char **argv)
{
    g_sprof.period_ns = 1000000;
    struct sprof_trace_file_header h;
    memcpy(h.magic, SPROF_TRACE_MAGIC, 8);
    h.version = SPROF_TRACE_VERSION;
    h.header_size = sizeof h;
    out(&h, sizeof h);
    sprof_compact_reset();
    char err[512];
    size_t real = 0;
    for (int a = 1; a < argc; a++) {
        sprof_trace *t = sprof_trace_open(argv[a], err, sizeof err);
        if (!t) {
            fprintf(stderr, "compact_roundtrip: %s\n", err);
            return 1;
        }
        sprof_trace_record r;
        int rc;
        while ((rc = sprof_trace_next(t, &r, err, sizeof err)) > 0)
            if (r.type == SPROF_REC_SAMPLE) feed(&r.u.sample);
        sprof_trace_close(t);
        if (rc < 0) {
            fprintf(stderr, "compact_roundtrip: %s\n", err);
            return 1;
        }
    }
    real = nin;
    sprof_compact_close();
    size_t real_bytes = file_len; /* (the synthetic part follows) */
    synthetic();
    sprof_compact_close();
    struct sprof_rec_hdr end = {SPROF_REC_END, sizeof end};
    out(&end, sizeof end);

    sprof_trace *t = sprof_trace_open_mem(file, file_len, "roundtrip", err, sizeof err);
    if (!t) {
        fprintf(stderr, "compact_roundtrip: %s\n", err);
        return 1;
    }
    size_t n = 0, bad = 0, resets = 0;
    sprof_trace_record r;
    int rc;
    while ((rc = sprof_trace_next(t, &r, err, sizeof err)) > 0) {
        if (r.type != SPROF_REC_SAMPLE) continue;
        if (n < nin && !same(&r.u.sample, in[n])) {
            if (bad++ < 5) fprintf(stderr, "FAIL: sample %zu differs from what went in\n", n);
        }
        n++;
    }
    if (rc < 0) {
        fprintf(stderr, "FAIL: %s\n", err);
        return 1;
    }
    sprof_trace_close(t);
    for (size_t off = sizeof h; off + 8 <= file_len;) {
        struct sprof_rec_hdr rh;
        memcpy(&rh, file + off, sizeof rh);
        resets += rh.type == SPROF_REC_STACK_RESET;
        off += rh.size;
    }
    int fail = bad != 0 || n != nin;
    if (n != nin) fprintf(stderr, "FAIL: %zu samples in, %zu out\n", nin, n);
    if (!resets) {
        fprintf(stderr, "FAIL: 31,000 distinct stacks wrote no STACK_RESET\n");
        fail = 1;
    }
    double per = real ? (double)(real_bytes - sizeof h) / (double)real : 0;
    printf("%zu samples (%zu from %d traces: %.1f bytes each), %zu STACK_RESET, %zu bytes: %s\n", nin, real, argc - 1,
           per, resets, file_len, fail ? "FAIL" : "ok");
    if (real && per > 60) {
        fprintf(stderr, "FAIL: %.1f bytes per sample of the real traces (bound 60)\n", per);
        fail = 1;
    }
    for (size_t i = 0; i < nin; i++) free(in[i]);
    free(in);
    free(file);
    return fail;
}
