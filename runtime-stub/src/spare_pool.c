/* Sample rings and alternate signal stacks of ended threads, kept for the
 * next threads to start. Under the signal mechanisms a thread start mapped
 * a fresh 256 KiB ring and 64 KiB stack and then faulted their pages in as
 * it used them; taking a used pair costs nothing. At most SPARE_MAX of each
 * are kept (memory), the rest are unmapped. reg_lock guards the pool: the
 * writer gives (at a slot's release), a starting thread takes. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>

#include "rt_internal.h"

#define SPARE_MAX 16

static uint8_t *spare_rings[SPARE_MAX];
static void *spare_alts[SPARE_MAX];
static int n_rings, n_alts;

void sprof_spare_give(uint8_t *ring, uint32_t ring_cap, void *alt, size_t alt_len)
{
    pthread_mutex_lock(&g_sprof.reg_lock);
    if (ring && ring_cap == sprof_thread_ring_bytes() && n_rings < SPARE_MAX) {
        spare_rings[n_rings++] = ring;
        ring = NULL;
    }
    if (alt && alt_len == SPROF_ALTSTACK_BYTES && n_alts < SPARE_MAX) {
        spare_alts[n_alts++] = alt;
        alt = NULL;
    }
    pthread_mutex_unlock(&g_sprof.reg_lock);
    if (ring) munmap(ring, ring_cap);
    if (alt) munmap(alt, alt_len);
}

/* A ring of sprof_thread_ring_bytes(), or NULL. */
uint8_t *sprof_spare_take_ring(void)
{
    pthread_mutex_lock(&g_sprof.reg_lock);
    uint8_t *ring = n_rings ? spare_rings[--n_rings] : NULL;
    pthread_mutex_unlock(&g_sprof.reg_lock);
    return ring;
}

/* An alternate stack of SPROF_ALTSTACK_BYTES, or NULL. */
void *sprof_spare_take_alt(void)
{
    pthread_mutex_lock(&g_sprof.reg_lock);
    void *alt = n_alts ? spare_alts[--n_alts] : NULL;
    pthread_mutex_unlock(&g_sprof.reg_lock);
    return alt;
}
