#define _GNU_SOURCE
/* Executable address ranges, read by signal handlers without locks.
 * Two static tables: the maps scanner fills the idle one and flips the
 * index. A handler racing with two flips in a row reads a table that is
 * being rewritten: that can only make one validation answer wrong, never
 * read outside static memory (the count is clamped). */
#include <string.h>

#include "rt_internal.h"

#define EXEC_MAX 4096

static uint64_t tab[2][EXEC_MAX][2];
static uint8_t tab_kind[2][EXEC_MAX]; /* SPROF_EXEC_STABLE or SPROF_EXEC_VOLATILE */
static _Atomic uint32_t tab_n[2];
static _Atomic uint32_t cur;
static _Atomic uint64_t tab_gen; /* bumped by every publish: invalidates the walkers' memos */

#define SPROF_EXEC_CACHE_MAGIC 0x5350524f46584543ull

int sprof_exec_kind(uint64_t addr)
{
    uint32_t c = atomic_load_explicit(&cur, memory_order_acquire) & 1;
    uint32_t n = atomic_load_explicit(&tab_n[c], memory_order_relaxed);
    if (n > EXEC_MAX) n = EXEC_MAX;
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (addr < tab[c][mid][0]) hi = mid;
        else if (addr >= tab[c][mid][1]) lo = mid + 1;
        else return tab_kind[c][mid] == SPROF_EXEC_STABLE ? SPROF_EXEC_STABLE : SPROF_EXEC_VOLATILE;
    }
    return SPROF_EXEC_NONE;
}

int sprof_is_exec(uint64_t addr)
{
    return sprof_exec_kind(addr) != SPROF_EXEC_NONE;
}

/* the memos are valid for one table generation */
static void cache_check(struct sprof_exec_cache *c)
{
    uint64_t gen = atomic_load_explicit(&tab_gen, memory_order_acquire);
    if (c->check != (gen ^ SPROF_EXEC_CACHE_MAGIC)) {
        memset(c->tag, 0, sizeof c->tag);
        memset(c->framed, 0, sizeof c->framed);
        c->root_rec = c->root_ret = 0;
        c->top.top = 0;
        c->check = gen ^ SPROF_EXEC_CACHE_MAGIC;
    }
}

static uint32_t framed_slot(uint64_t ret)
{
    return (uint32_t)((ret * 0x9E3779B97F4A7C15ull) >> 58) & (SPROF_FRAMED_SLOTS - 1);
}

int sprof_framed_known(struct sprof_exec_cache *c, uint64_t ret)
{
    cache_check(c);
    return ret && c->framed[framed_slot(ret)] == ret;
}

void sprof_framed_note(struct sprof_exec_cache *c, uint64_t ret)
{
    cache_check(c);
    c->framed[framed_slot(ret)] = ret;
}

int sprof_root_known(struct sprof_exec_cache *c, uint64_t rec, uint64_t ret)
{
    cache_check(c);
    return c->root_rec == rec && c->root_ret == ret;
}

void sprof_root_note(struct sprof_exec_cache *c, uint64_t rec, uint64_t ret)
{
    cache_check(c);
    c->root_rec = rec;
    c->root_ret = ret;
}

struct sprof_top_memo *sprof_top_memo_of(struct sprof_exec_cache *c)
{
    cache_check(c);
    return &c->top;
}

int sprof_is_exec_cached(struct sprof_exec_cache *c, uint64_t addr)
{
    return sprof_exec_kind_cached(c, addr) != SPROF_EXEC_NONE;
}

int sprof_exec_kind_cached(struct sprof_exec_cache *c, uint64_t addr)
{
    /* most words a candidate scan reads (counts, sizes, flags, data) lie
     * outside every executable range: no hash, no memo for those */
    uint32_t t_cur = atomic_load_explicit(&cur, memory_order_acquire) & 1;
    uint32_t t_n = atomic_load_explicit(&tab_n[t_cur], memory_order_relaxed);
    if (t_n == 0 || t_n > EXEC_MAX || addr < tab[t_cur][0][0] || addr >= tab[t_cur][t_n - 1][1]) return 0;
    cache_check(c);
    uint64_t page = addr >> 12;
    uint32_t slot = (uint32_t)((page * 0x9E3779B97F4A7C15ull) >> 57) & (SPROF_EXEC_CACHE_SLOTS - 1);
    uint64_t t = c->tag[slot];
    if (t && ((t - 1) >> 2) == page) return (int)((t - 1) & 3);
    int r = sprof_exec_kind(addr);
    c->tag[slot] = ((page << 2) | (uint64_t)r) + 1;
    return r;
}

/* The table handlers read now holds exactly these ranges. */
static int same_as_current(const uint64_t *ranges, const uint8_t *kinds, uint32_t n)
{
    uint32_t c = atomic_load(&cur) & 1;
    if (atomic_load(&tab_n[c]) != n) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (tab[c][i][0] != ranges[2 * i] || tab[c][i][1] != ranges[2 * i + 1] || tab_kind[c][i] != kinds[i])
            return 0;
    return 1;
}

/* ranges: n sorted [start, end) pairs. The maps are read every 100 ms; a
 * flip happens only when they changed, so a handler never sees two flips
 * while it reads one table. */
void sprof_exec_table_publish(const uint64_t *ranges, const uint8_t *kinds, uint32_t n)
{
    if (n > EXEC_MAX) n = EXEC_MAX;
    if (same_as_current(ranges, kinds, n)) return;
    uint32_t next = (atomic_load(&cur) + 1) & 1;
    atomic_store(&tab_n[next], 0);
    for (uint32_t i = 0; i < n; i++) {
        tab[next][i][0] = ranges[2 * i];
        tab[next][i][1] = ranges[2 * i + 1];
        tab_kind[next][i] = kinds[i];
    }
    atomic_store(&tab_n[next], n);
    atomic_store_explicit(&cur, next, memory_order_release);
    atomic_fetch_add_explicit(&tab_gen, 1, memory_order_release);
}
