#define _GNU_SOURCE
/* Executable address ranges, read by signal handlers without locks.
 * Two static tables: the maps scanner fills the idle one and flips the
 * index. A handler racing with two flips in a row reads a table that is
 * being rewritten: that can only make one validation answer wrong, never
 * read outside static memory (the count is clamped). */
#include "rt_internal.h"

#define EXEC_MAX 4096

static uint64_t tab[2][EXEC_MAX][2];
static _Atomic uint32_t tab_n[2];
static _Atomic uint32_t cur;

int sprof_is_exec(uint64_t addr)
{
    uint32_t c = atomic_load_explicit(&cur, memory_order_acquire) & 1;
    uint32_t n = atomic_load_explicit(&tab_n[c], memory_order_relaxed);
    if (n > EXEC_MAX) n = EXEC_MAX;
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (addr < tab[c][mid][0]) hi = mid;
        else if (addr >= tab[c][mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

/* ranges: n sorted [start, end) pairs */
void sprof_exec_table_publish(const uint64_t *ranges, uint32_t n)
{
    uint32_t next = (atomic_load(&cur) + 1) & 1;
    if (n > EXEC_MAX) n = EXEC_MAX;
    atomic_store(&tab_n[next], 0);
    for (uint32_t i = 0; i < n; i++) {
        tab[next][i][0] = ranges[2 * i];
        tab[next][i][1] = ranges[2 * i + 1];
    }
    atomic_store(&tab_n[next], n);
    atomic_store_explicit(&cur, next, memory_order_release);
}
