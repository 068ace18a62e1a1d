/* Which process of a tree holds the trace's name (docs/runtime.md,
 * "Wrappers and process trees"). SPROF_OUT and LD_PRELOAD are inherited,
 * so a wrapper (sh -c, timeout, env, make) starts profiling before the
 * program the user meant. The rule:
 *  - a process that execs before it has a single sample leaves no file:
 *    the image it execs takes the name (env, exec-ing shells);
 *  - a process whose name is held by a live ancestor that has recorded
 *    almost nothing (a wrapper that forked it and waits) takes the name
 *    over; the ancestor's trace moves to <name>.<ancestor pid>;
 *  - a process whose name is held by a live ancestor that did work (a
 *    program running a helper) runs unprofiled without a word;
 *  - at its exit, a process that lost its name that way removes its trace
 *    and prints nothing if it still is a wrapper's (at most hz/10
 *    samples); a larger one stays as <name>.<pid>, named by its exit line.
 * Everything here is async-signal-safe where the finish path needs it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"

#define WRAPPER_TRACE_MAX (4u << 20) /* a wrapper's trace is a few KiB */

/* path + sep + number, without stdio (finish may run in a signal handler) */
static void join_number(const char *path, char sep, uint32_t v, char *out, size_t outlen)
{
    size_t o = 0;
    while (*path && o + 12 < outlen) out[o++] = *path++;
    out[o++] = sep;
    char d[12];
    int n = 0;
    do { d[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) out[o++] = d[--n];
    out[o] = 0;
}

/* <name>.<pid>: where a wrapper's trace goes when a descendant takes its name */
static void name_with_pid(const char *path, uint32_t pid, char *out, size_t outlen)
{
    join_number(path, '.', pid, out, outlen);
}

/* The parent pid of pid, from /proc/<pid>/stat (field 4, after the
 * parenthesised command name); 0 if unknown. */
static pid_t parent_of(pid_t pid)
{
    char path[48], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    int ppid = 0;
    if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1) return 0;
    return (pid_t)ppid;
}

static int is_ancestor(pid_t who)
{
    pid_t p = getppid();
    for (int depth = 0; p > 1 && depth < 64; depth++) {
        if (p == who) return 1;
        p = parent_of(p);
    }
    return 0;
}

/* At most this many samples, a trace is a wrapper's (100 ms of CPU). */
static uint64_t wrapper_samples(uint32_t hz) { return hz / 10; }

struct holder {
    pid_t pid;        /* INFO pid; 0 if the file is not a trace */
    int ended;        /* END seen */
    int wrapper;      /* at most wrapper_samples() samples */
};

/* Who holds the name: the trace's INFO pid, whether it ended, whether it
 * is a wrapper's. A trace too large to scan is not a wrapper's. */
static struct holder read_holder(int fd, uint64_t size)
{
    struct holder h = {0, 0, 0};
    struct sprof_rec_info info;
    if (pread(fd, &info, sizeof info, sizeof(struct sprof_trace_file_header)) != (ssize_t)sizeof info ||
        info.h.type != SPROF_REC_INFO)
        return h;
    char magic[8];
    if (pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic || memcmp(magic, SPROF_TRACE_MAGIC, 8) != 0)
        return h;
    h.pid = (pid_t)info.pid;
    if (size > WRAPPER_TRACE_MAX) return h;
    const uint8_t *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) return h;
    uint64_t samples = 0, off = sizeof(struct sprof_trace_file_header);
    while (off + sizeof(struct sprof_rec_hdr) <= size) {
        struct sprof_rec_hdr rh;
        memcpy(&rh, m + off, sizeof rh);
        if (rh.size < sizeof rh || rh.size % 8 || rh.size > size - off) break;
        if (rh.type == SPROF_REC_SAMPLE) samples++;
        else if (rh.type == SPROF_REC_SAMPLES && rh.size >= sizeof(struct sprof_rec_samples)) {
            struct sprof_rec_samples b;
            memcpy(&b, m + off, sizeof b);
            samples += b.count;
        } else if (rh.type == SPROF_REC_END) h.ended = 1;
        off += rh.size;
    }
    munmap((void *)m, size);
    h.wrapper = samples <= wrapper_samples(info.hz);
    return h;
}

/* rename without replacing anything (link + unlink where renameat2 is missing) */
static int rename_noreplace(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (link(from, to) != 0) return -1;
    return unlink(from);
}

/* Is link "pipe:[ino]"? */
static int is_pipe_link(const char *link, uint64_t ino)
{
    if (strncmp(link, "pipe:[", 6) != 0) return 0;
    uint64_t v = 0;
    const char *p = link + 6;
    for (; *p >= '0' && *p <= '9'; p++) v = v * 10 + (uint64_t)(*p - '0');
    return *p == ']' && p[1] == 0 && v == ino;
}

/* Does process pid hold the other end of our stdout pipe: are we its
 * command substitution? No stdio, no malloc (getdents64, not opendir). */
static int stdout_read_by(pid_t pid)
{
    struct stat out;
    if (fstat(1, &out) != 0 || !S_ISFIFO(out.st_mode)) return 0;
    char dir[48];
    join_number("/proc", '/', (uint32_t)pid, dir, sizeof dir - 3);
    strcat(dir, "/fd");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return 0;
    char buf[2048], link[64];
    int found = 0;
    long n;
    while (!found && (n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n && !found;) {
            const struct dirent64 *d = (const struct dirent64 *)(buf + off);
            ssize_t k = readlinkat(dfd, d->d_name, link, sizeof link - 1);
            if (k > 0) {
                link[k] = 0;
                found = is_pipe_link(link, (uint64_t)out.st_ino);
            }
            off += d->d_reclen;
        }
    }
    close(dfd);
    return found;
}

/* Is our output read by the ancestor `who` or by a process between it and
 * us: a command substitution in its shell? A subshell is a fork without
 * an exec (no trace of its own): pyenv's `$(abs_dirname ...)` runs
 * `( ... path="$(resolve_link ...)" ... )`, and readlink's output is read by
 * the inner subshell, two forks below the shell that held the name. */
static int stdout_read_within(pid_t who)
{
    pid_t p = getppid();
    for (int depth = 0; p > 1 && depth < 64; depth++) {
        if (stdout_read_by(p)) return 1;
        if (p == who) return 0;
        p = parent_of(p);
    }
    return 0;
}

/* The ancestor whose trace this process moved aside to take the name
 * (0: none): a helper that turns out tiny gives the name back at its exit. */
static pid_t taken_from;
/* ... and whether its shell read our stdout pipe then (it, or a subshell
 * of it): we are its command substitution. Known when the name is taken, not at exit:
 * coreutils (readlink, uname, id) close stdout in an atexit handler that
 * runs before sprof's finish, and the shell closes its end at the EOF; a
 * shim's helper that took a sample (slow page faults on a VM) then kept
 * the name, and the program the shim exec'd ran unprofiled. */
static int read_by_taken_from;

/* The command name of process pid ("?" if unknown), for a message. */
static void comm_of(pid_t pid, char out[16])
{
    sprof_read_comm((uint32_t)pid, 0, out);
    if (!out[0]) strcpy(out, "?");
}

void sprof_rule_say_held(const char *path, pid_t holder, int ended)
{
    if (holder <= 0) {
        sprof_warn("%s exists; not overwriting it (set SPROF_OVERWRITE=1); running unprofiled", path);
        return;
    }
    if (ended || (kill(holder, 0) != 0 && errno != EPERM)) {
        /* a trace of an earlier run, or of another program of this one that
         * has ended (`a | b; c`): either remedy may be the one wanted */
        sprof_warn("%s exists (the trace of pid %d, ended); not overwriting it; running unprofiled (set "
                   "SPROF_OVERWRITE=1 to replace it, or put %%p in SPROF_OUT for a file per process)",
                   path, (int)holder);
        return;
    }
    /* another program of the same run (a pipeline's other end, make's other
     * jobs): overwriting is no remedy, a file per process is */
    char who[16], me[16];
    comm_of(holder, who);
    comm_of(getpid(), me);
    sprof_warn("%s is being written by pid %d (%s); this process (%s) runs unprofiled (a %%p in SPROF_OUT gives "
               "each process its own file)",
               path, (int)holder, who, me);
}

static int name_held_once(const char *path, pid_t *holder, int *ended, int *raced)
{
    taken_from = 0;
    *holder = 0;
    *ended = 0;
    *raced = 0;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    /* gone since the caller's create failed: moved aside by another
     * process taking it over, whose own file comes a moment later */
    if (fd < 0) return errno == ENOENT ? SPROF_NAME_TAKEN_OVER : SPROF_NAME_OTHER;
    struct stat st;
    struct holder h = {0, 0, 0};
    const off_t least = (off_t)(sizeof(struct sprof_trace_file_header) + sizeof(struct sprof_rec_info));
    /* a trace created a moment ago (a sibling started with us) gets its
     * header and INFO at its set-up's first flush: wait for them, 500 ms at
     * most (100 ms was too short once, in a fresh-clone CI run's full
     * ctest -j2 beside a chromium test: the message could not name the
     * holder). Only this race waits: the file is new and still empty. */
    for (int tries = 0; tries < 250 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < least &&
                        st.st_uid == geteuid() && time(NULL) - st.st_mtime < 2;
         tries++) {
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size >= least)
        h = read_holder(fd, (uint64_t)st.st_size);
    close(fd);
    if (h.pid > 1 && h.pid != getpid()) {
        *holder = h.pid;
        *ended = h.ended;
    }
    if (h.pid <= 1 || h.pid == getpid() || h.ended || !is_ancestor(h.pid)) return SPROF_NAME_OTHER;
    /* a live ancestor that did work: its trace is what was asked for */
    if (!h.wrapper) return SPROF_NAME_ANCESTOR;
    char moved[sizeof g_sprof.cfg.out_path + 16];
    name_with_pid(path, (uint32_t)h.pid, moved, sizeof moved);
    if (rename_noreplace(path, moved) != 0) {
        /* another descendant moved it first (two programs a wrapper
         * started together): the name is theirs now, look again */
        *raced = errno == EEXIST || errno == ENOENT;
        return SPROF_NAME_OTHER;
    }
    taken_from = h.pid;
    read_by_taken_from = stdout_read_within(h.pid);
    return SPROF_NAME_TAKEN_OVER;
}

int sprof_rule_name_held(const char *path, pid_t *holder, int *ended)
{
    int raced = 0, r = SPROF_NAME_OTHER;
    for (int tries = 0; tries < 3; tries++) {
        r = name_held_once(path, holder, ended, &raced);
        if (!raced) break;
    }
    return r;
}

/* This process took the name from a live ancestor and turned out to be
 * that ancestor's helper, not the program: it recorded nothing, or no
 * more than a wrapper would while the ancestor reads its output (a
 * command substitution: a version manager's shim runs readlink, uname...
 * in $(...), then execs the program). Its trace goes, the ancestor's comes
 * back under the name, and it says nothing: with the name kept, the
 * program the shim finally exec'd found it held by an ended helper and ran
 * unprofiled (pyenv's python3: 30 "exists; not overwriting" lines and no
 * profile). A short program behind a wrapper (`timeout 5 ./app`, 50 ms of
 * CPU) is what the user asked for, and keeps the name with what it has. */
static int give_name_back(const char *cur, int empty, int small)
{
    if (!taken_from || !small || kill(taken_from, 0) != 0) return 0;
    if (!empty && !read_by_taken_from) return 0;
    char moved[sizeof g_sprof.cfg.out_path + 48];
    name_with_pid(cur, (uint32_t)taken_from, moved, sizeof moved);
    struct stat st;
    if (lstat(moved, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (unlink(cur) != 0) return 0;
    rename_noreplace(moved, cur); /* someone took the name meanwhile: theirs */
    return 1;
}

static int same_file(const char *path, const struct stat *mine)
{
    struct stat st;
    return lstat(path, &st) == 0 && st.st_dev == mine->st_dev && st.st_ino == mine->st_ino;
}

/* The file's current absolute name, from /proc/self/fd (it follows
 * renames, and does not depend on the working directory the program may
 * have changed since the open). 0 if unknown. */
static int current_name(int fd, char *out, size_t outlen)
{
    char link[32];
    join_number("/proc/self/fd", '/', (uint32_t)fd, link, sizeof link);
    ssize_t n = readlink(link, out, outlen - 1);
    if (n <= 0) return 0;
    out[n] = 0;
    return 1;
}

/* Is cur <dir>/<basename of the trace's name>.<our pid>: moved aside by a descendant? */
static int moved_aside(const char *cur)
{
    const char *base = strrchr(g_sprof.cfg.out_path, '/');
    base = base ? base + 1 : g_sprof.cfg.out_path;
    char want[256];
    if (strlen(base) + 16 > sizeof want) return 0;
    want[0] = '/';
    name_with_pid(base, (uint32_t)getpid(), want + 1, sizeof want - 1);
    size_t lc = strlen(cur), lw = strlen(want);
    return lc > lw && memcmp(cur + lc - lw, want, lw) == 0;
}

/* The exit line names the file by its full current name: a relative
 * SPROF_OUT means a different file in each directory a process tree works
 * in (make -C), and the trace may have been moved aside. */
static void use_full_name(const char *cur)
{
    size_t n = strlen(cur);
    if (n < sizeof g_sprof.cfg.out_path) memcpy(g_sprof.cfg.out_path, cur, n + 1);
}

int sprof_rule_at_finish(int fd)
{
    struct stat mine;
    char cur[sizeof g_sprof.cfg.out_path + 32];
    if (fstat(fd, &mine) != 0 || !current_name(fd, cur, sizeof cur)) return 0;
    int empty = g_sprof.samples_written == 0 && g_sprof.weight_written == 0;
    int small = g_sprof.samples_written <= wrapper_samples(g_sprof.cfg.hz);
    /* removed, or replaced under its name (a descendant's SPROF_OVERWRITE=1):
     * a wrapper says nothing; a process that did work says where it wrote */
    if (!same_file(cur, &mine)) return small;
    if (give_name_back(cur, empty, small)) return 1;
    if (!moved_aside(cur)) {
        /* exec before any sample, or after a wrapper's start-up (at most
         * hz/10 samples, as for an ancestor below: `env`, a shell that
         * execs its last command, took one on a loaded CI machine): the
         * next image takes the name */
        if ((empty || small) && sprof_end_reason() == SPROF_END_EXEC) {
            unlink(cur);
            return 1;
        }
        use_full_name(cur);
        return 0;
    }
    if (small) {
        unlink(cur); /* a wrapper's few samples are not what the user asked for */
        return 1;
    }
    use_full_name(cur); /* it did real work after all: keep it, and the exit line names it */
    return 0;
}
