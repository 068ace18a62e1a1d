/* exec-family interposition, the same in both link forms (see interpose.c
 * for how preemption works). Before the image is replaced the profiler
 * finishes its trace and drops any profiling signal still pending: a
 * real-time signal queued by the pacer just before execve survives into
 * the new image with its default action, and kills it. glibc's exec
 * functions call execve internally, so each one is wrapped, not just execve. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "rt_internal.h"

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* The next definition of `name`; NULL (and ENOSYS) if there is none. */
static void *next_symbol(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) errno = ENOSYS;
    return f;
}

SPROF_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)next_symbol("execve");
    if (!f) return -1;
    sprof_before_exec();
    return f(path, argv, envp);
}

SPROF_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    execve_fn f = (execve_fn)next_symbol("execvpe");
    if (!f) return -1;
    sprof_before_exec();
    return f(file, argv, envp);
}

SPROF_EXPORT int execv(const char *path, char *const argv[])
{
    execv_fn f = (execv_fn)next_symbol("execv");
    if (!f) return -1;
    sprof_before_exec();
    return f(path, argv);
}

SPROF_EXPORT int execvp(const char *file, char *const argv[])
{
    execv_fn f = (execv_fn)next_symbol("execvp");
    if (!f) return -1;
    sprof_before_exec();
    return f(file, argv);
}

SPROF_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    fexecve_fn f = (fexecve_fn)next_symbol("fexecve");
    if (!f) return -1;
    sprof_before_exec();
    return f(fd, argv, envp);
}

/* The list forms: gather the arguments (up to the NULL) into an array on
 * the stack and use the vector forms above. */
static size_t count_args(const char *arg0, va_list ap)
{
    size_t n = 1;
    va_list c;
    va_copy(c, ap);
    if (arg0)
        while (va_arg(c, const char *)) n++;
    va_end(c);
    return n;
}

/* argv[0..n-1] from arg0 and the list, argv[n] = NULL; also consumes the
 * NULL that ends the list, so execle can read envp after it (arg0 is
 * declared nonnull). */
static void gather_args(char **argv, size_t n, const char *arg0, va_list *ap)
{
    argv[0] = (char *)arg0;
    for (size_t i = 1; i < n; i++) argv[i] = va_arg(*ap, char *);
    argv[n] = NULL;
    (void)va_arg(*ap, char *);
}

SPROF_EXPORT int execl(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    size_t n = count_args(arg0, ap);
    char *argv[n + 1];
    gather_args(argv, n, arg0, &ap);
    va_end(ap);
    return execv(path, argv);
}

SPROF_EXPORT int execlp(const char *file, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    size_t n = count_args(arg0, ap);
    char *argv[n + 1];
    gather_args(argv, n, arg0, &ap);
    va_end(ap);
    return execvp(file, argv);
}

SPROF_EXPORT int execle(const char *path, const char *arg0, ...)
{
    va_list ap;
    va_start(ap, arg0);
    size_t n = count_args(arg0, ap);
    char *argv[n + 1];
    gather_args(argv, n, arg0, &ap);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, argv, envp);
}
