/* Merge identical raw samples before unwinding (see raw_samples.h).
 *
 * An entry's head, in 64-bit words:
 *   [0] pc  [1] sp  [2] fp
 *   [3] fp0_off | flags << 32   [4] tid | nframes << 32   [5] ncand
 * and its body: ret[nframes], fpoff[nframes] (padded to 8),
 * cand_off[ncand] (padded), cand_val[ncand]
 * The body is laid out exactly as in a trace's SAMPLE record, so when the
 * reader's view points into the record (the normal case) it is hashed and
 * compared in place; past COPY_BUDGET bytes of copies the entry points
 * into the trace's mapping instead of a copy.
 * Absolute sp/fp are kept: the unwinder compares rbp with frame record
 * addresses, and a candidate may be a stack address, so only samples with
 * the very same stack words are the same sample. In practice sp is a
 * function of the call chain, so this costs few extra entries. */
#include <stdlib.h>
#include <string.h>

#include "hash64.h"
#include "raw_samples.h"

#define HEAD_WORDS SPROF_RAW_HEAD_WORDS
/* Bodies are copied next to each other up to this many bytes (a repeated
 * sample compares against its copy, in a few hot cache lines instead of a
 * page of the file each), and left in the mapping beyond, so a trace of
 * mostly distinct samples is not held twice. */
#define COPY_BUDGET ((size_t)16 << 20)

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static size_t body_bytes(uint32_t nframes, uint32_t ncand)
{
    return 8 * (size_t)nframes + pad8(4 * (size_t)nframes) + pad8(4 * (size_t)ncand) + 8 * (size_t)ncand;
}

static size_t entry_body_bytes(const sprof_raw_sample *e)
{
    return body_bytes((uint32_t)(e->head[4] >> 32), (uint32_t)e->head[5]);
}

static int same_sample(const sprof_raw_sample *e, const uint64_t *head, const void *body, size_t blen)
{
    return memcmp(e->head, head, sizeof e->head) == 0 && (!blen || memcmp(e->body, body, blen) == 0);
}

/* The body as one byte range: in place when the view's arrays are laid out
 * as in the record, else copied into scratch. */
static const void *sample_body(sprof_raw_table *t, const sprof_sample_view *s, size_t len)
{
    const char *ret = (const char *)s->ret;
    const char *fpoff = ret + 8 * (size_t)s->nframes;
    const char *coff = fpoff + pad8(4 * (size_t)s->nframes);
    const char *cval = coff + pad8(4 * (size_t)s->ncand);
    if (len == 0)
        return NULL;
    if (s->nframes && s->ncand && (const char *)s->fpoff == fpoff && (const char *)s->cand_off == coff &&
        (const char *)s->cand_val == cval)
        return ret;
    if (s->nframes && !s->ncand && (const char *)s->fpoff == fpoff && (4 * (size_t)s->nframes) % 8 == 0)
        return ret;
    size_t words = len / 8;
    if (words > t->scratch_words) {
        uint64_t *v = realloc(t->scratch, words * sizeof *v);
        if (!v)
            return NULL;
        t->scratch = v;
        t->scratch_words = words;
    }
    char *w = (char *)t->scratch;
    memset(w, 0, len);
    memcpy(w, s->ret, 8 * (size_t)s->nframes);
    w += 8 * (size_t)s->nframes;
    memcpy(w, s->fpoff, 4 * (size_t)s->nframes);
    w += pad8(4 * (size_t)s->nframes);
    memcpy(w, s->cand_off, 4 * (size_t)s->ncand);
    w += pad8(4 * (size_t)s->ncand);
    memcpy(w, s->cand_val, 8 * (size_t)s->ncand);
    return t->scratch;
}

static int add_entry(sprof_raw_table *t, uint32_t h32, const uint64_t *head, const void *body, size_t blen,
                     int in_place)
{
    if (t->distinct == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        sprof_raw_sample *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    sprof_raw_sample *e = &t->v[t->distinct];
    memcpy(e->head, head, sizeof e->head);
    e->body = body;
    if (blen && (!in_place || t->copied + blen <= COPY_BUDGET)) {
        void *copy = sprof_arena_alloc(&t->copies, blen);
        t->copied += blen;
        if (copy)
            memcpy(copy, body, blen);
        e->body = copy;
    }
    if (blen && !e->body)
        return -1;
    e->count = 0;
    e->weight_ns = 0;
    if (sprof_index_add(&t->index, h32, (uint32_t)t->distinct) != 0)
        return -1;
    t->distinct++;
    return 0;
}

int sprof_raw_add(sprof_raw_table *t, const sprof_sample_view *s, int keep_tid, uint64_t count, uint32_t *index)
{
    uint64_t head[HEAD_WORDS] = {
        s->pc, s->sp, s->fp,
        (uint64_t)s->fp0_off | (uint64_t)s->flags << 32,
        (uint64_t)(keep_tid ? s->tid : 0) | (uint64_t)s->nframes << 32,
        s->ncand,
    };
    size_t blen = body_bytes(s->nframes, s->ncand);
    const void *body = sample_body(t, s, blen);
    if (blen && !body)
        return -1;
    int in_place = body != t->scratch;
    /* records are read in file order: pull the next ones towards the cache
     * while this one is hashed and compared */
    if (body)
        for (size_t ahead = 0; ahead < 1024; ahead += 64)
            __builtin_prefetch((const char *)body + blen + ahead);
    uint64_t h = sprof_hash64(head, sizeof head);
    if (blen)
        h = sprof_mix64(h ^ sprof_hash64(body, blen));
    if (!t->front && !(t->front = calloc(SPROF_RAW_FRONT_SLOTS, sizeof *t->front)))
        return -1;
    sprof_raw_front *slot = &t->front[(h >> 32) & (SPROF_RAW_FRONT_SLOTS - 1)];
    uint32_t found = 0; /* index + 1 */
    if (slot->index && slot->hash == h && same_sample(&t->v[slot->index - 1], head, body, blen))
        found = slot->index;
    uint32_t h32 = sprof_index_hash(h), i;
    for (size_t pos = sprof_index_first(&t->index, h32); !found && sprof_index_next(&t->index, &pos, h32, &i);)
        if (same_sample(&t->v[i], head, body, blen))
            found = i + 1;
    if (!found) {
        if (add_entry(t, h32, head, body, blen, in_place) != 0)
            return -1;
        found = (uint32_t)t->distinct;
    }
    slot->hash = h;
    slot->index = found;
    sprof_raw_sample *e = &t->v[found - 1];
    if (index)
        *index = found - 1;
    e->count += count;
    e->weight_ns += s->weight_ns;
    return 0;
}

void sprof_raw_view(const sprof_raw_sample *r, sprof_sample_view *s)
{
    const uint64_t *k = r->head;
    memset(s, 0, sizeof *s);
    s->pc = k[0];
    s->sp = k[1];
    s->fp = k[2];
    s->fp0_off = (uint32_t)k[3];
    s->flags = (uint32_t)(k[3] >> 32);
    s->tid = (uint32_t)k[4];
    s->nframes = (uint32_t)(k[4] >> 32);
    s->ncand = (uint32_t)k[5];
    static const uint64_t none[1];
    const char *w = entry_body_bytes(r) ? (const char *)r->body : (const char *)none;
    s->ret = (const uint64_t *)(const void *)w;
    w += 8 * (size_t)s->nframes;
    s->fpoff = (const uint32_t *)(const void *)w;
    w += pad8(4 * (size_t)s->nframes);
    s->cand_off = (const uint32_t *)(const void *)w;
    w += pad8(4 * (size_t)s->ncand);
    s->cand_val = (const uint64_t *)(const void *)w;
}

void sprof_raw_free(sprof_raw_table *t)
{
    sprof_arena_free(&t->copies);
    free(t->v);
    sprof_index_free(&t->index);
    free(t->scratch);
    free(t->front);
    memset(t, 0, sizeof *t);
}
