/* The runtime's own descriptors, kept apart from the program's.
 *
 * Every descriptor the runtime holds while program code runs (the trace
 * file, each thread's perf event, the pacer's /proc stat files) is adopted
 * here: moved to a high number (fd_base() and up, close-on-exec) and its
 * identity recorded. Before the runtime writes to, ioctls or closes one, it
 * checks the number still holds that file (sprof_fd_ours); if the program
 * closed or replaced it behind libc's back (raw system calls), the runtime
 * forgets the number without touching it and stops recording with one
 * warning. The libc calls that close or replace descriptors are interposed
 * (fd_interpose.c) and use the table below to leave the program exactly
 * the semantics it asked for.
 *
 * The table is lock-free (close() may be called from a signal handler and
 * after fork): entries are claimed with a CAS, and a bitmap of the numbers
 * in use makes the check in the interposed calls one load. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

#define FD_ENTRIES (4 * SPROF_MAX_THREADS + 16) /* trace + perf, phase, stat, syscall per thread */
#define FD_BITMAP_FDS 65536                     /* numbers the fast check covers */

struct owned_fd {
    _Atomic int fd_plus1; /* 0: free; -1: being filled; else fd + 1 */
    int kind;             /* enum sprof_fd_kind */
    int *where;           /* the runtime's variable holding the number */
    uint64_t dev, ino;    /* fstat at adoption */
    uint64_t event_id;    /* perf: PERF_EVENT_IOC_ID (all perf fds share one anon inode) */
};

static struct owned_fd owned[FD_ENTRIES];
static _Atomic int owned_hi; /* entries at or above this were never used */
static _Atomic uint64_t owned_bits[FD_BITMAP_FDS / 64];
static _Atomic int lost_warned;

static long sys_close(int fd) { return syscall(SYS_close, fd); }

static void bit_set(int fd, int on)
{
    if (fd < 0 || fd >= FD_BITMAP_FDS) return;
    uint64_t m = 1ull << (fd % 64);
    if (on) atomic_fetch_or(&owned_bits[fd / 64], m);
    else atomic_fetch_and(&owned_bits[fd / 64], ~m);
}

int sprof_fd_is_owned_number(int fd)
{
    if (fd < 0 || fd >= FD_BITMAP_FDS) return 0;
    return (atomic_load_explicit(&owned_bits[fd / 64], memory_order_acquire) >> (fd % 64)) & 1;
}

/* Where the runtime's numbers start: above FD_SETSIZE (1024) when the soft
 * RLIMIT_NOFILE leaves room for them there, else in the upper half of the
 * numbers allowed. A select() program's own descriptors then stay below
 * 1024 however many threads hold a perf event. The limit itself is never
 * raised: that would be visible to the program and its children. */
int sprof_fd_base(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 1024;
    if (rl.rlim_cur >= 2048) return 1024;
    return (int)(rl.rlim_cur / 2);
}

static int identify(int fd, int kind, uint64_t *dev, uint64_t *ino, uint64_t *id)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    *id = 0;
    /* Every anon-inode descriptor (perf events, eventfd, epoll, ...) has
     * the same st_dev/st_ino: the event id tells ours apart. Its '$' ioctl
     * type is perf's alone; other anon inodes answer ENOTTY (measured). */
    if (kind == SPROF_FD_PERF && ioctl(fd, PERF_EVENT_IOC_ID, id) != 0) return -1;
    return 0;
}

static struct owned_fd *find(int fd)
{
    for (int i = 0, hi = atomic_load(&owned_hi); i < hi; i++)
        if (atomic_load(&owned[i].fd_plus1) == fd + 1) return &owned[i];
    return NULL;
}

static void entry_free(struct owned_fd *e, int fd)
{
    bit_set(fd, 0);
    atomic_store(&e->fd_plus1, 0);
}

int sprof_fd_adopt(int fd, int *where, int kind)
{
    sprof_fd_store(where, -1);
    if (fd < 0) return fd;
    int hi_fd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, sprof_fd_base());
    if (hi_fd >= 0) {
        sys_close(fd);
        fd = hi_fd;
    } else {
        syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC); /* no room up there: keep the number */
    }
    sprof_fd_store(where, fd);
    for (int i = 0; i < FD_ENTRIES; i++) {
        int expect = 0;
        struct owned_fd *e = &owned[i];
        if (!atomic_compare_exchange_strong(&e->fd_plus1, &expect, -1)) continue;
        e->kind = kind;
        e->where = where;
        if (identify(fd, kind, &e->dev, &e->ino, &e->event_id) != 0) {
            atomic_store(&e->fd_plus1, 0);
            break;
        }
        int hi = atomic_load(&owned_hi);
        while (i + 1 > hi && !atomic_compare_exchange_weak(&owned_hi, &hi, i + 1)) {
        }
        bit_set(fd, 1);
        atomic_store(&e->fd_plus1, fd + 1);
        break;
    }
    return fd;
}

int sprof_fd_ours(int fd)
{
    struct owned_fd *e = find(fd);
    struct stat st;
    if (!e || fstat(fd, &st) != 0 || (uint64_t)st.st_dev != e->dev || (uint64_t)st.st_ino != e->ino) return 0;
    /* the ioctl only once fstat matched the anon inode (see identify) */
    uint64_t id = 0;
    if (e->kind == SPROF_FD_PERF && (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 || id != e->event_id)) return 0;
    return 1;
}

/* "sprof: ..." on stderr without stdio (the fatal-signal path gets here) */
static void warn_lost(int fd, const char *what)
{
    char num[12];
    int n = 0;
    do { num[sizeof num - 1 - n++] = (char)('0' + fd % 10); fd /= 10; } while (fd && n < 11);
    const char *parts[] = {"sprof: the program closed or replaced descriptor ", num + sizeof num - n, ", which held ",
                           what, "; recording stopped (sprof never writes to a descriptor it does not own)\n"};
    char buf[256];
    size_t len = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t l = i == 1 ? (size_t)n : strlen(parts[i]);
        if (len + l > sizeof buf) l = sizeof buf - len;
        memcpy(buf + len, parts[i], l);
        len += l;
    }
    ssize_t w = write(2, buf, len);
    (void)w;
}

/* drop number fd from the table and from the runtime's variable */
static void forget(int *where, int fd)
{
    struct owned_fd *e = find(fd);
    if (e) entry_free(e, fd);
    sprof_fd_store(where, -1);
}

/* The number no longer holds our file: forget it, touch nothing, and stop
 * recording. Async-signal-safe (the warning too). */
void sprof_fd_lost(int *where)
{
    int fd = sprof_fd_load(where);
    if (fd < 0) return;
    struct owned_fd *e = find(fd);
    const char *what = where == &g_sprof.fd                 ? "the trace file"
                       : e && e->kind == SPROF_FD_PERF ? "a perf_event sampling event"
                                                       : "a /proc file of the sampler";
    forget(where, fd);
    atomic_store(&g_sprof.running, 0);
    if (!atomic_exchange(&lost_warned, 1)) warn_lost(fd, what);
}

void sprof_fd_lost_number(int fd)
{
    struct owned_fd *e = find(fd);
    if (e) sprof_fd_lost(e->where);
}

int sprof_fd_checked(int *where)
{
    int fd = sprof_fd_load(where);
    if (fd < 0) return -1;
    if (!sprof_fd_ours(fd)) {
        sprof_fd_lost(where);
        return -1;
    }
    return fd;
}

void sprof_fd_close(int *where)
{
    int fd = sprof_fd_checked(where);
    if (fd < 0) return;
    forget(where, fd);
    sys_close(fd);
}

void sprof_fd_close_all(void)
{
    for (int i = 0, hi = atomic_load(&owned_hi); i < hi; i++) {
        int fd = atomic_load(&owned[i].fd_plus1) - 1;
        if (fd >= 0 && sprof_fd_load(owned[i].where) == fd) sprof_fd_close(owned[i].where);
    }
}

/* The program is about to take number fd (dup2, dup3, F_DUPFD): move ours
 * to another high number first. io_lock (bounded wait: the caller may be a
 * signal handler) keeps the writer from using the old number meanwhile.
 * 0 when the number is free for the program to take; -1 (ours forgotten,
 * recording stopped) when there was no other number for it. */
int sprof_fd_move_away(int fd)
{
    struct owned_fd *e = find(fd);
    if (!e) return 0;
    int locked = 0;
    for (int i = 0; i < 500 && !(locked = sprof_io_trylock()); i++) {
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    int base = sprof_fd_base();
    int to = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fd + 1 > base ? fd + 1 : base);
    int rc = 0;
    if (to < 0) {
        sprof_fd_lost(e->where);
        rc = -1;
    } else {
        bit_set(to, 1);
        sprof_fd_store(e->where, to);
        atomic_store(&e->fd_plus1, to + 1);
        bit_set(fd, 0);
        sys_close(fd);
    }
    if (locked) sprof_io_unlock();
    return rc;
}

int sprof_fd_list_in(unsigned lo, unsigned hi, int *out, int cap)
{
    int n = 0;
    for (int i = 0, top = atomic_load(&owned_hi); i < top && n < cap; i++) {
        int fd = atomic_load(&owned[i].fd_plus1) - 1;
        if (fd < 0 || (unsigned)fd < lo || (unsigned)fd > hi) continue;
        if (n == cap && fd >= out[n - 1]) continue; /* keep the cap smallest, sorted */
        int j = n < cap ? n++ : n - 1;
        for (; j > 0 && out[j - 1] > fd; j--) out[j] = out[j - 1];
        out[j] = fd;
    }
    return n;
}
