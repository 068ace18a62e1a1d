/* Merge identical raw samples before unwinding (see raw_samples.h).
 *
 * Key layout, in 64-bit words:
 *   [0] pc  [1] sp  [2] fp
 *   [3] fp0_off | flags << 32   [4] tid | nframes << 32   [5] ncand
 *   ret[nframes], fpoff[nframes] (packed 2 per word, padded),
 *   cand_off[ncand] (packed, padded), cand_val[ncand]
 * Absolute sp/fp are kept: the unwinder compares rbp with frame record
 * addresses, and a candidate may be a stack address, so only samples with
 * the very same stack words are the same sample. In practice sp is a
 * function of the call chain, so this costs few extra entries. */
#include "raw_samples.h"

#include <stdlib.h>
#include <string.h>

#include "hash64.h"

#define HEAD_WORDS 6

static size_t half_words(uint32_t n)
{
    return ((size_t)n + 1) / 2;
}

static size_t key_words(uint32_t nframes, uint32_t ncand)
{
    return HEAD_WORDS + nframes + half_words(nframes) + half_words(ncand) + ncand;
}

int sprof_raw_add(sprof_raw_table *t, const sprof_sample_view *s, int keep_tid)
{
    size_t words = key_words(s->nframes, s->ncand);
    if (words > t->scratch_words) {
        uint64_t *v = realloc(t->scratch, words * sizeof *v);
        if (!v)
            return -1;
        t->scratch = v;
        t->scratch_words = words;
    }
    uint64_t *k = t->scratch;
    k[0] = s->pc;
    k[1] = s->sp;
    k[2] = s->fp;
    k[3] = (uint64_t)s->fp0_off | (uint64_t)s->flags << 32;
    k[4] = (uint64_t)(keep_tid ? s->tid : 0) | (uint64_t)s->nframes << 32;
    k[5] = s->ncand;
    uint64_t *w = k + HEAD_WORDS;
    if (s->nframes) {
        memcpy(w, s->ret, s->nframes * sizeof(uint64_t));
        w += s->nframes;
        w[half_words(s->nframes) - 1] = 0;
        memcpy(w, s->fpoff, s->nframes * sizeof(uint32_t));
        w += half_words(s->nframes);
    }
    if (s->ncand) {
        w[half_words(s->ncand) - 1] = 0;
        memcpy(w, s->cand_off, s->ncand * sizeof(uint32_t));
        w += half_words(s->ncand);
        memcpy(w, s->cand_val, s->ncand * sizeof(uint64_t));
    }
    size_t keylen = words * sizeof(uint64_t);
    unsigned hv = (unsigned)sprof_hash64(k, keylen);
    sprof_raw_sample *e;
    HASH_FIND_BYHASHVALUE(hh, t->table, k, keylen, hv, e);
    if (!e) {
        e = malloc(sizeof *e + keylen);
        if (!e)
            return -1;
        e->count = 0;
        e->weight_ns = 0;
        e->keylen = keylen;
        memcpy(e->key, k, keylen);
        HASH_ADD_KEYPTR_BYHASHVALUE(hh, t->table, e->key, keylen, hv, e);
        t->distinct++;
    }
    e->count++;
    e->weight_ns += s->weight_ns;
    return 0;
}

void sprof_raw_view(const sprof_raw_sample *r, sprof_sample_view *s)
{
    const uint64_t *k = r->key;
    memset(s, 0, sizeof *s);
    s->pc = k[0];
    s->sp = k[1];
    s->fp = k[2];
    s->fp0_off = (uint32_t)k[3];
    s->flags = (uint32_t)(k[3] >> 32);
    s->tid = (uint32_t)k[4];
    s->nframes = (uint32_t)(k[4] >> 32);
    s->ncand = (uint32_t)k[5];
    const uint64_t *w = k + HEAD_WORDS;
    s->ret = w;
    w += s->nframes;
    s->fpoff = (const uint32_t *)w;
    w += half_words(s->nframes);
    s->cand_off = (const uint32_t *)w;
    w += half_words(s->ncand);
    s->cand_val = w;
}

void sprof_raw_free(sprof_raw_table *t)
{
    sprof_raw_sample *e, *tmp;
    HASH_ITER(hh, t->table, e, tmp) {
        HASH_DEL(t->table, e);
        free(e);
    }
    free(t->scratch);
    memset(t, 0, sizeof *t);
}
