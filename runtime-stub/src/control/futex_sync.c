/* Futex waits and wakes, and the lock built on them that sprof's own
 * threads share with the program's (the slot registry, the spare pool):
 * atomic whatever glibc believes of the process. glibc's
 * pthread_mutex_lock takes a private mutex with plain stores while
 * __libc_single_threaded is set, and sprof keeps it set for a program that
 * has no thread of its own (host/own_threads.c): a pthread mutex shared
 * with the writer lost an update and hung a program at exit. The writer's
 * and the pacer's sleeps use the same wait (writer.c, sampler_thread.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

int sprof_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns)
{
    struct timespec ts = {(time_t)(deadline_ns / 1000000000ull), (long)(deadline_ns % 1000000000ull)};
    /* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC deadline */
    long rc = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, expected, deadline_ns ? &ts : NULL,
                      NULL, FUTEX_BITSET_MATCH_ANY);
    return !(rc != 0 && errno == ETIMEDOUT);
}

/* Async-signal-safe: the profiling handler wakes the pacer with it. */
void sprof_futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Three states (Drepper, "Futexes Are Tricky"): 0 free, 1 taken, 2 taken
 * with waiters. */
void sprof_lock(_Atomic uint32_t *l)
{
    uint32_t c = 0;
    if (atomic_compare_exchange_strong(l, &c, 1)) return;
    if (c != 2) c = atomic_exchange(l, 2);
    while (c != 0) {
        sprof_futex_wait(l, 2, 0);
        c = atomic_exchange(l, 2);
    }
}

void sprof_unlock(_Atomic uint32_t *l)
{
    if (atomic_exchange(l, 0) == 2) sprof_futex_wake(l);
}
