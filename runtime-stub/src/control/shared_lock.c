/* The lock sprof's own threads share with the program's (the slot
 * registry, the spare pool), atomic whatever glibc believes of the process.
 * glibc's pthread_mutex_lock takes a private mutex with plain stores while
 * __libc_single_threaded is set, and sprof keeps it set for a program that
 * has no thread of its own (host/own_threads.c): a pthread mutex shared
 * with the writer lost an update and hung a program at exit. Three states
 * (Drepper, "Futexes Are Tricky"): 0 free, 1 taken, 2 taken with waiters. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

void sprof_lock(_Atomic int *l)
{
    int c = 0;
    if (atomic_compare_exchange_strong(l, &c, 1)) return;
    if (c != 2) c = atomic_exchange(l, 2);
    while (c != 0) {
        syscall(SYS_futex, (int *)l, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange(l, 2);
    }
}

void sprof_unlock(_Atomic int *l)
{
    if (atomic_exchange(l, 0) == 2) syscall(SYS_futex, (int *)l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
