/* sprof's own threads (the writer, the cpuclock/wall sampler) without
 * switching the program into glibc's multi-threaded mode.
 *
 * glibc runs a process differently from its first pthread_create on:
 * malloc takes its arena lock and updates its bins with atomic
 * instructions, system-call wrappers take the cancellable path, private
 * mutexes are taken with atomic instructions. perf, outside the process,
 * changes none of that; an in-process profiler's thread did. Measured here
 * (glibc 2.36), an idle second thread alone made the Spinel corpus's
 * json_parse use 13 % more CPU (_int_malloc 7.6 % -> 13.6 % of perf's
 * samples, _int_free 4.3 % -> 9.1 %) and gcbench 9 %: the program paid for
 * being watched, and under sprof its allocator read 29-32 % of the samples
 * instead of 19 %.
 *
 * So after creating one of its threads in a process that had only one,
 * sprof sets glibc's single-thread flags back: __libc_single_threaded
 * (what glibc's SINGLE_THREAD_P reads on Debian's 2.36 and upstream's
 * 2.37+, and libstdc++ too) and, on x86-64, the calling thread's TCB word
 * that older glibc reads (header.multiple_threads, %fs:0x18), each only if
 * that very pthread_create changed it. The program's own first
 * pthread_create sets both again, as in any process.
 *
 * That is sound only because sprof's threads never use what the flags
 * guard (rt_internal.h, at sprof_own_thread_create): no malloc/free (their
 * memory is mapped), no FILE, no pthread mutex shared with the program
 * (glibc takes one with plain stores while single-threaded: a shared
 * condition variable's mutex hung a program at exit until sprof_lock
 * replaced it), no dl_iterate_phdr/dlopen/dlsym (the loader's lock is such
 * a mutex; /proc/self/maps is read instead), no cancellation. fork is
 * wrapped below. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include <dlfcn.h>

#include "own_pin.h"
#include "rt_internal.h"

typedef pid_t (*fork_fn)(void);

/* Looked up, not linked (a reference would make libsprof.so need glibc
 * 2.32's symbol version to load at all), before the runtime starts: never
 * on sprof's own threads (dlsym takes the loader's lock). */
static char *single_threaded;
static fork_fn real_fork;
static _Atomic int kept_single, kept_tcb; /* sprof set a flag back at least once */

__attribute__((constructor(101))) static void resolve_flags(void)
{
    single_threaded = (char *)dlsym(RTLD_DEFAULT, "__libc_single_threaded");
    real_fork = (fork_fn)dlsym(RTLD_NEXT, "fork");
}

extern int sprof_real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

#if defined(__x86_64__) && defined(__GLIBC__)
/* tcbhead_t: tcb, dtv, self (8 bytes each), then int multiple_threads */
static int tcb_multiple_threads(void)
{
    int v;
    __asm__ volatile("movl %%fs:0x18, %0" : "=r"(v));
    return v;
}
static void tcb_clear_multiple_threads(void) { __asm__ volatile("movl $0, %%fs:0x18" ::: "memory"); }
static void tcb_set_multiple_threads(void) { __asm__ volatile("movl $1, %%fs:0x18" ::: "memory"); }
#endif

int sprof_own_thread_create(pthread_t *th, void *(*fn)(void *))
{
    char *single = single_threaded;
    int single_before = single && *single;
#if defined(__x86_64__) && defined(__GLIBC__)
    int tcb_before = tcb_multiple_threads();
#endif
    /* the thread starts with every signal blocked: none of the program's is
     * ever delivered to it */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = sprof_real_pthread_create(th, NULL, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) return rc;
    if (single_before && !*single) {
        *single = 1;
        atomic_store(&kept_single, 1);
    }
#if defined(__x86_64__) && defined(__GLIBC__)
    if (tcb_before == 0 && tcb_multiple_threads() == 1) {
        tcb_clear_multiple_threads();
        atomic_store(&kept_tcb, 1);
    }
#endif
    return 0;
}

/* fork: glibc decides before anything else whether the process has threads,
 * and if it believes it has none it leaves out what a child of a threaded
 * process needs (counting its threads as one, taking back the other
 * threads' stacks). sprof's threads are real ones, so for the fork the flag
 * says so; the parent gets its single-thread mode back afterwards. */
SPROF_EXPORT pid_t fork(void)
{
    if (!real_fork) {
        errno = ENOSYS;
        return -1;
    }
    char *single = single_threaded;
    int told = atomic_load(&kept_single) && single && *single;
    if (told) *single = 0;
#if defined(__x86_64__) && defined(__GLIBC__)
    int told_tcb = atomic_load(&kept_tcb) && tcb_multiple_threads() == 0;
    if (told_tcb) tcb_set_multiple_threads();
#endif
    pid_t pid = real_fork();
    if (told && pid != 0) *single = 1;
#if defined(__x86_64__) && defined(__GLIBC__)
    if (told_tcb && pid != 0) tcb_clear_multiple_threads();
#endif
    return pid;
}

int sprof_own_pin(struct sprof_own_pin *p, int cpu)
{
    if (cpu == p->here) return 0;
    if (cpu < 0) {
        if (p->have_orig && sched_setaffinity(0, sizeof p->orig, &p->orig) != 0) return -1;
        p->here = -1;
        return 0;
    }
    if (cpu >= CPU_SETSIZE) return -1;
    if (!p->have_orig) p->have_orig = sched_getaffinity(0, sizeof p->orig, &p->orig) == 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) return -1;
    p->here = cpu;
    return 0;
}

int sprof_thread_realtime(uint32_t tid)
{
    int pol = sched_getscheduler((pid_t)tid);
    return pol == SCHED_FIFO || pol == SCHED_RR || pol == 6 /* SCHED_DEADLINE */;
}
