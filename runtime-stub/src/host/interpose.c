/* pthread_create interposition, the same in both link forms: the
 * definition here preempts libc's (an executable's symbols and an
 * LD_PRELOADed object come first in symbol lookup) and forwards to the next
 * definition, found with dlsym(RTLD_NEXT). Each new thread registers its
 * slot (ring, timer or perf event) before user code runs and unregisters on
 * return or pthread_exit (cleanup handler). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "rt_internal.h"

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static _Atomic(pthread_create_fn) real_create;

int sprof_real_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    pthread_create_fn f = atomic_load(&real_create);
    if (!f) {
        f = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
        if (!f) return 11; /* EAGAIN: no libc pthread_create (fully static link): not supported */
        atomic_store(&real_create, f);
    }
    return f(th, attr, fn, arg);
}

struct start_args {
    void *(*fn)(void *);
    void *arg;
};

static void on_thread_exit(void *unused)
{
    (void)unused;
    sprof_thread_unregister();
}

static void *trampoline(void *p)
{
    struct start_args a = *(struct start_args *)p;
    free(p);
    sprof_thread_register((uint64_t)(uintptr_t)a.fn); /* unsampled CPU is charged to fn */
    void *ret;
    pthread_cleanup_push(on_thread_exit, NULL);
    ret = a.fn(a.arg);
    pthread_cleanup_pop(1);
    return ret;
}

SPROF_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (!atomic_load(&g_sprof.running)) return sprof_real_pthread_create(th, attr, fn, arg);
    struct start_args *a = malloc(sizeof *a);
    if (!a) return sprof_real_pthread_create(th, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    int rc = sprof_real_pthread_create(th, attr, trampoline, a);
    if (rc != 0) free(a);
    return rc;
}
