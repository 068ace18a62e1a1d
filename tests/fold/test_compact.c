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

/* The STACK record of s: its first nframes - kf frames and ncand - kc
 * candidates as varints (code-pointer base for even candidates, own-address
 * base for odd ones: both encodings), the rest kept from stack `parent` - 1;
 * size_error bytes of zeros added past the padding. */
static void stack(struct buf *b, const struct smp *s, uint32_t parent, uint16_t kf, uint16_t kc, int32_t size_error,
                  const struct smp *par)
{
    uint8_t body[1024];
    size_t len = 0;
    uint32_t nf = s->nframes - kf, nc = s->ncand - kc;
    const uint64_t head[SPROF_STACK_FIELDS] = {
        parent, kf, kc, nf, nc, (uint32_t)(s->fp0_off + 1), sprof_zigzag(s->sp, par ? par->sp : 0),
        sprof_zigzag(s->pc, par ? par->pc : 0), sprof_zigzag(s->fp, s->sp)};
    for (unsigned i = 0; i < SPROF_STACK_FIELDS; i++) len += sprof_varint_put(body + len, head[i]);
    uint64_t prev = s->pc, prev_off = 0;
    for (uint32_t i = 0; i < nf; i++) {
        len += sprof_varint_put(body + len, sprof_zigzag(s->ret[i], prev));
        len += sprof_varint_put(body + len, sprof_zigzag(s->fpoff[i], prev_off));
        prev = s->ret[i];
        prev_off = s->fpoff[i];
    }
    prev_off = 0;
    for (uint32_t i = 0; i < nc; i++) {
        len += sprof_varint_put(body + len, sprof_zigzag(s->coff[i], prev_off));
        if (i % 2 == 0) {
            len += sprof_varint_put(body + len, sprof_zigzag(s->cval[i], prev) << 1);
            prev = s->cval[i];
        } else {
            len += sprof_varint_put(body + len, sprof_zigzag(s->cval[i], s->sp + s->coff[i]) << 1 | 1);
        }
        prev_off = s->coff[i];
    }
    struct sprof_rec_hdr k = {SPROF_REC_STACK, (uint32_t)((int32_t)((sizeof k + len + 7) / 8 * 8) + size_error)};
    put(b, &k, sizeof k);
    put(b, body, len);
    pad(b);
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
 * with err filled. The views stay valid until *open is closed (NULL:
 * closed here; a format 2 sample's arrays are the reader's). */
static int read_all(const struct buf *b, sprof_sample_view *got, int max, char *err, size_t errlen,
                    sprof_trace **open)
{
    if (open) *open = NULL;
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
    if (open && rc >= 0) *open = t;
    else sprof_trace_close(t);
    if (rc == -2) snprintf(err, errlen, "a second pass after sprof_trace_rewind read other samples");
    return rc < 0 ? -1 : n;
}

static void expect_error(const struct buf *b, const char *what, const char *want)
{
    char err[512] = "";
    sprof_sample_view got[16];
    int n = read_all(b, got, 16, err, sizeof err, NULL);
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
    stack(&b, &a, 0, 0, 0, 0, NULL);
    stack(&b, &k0, 0, 0, 0, 0, NULL);
    const uint32_t idx[5] = {0, 0, 0, 1, 1};
    samples(&b, v, idx, base, 5, 5, 0, 0);
    struct sprof_rec_hdr reset = {SPROF_REC_STACK_RESET, sizeof reset};
    put(&b, &reset, sizeof reset);
    stack(&b, &k0, 0, 0, 0, 0, NULL);
    v[5] = v[3];
    v[5].time = 42;
    const uint32_t idx0[1] = {0};
    const struct smp *b0[1] = {&k0};
    samples(&b, &v[5], idx0, b0, 1, 1, 0, 0);
    v[6] = a;
    v[6].time = 43;
    sample_v1(&b, &v[6]);
    /* a deeper call under a's frames (sp 0x100 lower): one new frame and
     * candidate, a's two frames and three candidates kept by reference,
     * at the same stack addresses */
    struct smp d = a;
    d.sp = a.sp - 0x100;
    d.pc = 0x405000;
    d.fp0_off = 0x20;
    d.nframes = 3;
    d.ret[0] = 0x401400;
    d.fpoff[0] = 0x20;
    d.ncand = 3 + 1;
    d.coff[0] = 0x10;
    d.cval[0] = 0x401500;
    for (int i = 0; i < 2; i++) {
        d.ret[1 + i] = a.ret[i];
        d.fpoff[1 + i] = a.fpoff[i] + 0x100;
    }
    struct smp dd = d; /* the candidate arrays hold 3: the fourth is checked apart */
    stack(&b, &a, 0, 0, 0, 0, NULL); /* index 1 after the reset */
    d.ncand = 1;
    stack(&b, &d, 2, 2, 0, 0, &a);  /* index 2: one new frame, a's two kept (no candidates kept) */
    d.time = 44;
    const uint32_t idx2[1] = {2};
    const struct smp *bd[1] = {&d};
    samples(&b, &d, idx2, bd, 1, 1, 0, 0);
    end(&b);

    char err[512] = "";
    sprof_sample_view got[16];
    sprof_trace *open = NULL;
    int n = read_all(&b, got, 16, err, sizeof err, &open);
    CHECK(n == 8, "read %d samples of 8 (%s)", n, err);
    for (int i = 0; i < n && i < 7; i++) CHECK(same(&got[i], &v[i]), "sample %d differs from what was written", i);
    CHECK(n == 8 && same(&got[7], &d), "the stack that keeps its parent's frames differs");
    (void)dd;
    sprof_trace_close(open);

    /* kept candidates: d's one new candidate, then a's three at a's addresses */
    struct buf c = {0};
    header(&c, SPROF_TRACE_VERSION);
    stack(&c, &a, 0, 0, 0, 0, NULL);
    struct smp e = d;
    e.ncand = 4;
    e.coff[0] = 0x10;
    e.cval[0] = 0x401500;
    struct smp full = e; /* what the reader must give: 4 candidates */
    uint32_t full_coff[4] = {0x10, a.coff[0] + 0x100, a.coff[1] + 0x100, a.coff[2] + 0x100};
    uint64_t full_cval[4] = {0x401500, a.cval[0], a.cval[1], a.cval[2]};
    e.ncand = 1 + 3; /* the encoder writes the first ncand - keep_cands = 1 */
    stack(&c, &e, 1, 2, 3, 0, &a);
    e.time = 45;
    samples(&c, &e, idx0 + 0, bd, 0, 0, 0, 0); /* an empty batch is skipped */
    const uint32_t idx1[1] = {1};
    const struct smp *be[1] = {&e};
    samples(&c, &e, idx1, be, 1, 1, 0, 0);
    end(&c);
    n = read_all(&c, got, 16, err, sizeof err, &open);
    int cand_ok = n == 1 && got[0].ncand == 4 && got[0].nframes == 3;
    for (int i = 0; cand_ok && i < 4; i++)
        cand_ok = got[0].cand_off[i] == full_coff[i] && got[0].cand_val[i] == full_cval[i];
    CHECK(cand_ok, "kept candidates: read %d, %u candidates (%s)", n, n > 0 ? got[0].ncand : 0, err);
    (void)full;
    sprof_trace_close(open);

    /* a format 1 file reads too */
    struct buf b1 = {0};
    header(&b1, 1);
    sample_v1(&b1, &v[0]);
    end(&b1);
    n = read_all(&b1, got, 16, err, sizeof err, &open);
    CHECK(n == 1 && same(&got[0], &v[0]), "format 1: read %d (%s)", n, err);
    sprof_trace_close(open);

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
    stack(&h, &a, 0, 0, 0, 0, NULL);
    const uint32_t bad_idx[1] = {1};
    samples(&h, v, bad_idx, base, 1, 1, 0, 0);
    expect_error(&h, "index past the stacks", "refers to stack 1");

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0, 0, 0, 0, NULL);
    put(&h, &reset, sizeof reset);
    samples(&h, v, idx0, base, 1, 1, 0, 0);
    expect_error(&h, "index from before a reset", "refers to stack 0");

    /* one sample of stack a, in a record whose count, tail or padding lies */
    static const struct {
        uint32_t count;
        size_t tail;
        uint8_t fill;
        const char *what, *want;
    } lies[] = {
        {2, 0, 0, "count over the entries", "runs past the record"},
        {1, 9, 0, "bytes after the entries", "after its 1 entries"},
        {1, 1, 0xff, "padding", "padding is not zero"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        h.n = 0;
        header(&h, SPROF_TRACE_VERSION);
        stack(&h, &a, 0, 0, 0, 0, NULL);
        samples(&h, v, idx0, base, 1, lies[i].count, lies[i].tail, lies[i].fill);
        expect_error(&h, lies[i].what, lies[i].want);
    }

    h.n = 0;
    header(&h, SPROF_TRACE_VERSION);
    stack(&h, &a, 0, 0, 0, 8, NULL);
    expect_error(&h, "STACK size", "bytes after its body");

    /* a first stack, then one that keeps two frames of a parent it may not */
    struct smp up = a; /* above its parent: the kept frames would be below its sp */
    up.sp = d.sp + 0x1000;
    up.nframes = 3;
    const struct {
        const struct smp *first, *child;
        uint32_t parent;
        const char *what, *want;
    } parents[] = {
        {&a, &d, 3, "parent past the stacks", "parent stack 2"},
        {&k0, &d, 1, "keeps more than the parent has", "keeps 2 frames and 0 candidates of a parent that has 0"},
        {&d, &d, 0, "keeps without a parent", "but has no parent"},
        {&d, &up, 1, "kept frame below sp", "below its sp"},
    };
    for (size_t i = 0; i < sizeof parents / sizeof parents[0]; i++) {
        h.n = 0;
        header(&h, SPROF_TRACE_VERSION);
        stack(&h, parents[i].first, 0, 0, 0, 0, NULL);
        stack(&h, parents[i].child, parents[i].parent, 2, 0, 0, parents[i].first);
        expect_error(&h, parents[i].what, parents[i].want);
    }

    free(b.p);
    free(b1.p);
    free(b3.p);
    free(h.p);
    free(c.p);
    return check_report("fold_compact");
}
