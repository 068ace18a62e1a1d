/* Merge identical raw samples before unwinding (see raw_samples.h).
 *
 * Stored key, in 64-bit words:
 *   [0] 64-bit hash of the rest
 *   [1] pc  [2] sp  [3] fp
 *   [4] fp0_off | flags << 32   [5] tid | nframes << 32   [6] ncand
 *   then the body: ret[nframes], fpoff[nframes] (padded to 8),
 *   cand_off[ncand] (padded), cand_val[ncand]
 * The body is laid out exactly as in a trace's SAMPLE record, so when the
 * reader's view points into the record (the normal case) it is hashed and
 * compared in place: no copy per sample, only per distinct sample.
 * Absolute sp/fp are kept: the unwinder compares rbp with frame record
 * addresses, and a candidate may be a stack address, so only samples with
 * the very same stack words are the same sample. In practice sp is a
 * function of the call chain, so this costs few extra entries. */
#include <stdlib.h>
#include <string.h>

#include "hash64.h"

/* Probe for lookups: uthash hands it to HASH_KEYCMP as the second key. */
typedef struct raw_probe {
    uint64_t hash;
    const uint64_t *head;
    const void *body;
    size_t body_len;
} raw_probe;

#define HEAD_WORDS 6

static int raw_key_cmp(const void *stored, const void *probe_ptr)
{
    const uint64_t *k = stored;
    const raw_probe *p = probe_ptr;
    if (k[0] != p->hash || memcmp(k + 1, p->head, HEAD_WORDS * 8) != 0)
        return 1;
    return p->body_len && memcmp(k + 1 + HEAD_WORDS, p->body, p->body_len) != 0;
}
#define HASH_KEYCMP(a, b, n) raw_key_cmp((a), (b))

#include "raw_samples.h"

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static size_t body_bytes(uint32_t nframes, uint32_t ncand)
{
    return 8 * (size_t)nframes + pad8(4 * (size_t)nframes) + pad8(4 * (size_t)ncand) + 8 * (size_t)ncand;
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

int sprof_raw_add(sprof_raw_table *t, const sprof_sample_view *s, int keep_tid, uint64_t count)
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
    /* records are read in file order: pull the next ones towards the cache
     * while this one is hashed and compared */
    if (body)
        for (size_t ahead = 0; ahead < 1024; ahead += 64)
            __builtin_prefetch((const char *)body + blen + ahead);
    uint64_t h = sprof_hash64(head, sizeof head);
    if (blen)
        h = sprof_mix64(h ^ sprof_hash64(body, blen));
    raw_probe probe = { h, head, body, blen };
    size_t keylen = 8 * (1 + HEAD_WORDS) + blen;
    if (!t->front && !(t->front = calloc(SPROF_RAW_FRONT_SLOTS, sizeof *t->front)))
        return -1;
    sprof_raw_front *slot = &t->front[(h >> 32) & (SPROF_RAW_FRONT_SLOTS - 1)];
    sprof_raw_sample *e = NULL;
    if (slot->entry && slot->hash == h && slot->entry->keylen == keylen &&
        raw_key_cmp(slot->entry->key, &probe) == 0)
        e = slot->entry;
    unsigned hv = (unsigned)h;
    if (!e)
        HASH_FIND_BYHASHVALUE(hh, t->table, &probe, keylen, hv, e);
    if (!e) {
        e = malloc(sizeof *e + keylen);
        if (!e)
            return -1;
        e->count = 0;
        e->weight_ns = 0;
        e->keylen = keylen;
        e->key[0] = h;
        memcpy(e->key + 1, head, sizeof head);
        if (blen)
            memcpy(e->key + 1 + HEAD_WORDS, body, blen);
        HASH_ADD_KEYPTR_BYHASHVALUE(hh, t->table, e->key, keylen, hv, e);
        t->distinct++;
    }
    slot->hash = h;
    slot->entry = e;
    e->count += count;
    e->weight_ns += s->weight_ns;
    return 0;
}

void sprof_raw_view(const sprof_raw_sample *r, sprof_sample_view *s)
{
    const uint64_t *k = r->key + 1;
    memset(s, 0, sizeof *s);
    s->pc = k[0];
    s->sp = k[1];
    s->fp = k[2];
    s->fp0_off = (uint32_t)k[3];
    s->flags = (uint32_t)(k[3] >> 32);
    s->tid = (uint32_t)k[4];
    s->nframes = (uint32_t)(k[4] >> 32);
    s->ncand = (uint32_t)k[5];
    const char *w = (const char *)(k + HEAD_WORDS);
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
    sprof_raw_sample *e, *tmp;
    HASH_ITER(hh, t->table, e, tmp) {
        HASH_DEL(t->table, e);
        free(e);
    }
    free(t->scratch);
    free(t->front);
    memset(t, 0, sizeof *t);
}
