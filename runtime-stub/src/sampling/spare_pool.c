/* Memory a thread needs under the signal mechanisms (its sample ring, its
 * alternate signal stack, its walk scratch), mapped ahead by the writer so
 * that a starting thread maps nothing itself.
 *
 * A thread start used to map all three (three mmap calls, each taking the
 * process's mmap lock, which the writer's unmapping of ended threads' memory
 * also held: new threads spun on it). That cost ~5-10 us of the new
 * thread's own CPU, the program's. Now the writer keeps each kind stocked:
 * ended threads' memory comes back here (kept, not unmapped, up to
 * SPARE_MAX or SPARE_BYTES of each kind), and each writer pass maps what is missing up to a target that
 * follows the rate of thread starts. A start that leaves a kind low asks the
 * writer for more (at most one wake-up a ms, shared with the perf attach).
 * Only when the pool is empty does a thread map its own.
 *
 * reg_lock guards the pool; mmap and munmap happen outside it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>

#include "rt_internal.h"

#define SPARE_MAX 64                /* of each kind */
#define SPARE_BYTES (16u << 20)     /* and at most this much of each kind (2 MiB rings at 10 kHz: 8) */
#define SPARE_MIN 4                 /* kept ready even when no thread starts */
#define SPARE_RING_RESIDENT (64u << 10) /* of a stocked ring, faulted in by the writer */

enum { SPARE_RING, SPARE_ALT, SPARE_SCRATCH, SPARE_KINDS };

static void *spares[SPARE_KINDS][SPARE_MAX];
static int n_spares[SPARE_KINDS];
static _Atomic unsigned taken_since_stock; /* thread starts since the writer's last stock */

static size_t kind_bytes(int kind)
{
    switch (kind) {
    case SPARE_RING: return sprof_thread_ring_bytes();
    case SPARE_ALT: return SPROF_ALTSTACK_BYTES;
    default: return sprof_thread_scratch_bytes();
    }
}

/* An ended thread's memory is resident as far as it was used: the pool's
 * bytes are bounded, not only its count. */
static int kind_cap(int kind)
{
    size_t n = SPARE_BYTES / kind_bytes(kind);
    return n > SPARE_MAX ? SPARE_MAX : n < SPARE_MIN ? SPARE_MIN : (int)n;
}

static void give(int kind, void *p, size_t len)
{
    if (!p) return;
    sprof_lock(&g_sprof.reg_lock);
    if (len == kind_bytes(kind) && n_spares[kind] < kind_cap(kind)) {
        spares[kind][n_spares[kind]++] = p;
        p = NULL;
    }
    sprof_unlock(&g_sprof.reg_lock);
    if (p) munmap(p, len);
}

static void *take(int kind)
{
    sprof_lock(&g_sprof.reg_lock);
    void *p = n_spares[kind] ? spares[kind][--n_spares[kind]] : NULL;
    int left = n_spares[kind];
    sprof_unlock(&g_sprof.reg_lock);
    if (kind == SPARE_RING) atomic_fetch_add_explicit(&taken_since_stock, 1, memory_order_relaxed);
    if (left < SPARE_MIN / 2 + 1) {
        atomic_store(&g_sprof.spares_wanted, 1);
        sprof_writer_nudge();
    }
    return p;
}

void sprof_spare_give(uint8_t *ring, uint32_t ring_cap, void *alt, size_t alt_len)
{
    give(SPARE_RING, ring, ring_cap);
    give(SPARE_ALT, alt, alt_len);
}

uint8_t *sprof_spare_take_ring(void) { return take(SPARE_RING); }
void *sprof_spare_take_alt(void) { return take(SPARE_ALT); }
void *sprof_spare_take_scratch(void) { return take(SPARE_SCRATCH); }

/* Writer (or sprof_start), no lock held: map each kind up to twice the
 * thread starts since the last call, at least SPARE_MIN, at most SPARE_MAX. */
void sprof_spare_stock(void)
{
    if (!sprof_uses_signals()) return;
    unsigned want = 2 * atomic_exchange_explicit(&taken_since_stock, 0, memory_order_relaxed);
    if (want < SPARE_MIN) want = SPARE_MIN;
    for (int kind = 0; kind < SPARE_KINDS; kind++) {
        size_t len = kind_bytes(kind);
        int target = (int)want < kind_cap(kind) ? (int)want : kind_cap(kind);
        for (;;) {
            sprof_lock(&g_sprof.reg_lock);
            int have = n_spares[kind];
            sprof_unlock(&g_sprof.reg_lock);
            if (have >= target) break;
            void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) return; /* threads map their own, or run unprofiled */
            /* a ring's first samples come before the writer's first pass
             * over it makes more resident (sprof_ring_populate_ahead) */
            if (kind == SPARE_RING) madvise(p, len < SPARE_RING_RESIDENT ? len : SPARE_RING_RESIDENT, MADV_POPULATE_WRITE);
            give(kind, p, len);
        }
    }
}
