/* Format 2.0 in the writer: every stack goes into the file once (a STACK
 * record), and each sample after it is a few varints in a SAMPLES batch:
 * its thread, flags, stack index and its time, weight, pc and fp as deltas
 * (docs/trace-format.md). A program's samples repeat a few hundred stacks
 * (the same call path at the same stack depth gives the same frame
 * records and candidates); their pc and fp vary and their time and weight
 * are near the previous sample's and the period. 270-350 bytes a sample
 * become 12-20.
 *
 * Nothing of this runs in a signal handler or on the perf ring path: the
 * writer thread (or the final drain, io_lock held) compacts the records
 * the rings carry as it appends them to the file's buffer.
 *
 * Memory: a table of STACK_SLOTS entries and an arena of the stacks'
 * bytes, mapped at the first sample. When either is 3/4 full the writer
 * writes STACK_RESET and starts again: the file then repeats the stacks
 * still in use, which a long run with ever new stacks pays once per
 * ~24,000 stacks or 6 MiB. Each file of a rotation starts empty. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#include "rt_internal.h"

#define STACK_SLOTS (1u << 15)
#define ARENA_BYTES (8u << 20)
#define BATCH_BYTES (64u << 10)

struct slot {
    uint64_t hash;
    uint32_t arena_off; /* + 1; 0 = empty */
    uint32_t index;
};

static struct slot *slots;     /* STACK_SLOTS */
static uint8_t *arena;         /* STACK records as written */
static uint32_t arena_used, nstacks;
static int unavailable;        /* the maps failed: samples are written whole */

static uint8_t batch[BATCH_BYTES]; /* struct sprof_rec_samples, then entries */
static uint32_t batch_len, batch_count;
static uint64_t batch_prev_tid, batch_prev_time;

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

/* The STACK part of a sample: its fixed fields and its arrays. */
static uint64_t stack_hash(const struct sprof_rec_sample *s, const uint8_t *body, uint32_t blen)
{
    uint64_t h = ((uint64_t)s->nframes << 48 | (uint64_t)s->ncand << 32 | s->fp0_off) * 0xff51afd7ed558ccdull;
    h = hash_words((const uint8_t *)&s->sp, 8, h ^ blen);
    return hash_words(body, blen, h) | 1; /* 0 never: it marks nothing */
}

static int same_stack(const struct sprof_rec_stack *k, const struct sprof_rec_sample *s, const uint8_t *body,
                      uint32_t blen)
{
    return k->nframes == s->nframes && k->ncand == s->ncand && k->fp0_off == s->fp0_off && k->sp == s->sp &&
           k->h.size == sizeof *k + blen && memcmp(k + 1, body, blen) == 0;
}

void sprof_compact_reset(void)
{
    batch_len = batch_count = 0;
    arena_used = nstacks = 0;
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
    void *s = mmap(NULL, STACK_SLOTS * sizeof *slots, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED || a == MAP_FAILED) {
        if (s != MAP_FAILED) munmap(s, STACK_SLOTS * sizeof *slots);
        if (a != MAP_FAILED) munmap(a, ARENA_BYTES);
        unavailable = 1;
        return -1;
    }
    slots = s;
    arena = a;
    return 0;
}

/* The index of s's stack, writing its STACK record first if the file has
 * none yet; *k = that record. */
static uint32_t stack_index(const struct sprof_rec_sample *s, const struct sprof_rec_stack **k)
{
    const uint8_t *body = (const uint8_t *)(s + 1);
    uint32_t blen = s->h.size - (uint32_t)sizeof *s;
    uint64_t h = stack_hash(s, body, blen);
    uint32_t i = (uint32_t)(h >> 17) & (STACK_SLOTS - 1);
    for (; slots[i].arena_off; i = (i + 1) & (STACK_SLOTS - 1)) {
        const struct sprof_rec_stack *c = (const void *)(arena + slots[i].arena_off - 1);
        if (slots[i].hash == h && same_stack(c, s, body, blen)) {
            *k = c;
            return slots[i].index;
        }
    }
    uint32_t size = (uint32_t)sizeof **k + blen;
    if (nstacks >= STACK_SLOTS / 4 * 3 || arena_used + size > ARENA_BYTES / 4 * 3) {
        /* full: samples after this refer to the stacks written after it */
        sprof_compact_close();
        struct sprof_rec_hdr reset = {SPROF_REC_STACK_RESET, sizeof reset};
        sprof_out_raw(&reset, sizeof reset);
        sprof_compact_reset();
        i = (uint32_t)(h >> 17) & (STACK_SLOTS - 1);
    }
    struct sprof_rec_stack *n = (void *)(arena + arena_used);
    n->h.type = SPROF_REC_STACK;
    n->h.size = size;
    n->nframes = s->nframes;
    n->ncand = s->ncand;
    n->fp0_off = s->fp0_off;
    n->sp = s->sp;
    n->pc = s->pc;
    n->fp = s->fp;
    memcpy(n + 1, body, blen);
    slots[i].hash = h;
    slots[i].arena_off = arena_used + 1;
    slots[i].index = nstacks++;
    arena_used += size; /* a multiple of 8, as every record */
    sprof_out_raw(n, size);
    *k = n;
    return slots[i].index;
}

void sprof_compact_add(const struct sprof_rec_sample *s)
{
    if (s->h.size < sizeof *s || ensure_maps() != 0) {
        sprof_compact_close();
        sprof_out_raw(s, s->h.size); /* a SAMPLE record: format 2 readers read those too */
        return;
    }
    const struct sprof_rec_stack *k;
    uint32_t index = stack_index(s, &k); /* may write a STACK, even flush: before the batch that uses it */
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
    p += sprof_varint_put(p, sprof_zigzag(s->tid, batch_prev_tid));
    p += sprof_varint_put(p, s->flags);
    p += sprof_varint_put(p, index);
    p += sprof_varint_put(p, sprof_zigzag(s->time_ns, batch_prev_time));
    p += sprof_varint_put(p, sprof_zigzag(s->weight_ns, b->weight_ns));
    p += sprof_varint_put(p, sprof_zigzag(s->pc, k->pc));
    p += sprof_varint_put(p, sprof_zigzag(s->fp, k->fp));
    batch_len = (uint32_t)(p - batch);
    batch_count++;
    batch_prev_tid = s->tid;
    batch_prev_time = s->time_ns;
}
