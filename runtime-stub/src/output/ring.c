#define _GNU_SOURCE
/* Single-producer/single-consumer byte ring of whole records. The producer
 * is a signal handler (or the sampler thread for the aux ring), so reserve
 * and commit are lock-free and touch only preallocated memory. */
#include <string.h>
#include <sys/mman.h>

#include "rt_internal.h"

/* A thread's sample ring holds ~50 ms of 4 KiB samples (deep stacks with
 * their candidates) at the asked rate, between 256 KiB and 2 MiB: at 10 kHz
 * a 256 KiB ring was 8 ms, and a writer starved of CPU on a loaded machine
 * let it overflow (a quarter of the samples dropped). perf_event's rings
 * are sized the same way (sprof_perf_data_pages). */
uint32_t sprof_thread_ring_bytes(void)
{
    uint64_t want = (uint64_t)g_sprof.cfg.hz * 4096u / 20u;
    uint32_t bytes = SPROF_RING_BYTES;
    while (bytes < (8u << 20) / 4 && bytes < want) bytes *= 2;
    return bytes;
}

int sprof_ring_init(struct sprof_ring *r, uint32_t cap)
{
    void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    r->buf = p;
    r->cap = cap;
    atomic_store(&r->head, 0);
    atomic_store(&r->tail, 0);
    return 0;
}

void sprof_ring_free(struct sprof_ring *r)
{
    if (r->buf) munmap(r->buf, r->cap);
    r->buf = NULL;
    r->cap = 0;
}

void *sprof_ring_reserve(struct sprof_ring *r, uint32_t len)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    uint32_t pos = (uint32_t)(head & (r->cap - 1));
    uint32_t to_end = r->cap - pos;
    uint64_t need = len;
    if (len > to_end) need += to_end; /* pad to the end, then start at 0 */
    if (head - tail + need > r->cap) return NULL;
    if (len > to_end) {
        struct sprof_rec_hdr *pad = (struct sprof_rec_hdr *)(r->buf + pos);
        pad->type = 0;
        pad->size = to_end;
        atomic_store_explicit(&r->head, head + to_end, memory_order_release);
        pos = 0;
    }
    return r->buf + pos;
}

void sprof_ring_commit(struct sprof_ring *r, uint32_t len)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    atomic_store_explicit(&r->head, head + len, memory_order_release);
}

uint32_t sprof_ring_fill_256(const struct sprof_ring *r)
{
    if (!r->buf) return 0;
    uint64_t used = atomic_load_explicit(&r->head, memory_order_acquire) -
                    atomic_load_explicit(&r->tail, memory_order_relaxed);
    return (uint32_t)(used * 256 / r->cap);
}

/* The producer's first pass over a ring writes pages that were never
 * touched: each first write faults, in the signal handler, on the
 * program's thread. That is sprof's time on the program's clock, and the
 * kernel samplers took it for the program's own page faults: under the
 * cpuclock pacer at 4 kHz (a 1 MiB ring, ~170-byte samples) the handler
 * faulted ~260 times in a 1.5 s run of acc_fibers, a compute loop that
 * faults nowhere, and 7.8 % of its weight read `[page fault]`. The writer
 * makes the next half of the ring resident on its own CPU instead
 * (MADV_POPULATE_WRITE, Linux 5.14: it changes no byte, so the producer
 * may be writing there meanwhile); a pass writes less than a quarter. */
void sprof_ring_populate_ahead(struct sprof_ring *r)
{
    if (!r->buf || r->resident >= r->cap) return;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t want = head + r->cap / 2;
    if (want > r->cap) want = r->cap; /* also once the producer has wrapped */
    want &= ~(uint64_t)4095;
    if (want <= r->resident) return;
    if (madvise(r->buf + r->resident, want - r->resident, MADV_POPULATE_WRITE) != 0) {
        r->resident = r->cap; /* an older kernel: the handler faults them in, as before */
        return;
    }
    r->resident = (uint32_t)want;
}

uint64_t sprof_ring_drain(struct sprof_ring *r, void (*fn)(const void *rec, uint32_t len))
{
    if (!r->buf) return 0;
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t n = 0;
    while (tail < head) {
        const struct sprof_rec_hdr *h = (const struct sprof_rec_hdr *)(r->buf + (tail & (r->cap - 1)));
        uint32_t size = h->size;
        if (size < 8 || size > r->cap) break; /* cannot happen; never loop forever */
        if (h->type != 0) {
            fn(h, size);
            n++;
        }
        tail += size;
    }
    atomic_store_explicit(&r->tail, tail, memory_order_release);
    return n;
}
