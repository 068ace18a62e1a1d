/* The joined profile model: interned frames, merged stacks. */
#include <stdlib.h>
#include <string.h>

#include "hash64.h"
#include "sprof/native_demangle.h"
#include "profile_internal.h"

void sprof_profile_init(sprof_profile *p)
{
    memset(p, 0, sizeof *p);
    p->internal = calloc(1, sizeof *p->internal);
}

void sprof_profile_free(sprof_profile *p)
{
    if (!p)
        return;
    if (p->internal) {
        free(p->internal->frame_keys);
        free(p->internal->key_buf);
        sprof_index_free(&p->internal->frame_index);
        sprof_arena_free(&p->internal->frame_strings); /* every frame's strings */
        sprof_index_free(&p->internal->stack_index);
        sprof_arena_free(&p->internal->stack_frames); /* the stacks' frames */
        free(p->internal->roles);
        free(p->internal);
    }
    free(p->frames);
    free(p->stacks);
    free(p->binary_path);
    for (size_t i = 0; i < p->ntraces; i++)
        free(p->traces[i].path);
    free(p->traces);
    free(p->timeline);
    free(p->threads);
    free(p->exact_counts);
    memset(p, 0, sizeof *p);
}

static const char *nz(const char *s)
{
    return s ? s : "";
}

uint32_t sprof_profile_intern_frame(sprof_profile *p, const sprof_pframe *f)
{
    struct sprof_profile_internal *in = p->internal;
    const char *strs[4] = { nz(f->name), nz(f->c_name), nz(f->file), nz(f->module) };
    size_t lens[4], total = 0;
    for (int i = 0; i < 4; i++) {
        lens[i] = strlen(strs[i]) + 1;
        total += lens[i];
    }
    size_t keylen = total + 8;
    if (keylen > in->key_cap) {
        char *buf = realloc(in->key_buf, keylen);
        if (!buf)
            abort(); /* out of memory while building a profile: nothing sensible to return */
        in->key_buf = buf;
        in->key_cap = keylen;
    }
    char *k = in->key_buf;
    for (int i = 0; i < 4; i++) {
        memcpy(k, strs[i], lens[i]);
        k += lens[i];
    }
    memcpy(k, &f->line, 4);
    k[4] = (char)f->kind;
    k[5] = (char)f->cost;
    memcpy(k + 6, &f->flags, 2);
    uint32_t h = sprof_index_hash(sprof_hash64(in->key_buf, keylen)), i;
    for (size_t pos = sprof_index_first(&in->frame_index, h); sprof_index_next(&in->frame_index, &pos, h, &i);)
        if (in->frame_keys[i].keylen == keylen && memcmp(in->frame_keys[i].key, in->key_buf, keylen) == 0)
            return i;
    if (p->nframes == in->frames_cap) {
        size_t cap = in->frames_cap ? in->frames_cap * 2 : 256;
        sprof_pframe *v = realloc(p->frames, cap * sizeof *v);
        if (v)
            p->frames = v;
        sprof_frame_key *keys = v ? realloc(in->frame_keys, cap * sizeof *keys) : NULL;
        if (!keys)
            abort();
        in->frame_keys = keys;
        in->frames_cap = cap;
    }
    /* Native names enter mangled from ELF symbols, perf script and older
     * symmaps: a new frame shows the demangled name (once per distinct
     * frame; the key, and so the frame's identity, stays the raw name, and
     * c_name keeps it for --c-names and pprof's system_name). */
    char dm[1024];
    const char *shown = strs[0];
    if (f->kind == SPROF_KIND_NATIVE && !(f->flags & SPROF_PFRAME_SYNTHETIC) &&
        sprof_native_demangle(strs[0], dm, sizeof dm))
        shown = dm;
    /* the frame's strings are the key's, but for a demangled name */
    char *key = sprof_arena_alloc(&in->frame_strings, keylen);
    char *name = shown == strs[0] ? key : sprof_arena_alloc(&in->frame_strings, strlen(shown) + 1);
    if (!key || !name || sprof_index_add(&in->frame_index, h, (uint32_t)p->nframes) != 0)
        abort();
    memcpy(key, in->key_buf, keylen);
    if (name != key)
        strcpy(name, shown);
    in->frame_keys[p->nframes] = (sprof_frame_key){ key, keylen };
    sprof_pframe *nf = &p->frames[p->nframes];
    *nf = *f;
    nf->name = name;
    nf->c_name = key + lens[0];
    nf->file = key + lens[0] + lens[1];
    nf->module = key + lens[0] + lens[1] + lens[2];
    return (uint32_t)p->nframes++;
}

static uint64_t stack_hash(const uint32_t *frames, uint32_t n, uint32_t tid)
{
    return sprof_mix64(sprof_hash64(frames, (size_t)n * sizeof *frames) ^ ((uint64_t)tid << 32 | n));
}

int sprof_pstack_time_class(const sprof_profile *p, const sprof_pstack *s)
{
    for (uint32_t j = 0; j < s->nframes; j++)
        if (p->frames[s->frames[j]].cost == SPROF_COST_GC)
            return SPROF_COST_GC;
    int c = s->nframes ? p->frames[s->frames[s->nframes - 1]].cost : SPROF_COST_NATIVE;
    return c < SPROF_COST_COUNT ? c : SPROF_COST_NATIVE;
}

int sprof_profile_add_stack(sprof_profile *p, const uint32_t *frames, uint32_t n, uint64_t samples,
                            uint64_t cpu_ns, uint32_t tid)
{
    uint32_t index;
    return sprof_profile_add_stack_at(p, frames, n, samples, cpu_ns, tid, &index);
}

int sprof_profile_add_stack_at(sprof_profile *p, const uint32_t *frames, uint32_t n, uint64_t samples,
                               uint64_t cpu_ns, uint32_t tid, uint32_t *index)
{
    for (uint32_t i = 0; i < n; i++)
        if (frames[i] >= p->nframes)
            return -1;
    struct sprof_profile_internal *in = p->internal;
    uint32_t h = sprof_index_hash(stack_hash(frames, n, tid)), i;
    for (size_t pos = sprof_index_first(&in->stack_index, h); sprof_index_next(&in->stack_index, &pos, h, &i);) {
        sprof_pstack *s = &p->stacks[i];
        if (s->tid == tid && s->nframes == n && (!n || memcmp(s->frames, frames, n * sizeof *frames) == 0)) {
            s->samples += samples;
            s->cpu_ns += cpu_ns;
            *index = i;
            return 0;
        }
    }
    if (p->nstacks == in->stacks_cap) {
        size_t cap = in->stacks_cap ? in->stacks_cap * 2 : 256;
        sprof_pstack *v = realloc(p->stacks, cap * sizeof *v);
        if (!v)
            return -1;
        p->stacks = v;
        in->stacks_cap = cap;
    }
    uint32_t *copy = sprof_arena_alloc(&in->stack_frames, n ? n * sizeof *copy : 1);
    if (!copy || sprof_index_add(&in->stack_index, h, (uint32_t)p->nstacks) != 0)
        return -1;
    if (n)
        memcpy(copy, frames, n * sizeof *frames);
    *index = (uint32_t)p->nstacks;
    p->stacks[p->nstacks++] = (sprof_pstack){ n, copy, samples, cpu_ns, tid };
    return 0;
}
