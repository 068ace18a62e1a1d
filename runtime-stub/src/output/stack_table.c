/* Format 2.0 in the writer: every stack goes into the file once (a STACK
 * record), and each sample after it is a few varints in a SAMPLES batch:
 * its thread, flags, stack index and its time, weight, pc and fp as deltas
 * (docs/trace-format.md). A program's samples repeat a few hundred stacks
 * (the same call path at the same stack depth gives the same frame
 * records and candidates); their pc and fp vary and their time and weight
 * are near the previous sample's and the period.
 *
 * A new stack is written as varints too (return addresses and code
 * pointers as differences from the previous one, stack pointers from their
 * own address, offsets from the previous offset), and keeps the outer part
 * it shares with a recent stack (the same thread's last one, or one of the
 * last few written) by reference: the callers' frames of a recursion or a
 * collector's marking do not change while the deeper calls run. A real
 * Spinel program with a new stack every other sample (gcbench: binary
 * trees, each path down a tree its own stack) went from 280 bytes a sample
 * (each stack whole) to ~50.
 *
 * Nothing of this runs in a signal handler or on the perf ring path: the
 * writer thread (or the final drain, io_lock held) compacts the records
 * the rings carry as it appends them to the file's buffer.
 *
 * Memory: a table of STACK_SLOTS entries and an arena of the stacks (as
 * the rings carry them), mapped at the first sample. When either is 3/4
 * full the writer writes STACK_RESET and starts again: a long run with
 * ever new stacks then writes the stacks still in use again, once per
 * ~24,000 stacks or 6 MiB. Each file of a rotation starts empty. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "rt_internal.h"

#define STACK_SLOTS (1u << 15)
#define ARENA_BYTES (8u << 20)
#define BATCH_BYTES (64u << 10)
#define ENCODE_BYTES (64u << 10) /* a STACK record: ~100 + 20 per frame and per candidate at most */
#define RECENT 16                /* the last stacks written, tried as parents */
#define TID_SLOTS 64             /* each thread's last stack, tried as a parent */

/* A stack in the arena: as in a SAMPLE record (its arrays follow). */
struct stored {
    uint64_t sp, pc, fp;
    uint32_t index, fp0_off;
    uint32_t nframes, ncand;
    uint32_t body_len, has_marker;
};

struct slot {
    uint64_t hash;
    uint32_t off; /* arena offset + 1; 0 = empty */
    uint32_t pad;
};

static struct slot *slots; /* STACK_SLOTS */
static uint8_t *arena;
static uint32_t arena_used, nstacks;
static int unavailable; /* the maps failed: samples are written whole */
static uint32_t recent[RECENT]; /* arena offsets + 1 */
static struct {
    uint32_t tid, off; /* off: arena offset + 1 */
} tid_last[TID_SLOTS];

static uint8_t batch[BATCH_BYTES]; /* struct sprof_rec_samples, then entries */
static uint32_t batch_len, batch_count;
static uint64_t batch_prev_tid, batch_prev_time;
static uint8_t encoded[ENCODE_BYTES];

static struct stored *at(uint32_t off1) { return (struct stored *)(void *)(arena + off1 - 1); }

static uint64_t hash_words(const uint8_t *p, size_t len, uint64_t h)
{
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    return h;
}

static uint64_t stack_hash(const struct sprof_rec_sample *s, const uint8_t *body, uint32_t blen)
{
    uint64_t h = ((uint64_t)s->nframes << 48 | (uint64_t)s->ncand << 32 | s->fp0_off) * 0xff51afd7ed558ccdull;
    h = hash_words((const uint8_t *)&s->sp, 8, h ^ blen);
    return hash_words(body, blen, h);
}

static int same_stack(const struct stored *k, const struct sprof_rec_sample *s, const uint8_t *body, uint32_t blen)
{
    return k->nframes == s->nframes && k->ncand == s->ncand && k->fp0_off == s->fp0_off && k->sp == s->sp &&
           k->body_len == blen && memcmp(k + 1, body, blen) == 0;
}

void sprof_compact_reset(void)
{
    batch_len = batch_count = 0;
    arena_used = nstacks = 0;
    memset(recent, 0, sizeof recent);
    memset(tid_last, 0, sizeof tid_last);
    if (slots) memset(slots, 0, STACK_SLOTS * sizeof *slots);
}

void sprof_compact_close(void)
{
    if (!batch_count) return;
    struct sprof_rec_samples *b = (struct sprof_rec_samples *)(void *)batch;
    uint32_t size = (batch_len + 7) & ~7u;
    memset(batch + batch_len, 0, size - batch_len);
    b->h.size = size;
    b->count = batch_count;
    sprof_out_raw(batch, size);
    batch_len = batch_count = 0;
}

static int ensure_maps(void)
{
    if (slots) return 0;
    if (unavailable) return -1;
    size_t sb = STACK_SLOTS * sizeof *slots;
    void *s = mmap(NULL, sb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED || a == MAP_FAILED) {
        if (s != MAP_FAILED) munmap(s, sb);
        if (a != MAP_FAILED) munmap(a, ARENA_BYTES);
        unavailable = 1;
        return -1;
    }
    slots = s;
    arena = a;
    return 0;
}

/* How many outermost frames and candidates `s` shares with stored stack p
 * at the same absolute stack addresses. Stacks with a second candidate
 * segment (an alternate signal stack) share nothing: their offsets do not
 * all count from sp. */
static void shared_outer(const struct stored *p, uint64_t sp, struct sprof_rec_arrays a, uint32_t nframes,
                         uint32_t ncand, uint32_t *kf, uint32_t *kc)
{
    struct sprof_rec_arrays b = sprof_rec_arrays_of((const uint8_t *)(p + 1), p->nframes, p->ncand);
    uint32_t f = 0, c = 0;
    while (f < nframes && f < p->nframes) {
        uint32_t x = a.fpoff[nframes - 1 - f], y = b.fpoff[p->nframes - 1 - f];
        int same_place = x == SPROF_FPOFF_UNKNOWN ? y == SPROF_FPOFF_UNKNOWN
                                                  : y != SPROF_FPOFF_UNKNOWN && sp + x == p->sp + y;
        if (a.ret[nframes - 1 - f] != b.ret[p->nframes - 1 - f] || !same_place) break;
        f++;
    }
    while (c < ncand && c < p->ncand && a.cval[ncand - 1 - c] == b.cval[p->ncand - 1 - c] &&
           sp + a.coff[ncand - 1 - c] == p->sp + b.coff[p->ncand - 1 - c])
        c++;
    *kf = f;
    *kc = c;
}

static unsigned put_zz(uint8_t *p, uint64_t now, uint64_t base) { return sprof_varint_put(p, sprof_zigzag(now, base)); }

/* The STACK record of stored stack n (its parent chosen among the recent
 * stacks) into `encoded`; its size, or 0 if it does not fit. */
static uint32_t encode_stack(const struct stored *n, uint32_t tid)
{
    struct sprof_rec_arrays a = sprof_rec_arrays_of((const uint8_t *)(n + 1), n->nframes, n->ncand);
    uint32_t kf = 0, kc = 0;
    const struct stored *parent = NULL;
    if (!n->has_marker) {
        uint32_t tried[RECENT + 1], ntried = 0;
        tried[ntried++] = tid_last[tid % TID_SLOTS].tid == tid ? tid_last[tid % TID_SLOTS].off : 0;
        for (int i = 0; i < RECENT; i++) tried[ntried++] = recent[i];
        for (uint32_t i = 0; i < ntried; i++) {
            if (!tried[i] || (i && tried[i] == tried[0])) continue;
            const struct stored *p = at(tried[i]);
            if (p->has_marker) continue;
            uint32_t f, c;
            shared_outer(p, n->sp, a, n->nframes, n->ncand, &f, &c);
            if (f + c > kf + kc) {
                kf = f;
                kc = c;
                parent = p;
            }
        }
    }
    uint32_t nf = n->nframes - kf, nc = n->ncand - kc;
    if (sizeof(struct sprof_rec_hdr) + 10 * SPROF_STACK_FIELDS + 20 * (size_t)(nf + nc) + 8 > ENCODE_BYTES) return 0;
    uint8_t *p = encoded + sizeof(struct sprof_rec_hdr);
    p += sprof_varint_put(p, parent ? parent->index + 1 : 0);
    p += sprof_varint_put(p, kf);
    p += sprof_varint_put(p, kc);
    p += sprof_varint_put(p, nf);
    p += sprof_varint_put(p, nc);
    p += sprof_varint_put(p, (uint32_t)(n->fp0_off + 1));
    p += put_zz(p, n->sp, parent ? parent->sp : 0);
    p += put_zz(p, n->pc, parent ? parent->pc : 0);
    p += put_zz(p, n->fp, n->sp);
    uint64_t prev_ret = n->pc, prev_off = 0;
    for (uint32_t i = 0; i < nf; i++) {
        p += put_zz(p, a.ret[i], prev_ret);
        p += put_zz(p, a.fpoff[i], prev_off);
        prev_ret = a.ret[i];
        prev_off = a.fpoff[i];
    }
    /* a candidate is a code pointer (near the previous one) or a saved
     * frame pointer (near its own address): the low bit says which base */
    uint64_t prev_code = prev_ret;
    prev_off = 0;
    for (uint32_t i = 0; i < nc; i++) {
        uint64_t off = a.coff[i], v = a.cval[i];
        p += put_zz(p, off, prev_off);
        uint64_t zc = sprof_zigzag(v, prev_code), zs = sprof_zigzag(v, n->sp + off);
        if (zc <= zs && zc < (1ull << 63)) {
            p += sprof_varint_put(p, zc << 1);
            prev_code = v;
        } else if (zs < (1ull << 63)) {
            p += sprof_varint_put(p, zs << 1 | 1);
        } else {
            return 0; /* no user address is 2^62 from another: written whole */
        }
        prev_off = off;
    }
    uint32_t len = (uint32_t)(p - encoded), size = (len + 7) & ~7u;
    memset(encoded + len, 0, size - len);
    struct sprof_rec_hdr h = {SPROF_REC_STACK, size};
    memcpy(encoded, &h, sizeof h);
    return size;
}

/* The index of s's stack, writing its STACK record first if the file has
 * none yet; *k = that stack. -1: not compacted (written whole). */
static int64_t stack_index(const struct sprof_rec_sample *s, const struct stored **k)
{
    const uint8_t *body = (const uint8_t *)(s + 1);
    uint32_t blen = s->h.size - (uint32_t)sizeof *s;
    uint64_t h = stack_hash(s, body, blen);
    uint32_t i = (uint32_t)(h >> 17) & (STACK_SLOTS - 1);
    for (; slots[i].off; i = (i + 1) & (STACK_SLOTS - 1)) {
        const struct stored *c = at(slots[i].off);
        if (slots[i].hash == h && same_stack(c, s, body, blen)) {
            *k = c;
            return c->index;
        }
    }
    uint32_t size = (uint32_t)sizeof(struct stored) + blen;
    if (size > ARENA_BYTES / 8) return -1;
    if (nstacks >= STACK_SLOTS / 4 * 3 || arena_used + size > ARENA_BYTES / 4 * 3) {
        /* full: samples after this refer to the stacks written after it */
        sprof_compact_close();
        struct sprof_rec_hdr reset = {SPROF_REC_STACK_RESET, sizeof reset};
        sprof_out_raw(&reset, sizeof reset);
        sprof_compact_reset();
        i = (uint32_t)(h >> 17) & (STACK_SLOTS - 1);
    }
    struct stored *n = (struct stored *)(void *)(arena + arena_used);
    memset(n, 0, sizeof *n);
    n->sp = s->sp;
    n->pc = s->pc;
    n->fp = s->fp;
    n->index = nstacks;
    n->fp0_off = s->fp0_off;
    n->nframes = s->nframes;
    n->ncand = s->ncand;
    n->body_len = blen;
    memcpy(n + 1, body, blen);
    struct sprof_rec_arrays a = sprof_rec_arrays_of(body, s->nframes, s->ncand);
    for (uint32_t c = 0; c < s->ncand; c++)
        if (SPROF_CAND_IS_MARKER(a.coff[c])) n->has_marker = 1;
    uint32_t rec = encode_stack(n, s->tid);
    if (!rec) return -1;
    sprof_out_raw(encoded, rec);
    uint32_t off1 = arena_used + 1;
    arena_used += size; /* a multiple of 8: the body is, and so is struct stored */
    slots[i].hash = h;
    slots[i].off = off1;
    nstacks++;
    memmove(recent + 1, recent, sizeof recent - sizeof recent[0]);
    recent[0] = off1;
    *k = n;
    return n->index;
}

void sprof_compact_add(const struct sprof_rec_sample *s)
{
    const struct stored *k = NULL;
    int64_t index = s->h.size >= sizeof *s && ensure_maps() == 0 ? stack_index(s, &k) : -1;
    if (index < 0) {
        sprof_compact_close();
        sprof_out_raw(s, s->h.size); /* a SAMPLE record: format 2 readers read those too */
        return;
    }
    uint32_t ts = s->tid % TID_SLOTS;
    tid_last[ts].tid = s->tid;
    tid_last[ts].off = (uint32_t)((const uint8_t *)k - arena) + 1;
    if (batch_count && batch_len + SPROF_SAMPLES_ENTRY_MAX > BATCH_BYTES - 8) sprof_compact_close();
    if (!batch_count) {
        struct sprof_rec_samples *b = (struct sprof_rec_samples *)(void *)batch;
        memset(b, 0, sizeof *b);
        b->h.type = SPROF_REC_SAMPLES;
        b->time_ns = s->time_ns;
        b->weight_ns = g_sprof.period_ns;
        batch_len = sizeof *b;
        batch_prev_tid = 0;
        batch_prev_time = s->time_ns;
    }
    const struct sprof_rec_samples *b = (const struct sprof_rec_samples *)(const void *)batch;
    uint8_t *p = batch + batch_len;
    p += put_zz(p, s->tid, batch_prev_tid);
    p += sprof_varint_put(p, s->flags);
    p += sprof_varint_put(p, (uint64_t)index);
    p += put_zz(p, s->time_ns, batch_prev_time);
    p += put_zz(p, s->weight_ns, b->weight_ns);
    p += put_zz(p, s->pc, k->pc);
    p += put_zz(p, s->fp, k->fp);
    batch_len = (uint32_t)(p - batch);
    batch_count++;
    batch_prev_tid = s->tid;
    batch_prev_time = s->time_ns;
}
