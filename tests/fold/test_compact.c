/* Format 2.0 (STACK + SAMPLES records) through the trace reader: every
 * field of every sample comes back as written (thread ids over 31 bits,
 * time going backwards between threads, weights and pcs on both sides of
 * their bases), indexes start again after STACK_RESET, a format 1 SAMPLE
 * record reads beside them, a rewind reads the same again; and hostile
 * batches are refused with the record's offset: an index no STACK
 * defined, a count larger than the entries, bytes after the entries,
 * non-zero padding, a STACK whose size does not match its counts, a
 * version this reader does not know. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fold_check.h"
#include "sprof/trace_reader.h"

struct buf {
    uint8_t *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 256;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            perror("realloc");
            exit(1);
        }
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void pad(struct buf *b)
{
    static const uint8_t zeros[8];
    put(b, zeros, (8 - b->n % 8) % 8);
}

struct smp {
    uint32_t tid, flags;
    uint64_t time, weight, pc, sp, fp;
    uint32_t fp0_off;
    uint16_t nframes, ncand;
    uint64_t ret[3];
    uint32_t fpoff[3], coff[3];
    uint64_t cval[3];
};

static void header(struct buf *b, uint32_t version)
{
    struct sprof_trace_file_header h;
    memcpy(h.magic, SPROF_TRACE_MAGIC, 8);
    h.version = version;
    h.header_size = sizeof h;
    put(b, &h, sizeof h);
    struct sprof_rec_info r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_INFO;
    r.h.size = sizeof r + 8;
    r.hz = 1000;
    r.mechanism = SPROF_MECH_PERF_EVENT;
    put(b, &r, sizeof r);
    put(b, "x\0\0\0\0\0\0\0", 8);
}

static void arrays(struct buf *b, const struct smp *s)
{
    put(b, s->ret, 8u * s->nframes);
    put(b, s->fpoff, 4u * s->nframes);
    pad(b);
    put(b, s->coff, 4u * s->ncand);
    pad(b);
    put(b, s->cval, 8u * s->ncand);
}

static size_t arrays_size(const struct smp *s)
{
    return 8u * s->nframes + (4u * s->nframes + 7) / 8 * 8 + (4u * s->ncand + 7) / 8 * 8 + 8u * s->ncand;
}

static void stack(struct buf *b, const struct smp *s, int32_t size_error)
{
    struct sprof_rec_stack k;
    memset(&k, 0, sizeof k);
    k.h.type = SPROF_REC_STACK;
    k.h.size = (uint32_t)((int32_t)(sizeof k + arrays_size(s)) + size_error);
    k.nframes = s->nframes;
    k.ncand = s->ncand;
    k.fp0_off = s->fp0_off;
    k.sp = s->sp;
    k.pc = s->pc;
    k.fp = s->fp;
    put(b, &k, sizeof k);
    arrays(b, s);
    for (int32_t i = 0; i < size_error; i++)
        put(b, "", 1);
}

static void sample_v1(struct buf *b, const struct smp *s)
{
    struct sprof_rec_sample r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_SAMPLE;
    r.h.size = (uint32_t)(sizeof r + arrays_size(s));
    r.tid = s->tid;
    r.flags = s->flags;
    r.nframes = s->nframes;
    r.ncand = s->ncand;
    r.fp0_off = s->fp0_off;
    r.time_ns = s->time;
    r.weight_ns = s->weight;
    r.pc = s->pc;
    r.sp = s->sp;
    r.fp = s->fp;
    put(b, &r, sizeof r);
    arrays(b, s);
}

/* n samples, sample i of stack idx[i] whose pc/fp bases are base[idx[i]];
 * count as given; `tail` bytes of `fill` after the entries */
static void samples(struct buf *b, const struct smp *v, const uint32_t *idx, const struct smp *const *base, size_t n,
                    uint32_t count, size_t tail, uint8_t fill)
{
    uint8_t e[4096];
    size_t len = 0;
    uint64_t tid = 0, time = v[0].time - 5;
    for (size_t i = 0; i < n; i++) {
        len += sprof_varint_put(e + len, sprof_zigzag(v[i].tid, tid));
        len += sprof_varint_put(e + len, v[i].flags);
        len += sprof_varint_put(e + len, idx[i]);
        len += sprof_varint_put(e + len, sprof_zigzag(v[i].time, time));
        len += sprof_varint_put(e + len, sprof_zigzag(v[i].weight, 1000000));
        len += sprof_varint_put(e + len, sprof_zigzag(v[i].pc, base[i]->pc));
        len += sprof_varint_put(e + len, sprof_zigzag(v[i].fp, base[i]->fp));
        tid = v[i].tid;
        time = v[i].time;
    }
    memset(e + len, fill, tail);
    len += tail;
    struct sprof_rec_samples r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_SAMPLES;
    r.h.size = (uint32_t)((sizeof r + len + 7) / 8 * 8);
    r.count = count;
    r.time_ns = v[0].time - 5;
    r.weight_ns = 1000000;
    put(b, &r, sizeof r);
    put(b, e, len);
    pad(b);
}

static void end(struct buf *b)
{
    struct sprof_rec_hdr h = {SPROF_REC_END, sizeof h};
    put(b, &h, sizeof h);
}

static int same(const sprof_sample_view *v, const struct smp *s)
{
    if (v->tid != s->tid || v->flags != s->flags || v->time_ns != s->time || v->weight_ns != s->weight ||
        v->pc != s->pc || v->sp != s->sp || v->fp != s->fp || v->fp0_off != s->fp0_off ||
        v->nframes != s->nframes || v->ncand != s->ncand)
        return 0;
    for (unsigned i = 0; i < s->nframes; i++)
        if (v->ret[i] != s->ret[i] || v->fpoff[i] != s->fpoff[i]) return 0;
    for (unsigned i = 0; i < s->ncand; i++)
        if (v->cand_off[i] != s->coff[i] || v->cand_val[i] != s->cval[i]) return 0;
    return 1;
}

/* Reads every sample into got[] (at most max); returns the count, or -1
 * with err filled. */
static int read_all(const struct buf *b, sprof_sample_view *got, int max, char *err, size_t errlen)
{
    sprof_trace *t = sprof_trace_open_mem(b->p, b->n, "t.bin", err, errlen);
    if (!t) return -1;
    int n = 0, rc;
    sprof_trace_record r;
    for (int pass = 0; pass < 2; pass++) { /* the second pass after a rewind must read the same */
        int k = 0;
        while ((rc = sprof_trace_next(t, &r, err, errlen)) == 1)
            if (r.type == SPROF_REC_SAMPLE) {
                if (pass == 0 && n < max) got[n++] = r.u.sample;
                else if (pass == 1 && (k >= n || !(got[k].time_ns == r.u.sample.time_ns && got[k].pc == r.u.sample.pc &&
                                                  got[k].ret == r.u.sample.ret)))
                    rc = -2;
                k++;
            }
        if (rc < 0) break;
        if (pass == 1 && k != n) rc = -2;
        sprof_trace_rewind(t);
    }
    sprof_trace_close(t);
    if (rc == -2) snprintf(err, errlen, "a second pass after sprof_trace_rewind read other samples");
    return rc < 0 ? -1 : n;
}

static void expect_error(const struct buf *b, const char *what, const char *want)
{
    char err[512] = "";
    sprof_sample_view got[16];
    int n = read_all(b, got, 16, err, sizeof err);
    CHECK(n < 0 && strstr(err, want) && strstr(err, "t.bin: record at offset"), "%s: read %d, error \"%s\"", what, n,
          err);
}

int main(void)
{
    static const struct smp a = {.tid = 7, .time = 5000000000ull, .weight = 1000000, .pc = 0x401000, .sp = 0x7ffd1000,
                                 .fp = 0x7ffd1040, .fp0_off = 0x40, .nframes = 2, .ret = {0x401200, 0x401300},
                                 .fpoff = {0x40, 0x80}, .ncand = 3, .coff = {8, 16, 24},
                                 .cval = {0x401111, 0x7ffd1100, 0x401222}};
    static const struct smp k0 = {.tid = 9, .pc = 0x402000, .sp = 0x7ffd2000, .fp = 0, .fp0_off = SPROF_FPOFF_UNKNOWN};
    struct smp v[8];
    for (int i = 0; i < 8; i++) v[i] = a;
    v[1].tid = 4000000000u; /* over 31 bits */
    v[1].time = a.time - 3000; /* backwards: another thread's sample drained later */
    v[1].weight = 1;
    v[1].pc = a.pc - 0x800;
    v[1].fp = 0xdeadbeef; /* rbp as data */
    v[2].weight = 250000000; /* a kernel tick's many periods */
    v[2].flags = SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_KERNEL_TICK;
    v[2].pc = a.pc + 0x123456;
    v[3] = k0;
    v[3].time = a.time + 1000000;
    v[3].weight = 999999;
    v[3].pc = k0.pc + 1;
    v[4] = v[3];
    v[4].tid = 7;
    v[4].time = UINT64_MAX; /* any 64-bit value round-trips */
    v[4].pc = 0;
    const struct smp *base[8] = {&a, &a, &a, &k0, &k0};

    /* STACK a (0), STACK k0 (1), five samples; STACK_RESET; STACK k0 (0),
     * one sample of it; a format 1 SAMPLE; END */
    struct buf b = {0};
    header(&b, SPROF_TRACE_VERSION);
    stack(&b, &a, 0);
    stack(&b, &k0, 0);
    const uint32_t idx[5] = {0, 0, 0, 1, 1};
    samples(&b, v, idx, base, 5, 5, 0, 0);
    struct sprof_rec_hdr reset = {SPROF_REC_STACK_RESET, sizeof reset};
    put(&b, &reset, sizeof reset);
    stack(&b, &k0, 0);
    v[5] = v[3];
    v[5].time = 42;
    const uint32_t idx0[1] = {0};
    const struct smp *b0[1] = {&k0};
    samples(&b, &v[5], idx0, b0, 1, 1, 0, 0);
    v[6] = a;
    v[6].time = 43;
    sample_v1(&b, &v[6]);
    end(&b);

    char err[512] = "";
    sprof_sample_view got[16];
    int n = read_all(&b, got, 16, err, sizeof err);
    CHECK(n == 7, "read %d samples of 7 (%s)", n, err);
    for (int i = 0; i < n && i < 7; i++) CHECK(same(&got[i], &v[i]), "sample %d differs from what was written", i);

    /* a format 1 file reads too */
    struct buf b1 = {0};
    header(&b1, 1);
    sample_v1(&b1, &v[0]);
    end(&b1);
    n = read_all(&b1, got, 16, err, sizeof err);
    CHECK(n == 1 && same(&got[0], &v[0]), "format 1: read %d (%s)", n, err);

    /* a version this reader does not know */
    struct buf b3 = {0};
    header(&b3, SPROF_TRACE_VERSION + 1);
    end(&b3);
    sprof_trace *t = sprof_trace_open_mem(b3.p, b3.n, "t.bin", err, sizeof err);
    CHECK(!t && strstr(err, "version"), "version %u: %s", SPROF_TRACE_VERSION + 1, t ? "opened" : err);
    sprof_trace_close(t);

    /* hostile batches */
    struct buf h = {0};
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0);
    const uint32_t bad_idx[1] = {1};
    samples(&h, v, bad_idx, base, 1, 1, 0, 0);
    expect_error(&h, "index past the stacks", "refers to stack 1");

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0);
    put(&h, &reset, sizeof reset);
    samples(&h, v, idx0, base, 1, 1, 0, 0);
    expect_error(&h, "index from before a reset", "refers to stack 0");

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0);
    samples(&h, v, idx0, base, 1, 2, 0, 0);
    expect_error(&h, "count over the entries", "runs past the record");

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0);
    samples(&h, v, idx0, base, 1, 1, 9, 0);
    expect_error(&h, "bytes after the entries", "after its 1 entries");

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0);
    samples(&h, v, idx0, base, 1, 1, 1, 0xff);
    expect_error(&h, "padding", "padding is not zero");

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 8);
    expect_error(&h, "STACK size", "STACK with 2 frames and 3 candidates needs");

    free(b.p);
    free(b1.p);
    free(b3.p);
    free(h.p);
    return check_report("fold_compact");
}
