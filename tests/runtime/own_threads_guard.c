/* LD_PRELOADed after libsprof.so by own_threads_test.sh: reports any call,
 * made on one of sprof's own threads (named sprof-*), of what those threads
 * must never use while the program runs in glibc's single-thread mode
 * (runtime-stub/src/host/own_threads.c): the malloc family, pthread mutexes,
 * the dynamic loader, strerror/strsignal (gettext may allocate). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

typedef int (*mutex_fn)(pthread_mutex_t *);
typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
typedef void *(*dlopen_fn)(const char *, int);
typedef char *(*text_fn)(int);
static text_fn real_strerror, real_strsignal;
static mutex_fn real_lock, real_trylock;
static iterate_fn real_iterate;
static dlopen_fn real_dlopen;

__attribute__((constructor(101))) static void resolve(void)
{
    real_lock = (mutex_fn)dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_trylock = (mutex_fn)dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_iterate = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
    real_dlopen = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    real_strerror = (text_fn)dlsym(RTLD_NEXT, "strerror");
    real_strsignal = (text_fn)dlsym(RTLD_NEXT, "strsignal");
}

static void check(const char *what)
{
    char name[17] = {0};
    prctl(PR_GET_NAME, name);
    if (strncmp(name, "sprof-", 6) != 0) return;
    static const char head[] = "OWN-THREADS: ";
    write(2, head, sizeof head - 1);
    write(2, what, strlen(what));
    write(2, " called on ", 11);
    write(2, name, strlen(name));
    write(2, "\n", 1);
}

void *malloc(size_t n) { check("malloc"); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { check("calloc"); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { check("realloc"); return __libc_realloc(p, n); }
void free(void *p)
{
    if (p) check("free");
    __libc_free(p);
}
int pthread_mutex_lock(pthread_mutex_t *m)
{
    check("pthread_mutex_lock");
    return real_lock(m);
}
int pthread_mutex_trylock(pthread_mutex_t *m)
{
    check("pthread_mutex_trylock");
    return real_trylock(m);
}
int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
    check("dl_iterate_phdr");
    return real_iterate(cb, data);
}
void *dlopen(const char *file, int mode)
{
    check("dlopen");
    return real_dlopen(file, mode);
}
char *strerror(int e)
{
    check("strerror");
    return real_strerror(e);
}
char *strsignal(int s)
{
    check("strsignal");
    return real_strsignal(s);
}
