/* close / dup2 / dup3 / close_range / closefrom / fcntl interposition, the
 * same in both link forms (see interpose.c). The runtime's descriptors are
 * not the program's: to the program they are numbers that are not open.
 * So close(ours) and fcntl(ours, ...) fail with EBADF and touch nothing,
 * closefrom and close_range close everything in their range but ours, and
 * a dup2 / dup3 / F_DUPFD that must land on one of our numbers gets it after
 * ours has moved to another (fd_guard.c). The program gets exactly what it
 * would get without sprof, and recording goes on. Raw system calls bypass
 * this; sprof_fd_ours is the backstop there. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

typedef int (*close_fn)(int);
typedef int (*dup2_fn)(int, int);
typedef int (*dup3_fn)(int, int, int);
typedef int (*close_range_fn)(unsigned, unsigned, int);
typedef void (*closefrom_fn)(int);
typedef int (*fcntl_fn)(int, int, ...);

static close_fn real_close;
static dup2_fn real_dup2;
static dup3_fn real_dup3;
static close_range_fn real_close_range;
static closefrom_fn real_closefrom;
static fcntl_fn real_fcntl, real_fcntl64;

/* Resolved before main (dlsym is not async-signal-safe; close is). A call
 * from an earlier constructor resolves on the spot. Priority 101: before
 * the runtime's own start (sprof_ctor, which starts the writer thread that
 * closes descriptors), whatever order the objects are linked in. */
__attribute__((constructor(101))) static void resolve_fd_calls(void)
{
    real_close = (close_fn)dlsym(RTLD_NEXT, "close");
    real_dup2 = (dup2_fn)dlsym(RTLD_NEXT, "dup2");
    real_dup3 = (dup3_fn)dlsym(RTLD_NEXT, "dup3");
    real_close_range = (close_range_fn)dlsym(RTLD_NEXT, "close_range");
    real_closefrom = (closefrom_fn)dlsym(RTLD_NEXT, "closefrom");
    real_fcntl = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
    real_fcntl64 = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl64");
}

#define REAL(name) (real_##name ? real_##name : (resolve_fd_calls(), real_##name))

/* One of the runtime's live descriptors, as seen from this process (a vfork
 * child shares our memory but not our descriptor table). */
static int is_ours(int fd)
{
    if (!sprof_fd_is_owned_number(fd) || getpid() != g_sprof.pid) return 0;
    if (sprof_fd_ours(fd)) return 1;
    sprof_fd_lost_number(fd); /* replaced behind libc's back: the program's now */
    return 0;
}

static int ebadf(void)
{
    errno = EBADF;
    return -1;
}

SPROF_EXPORT int close(int fd)
{
    if (is_ours(fd)) return ebadf();
    close_fn f = REAL(close);
    return f ? f(fd) : (int)syscall(SYS_close, fd);
}

/* the program takes number `to`: ours there moves first */
static int make_room(int to) { return is_ours(to) ? sprof_fd_move_away(to) : 0; }

SPROF_EXPORT int dup2(int from, int to)
{
    if (is_ours(from)) return ebadf();
    if (from != to) make_room(to);
    dup2_fn f = REAL(dup2);
    return f ? f(from, to) : (int)syscall(SYS_dup3, from, to, 0);
}

SPROF_EXPORT int dup3(int from, int to, int flags)
{
    if (is_ours(from)) return ebadf();
    if (from != to) make_room(to);
    dup3_fn f = REAL(dup3);
    return f ? f(from, to, flags) : (int)syscall(SYS_dup3, from, to, flags);
}

static int raw_close_range(unsigned lo, unsigned hi, int flags)
{
    close_range_fn f = REAL(close_range);
    return f ? f(lo, hi, flags) : (int)syscall(SYS_close_range, lo, hi, flags);
}

/* close_range over [lo, hi] minus our numbers: the gaps between them,
 * taking ours 64 at a time, lowest first */
static int close_range_around_ours(unsigned lo, unsigned hi, int flags)
{
    int ours[64], n, rc = 0, err = 0;
    unsigned from = lo;
    do {
        n = getpid() == g_sprof.pid ? sprof_fd_list_in(from, hi, ours, 64) : 0;
        for (int i = 0; i < n; i++) {
            unsigned o = (unsigned)ours[i];
            if (o > from && raw_close_range(from, o - 1, flags) != 0 && !rc) {
                rc = -1;
                err = errno;
            }
            if (o == hi) goto out;
            from = o + 1;
        }
    } while (n == 64);
    if (raw_close_range(from, hi, flags) != 0 && !rc) {
        rc = -1;
        err = errno;
    }
out:
    if (rc) errno = err;
    return rc;
}

SPROF_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
    /* setting close-on-exec on ours changes nothing: they have it */
    if (lo > hi || (flags & CLOSE_RANGE_CLOEXEC)) return raw_close_range(lo, hi, flags);
    return close_range_around_ours(lo, hi, flags);
}

SPROF_EXPORT void closefrom(int lo)
{
    if (lo < 0) lo = 0;
    int any;
    int n = getpid() == g_sprof.pid ? sprof_fd_list_in((unsigned)lo, ~0u, &any, 1) : 0;
    /* nothing of ours in the range, or a kernel without close_range (< 5.9):
     * libc's own closefrom (its /proc fallback would close ours: the
     * identity check then stops recording) */
    if (n == 0 || close_range_around_ours((unsigned)lo, ~0u, 0) != 0) {
        closefrom_fn f = REAL(closefrom);
        if (f) f(lo);
        else raw_close_range((unsigned)lo, ~0u, 0);
    }
}

/* F_DUPFD / F_DUPFD_CLOEXEC: the lowest free number >= min, as if ours
 * were not open. A result above one of ours means the program would have
 * got ours: move it and ask again. */
static int dupfd(fcntl_fn f, int fd, int cmd, long min)
{
    for (;;) {
        int r = f(fd, cmd, min);
        if (r < 0 || min < 0) return r;
        int o;
        if (getpid() != g_sprof.pid || sprof_fd_list_in((unsigned)min, (unsigned)r, &o, 1) == 0) return r;
        syscall(SYS_close, r);
        if (sprof_fd_move_away(o) != 0) return f(fd, cmd, min);
    }
}

static int fcntl_common(fcntl_fn f, int fd, int cmd, void *arg)
{
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (is_ours(fd)) return ebadf();
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) return dupfd(f, fd, cmd, (long)arg);
    return f(fd, cmd, arg);
}

SPROF_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(REAL(fcntl), fd, cmd, arg);
}

SPROF_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(REAL(fcntl64), fd, cmd, arg);
}
