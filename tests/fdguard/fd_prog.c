/* A program that treats descriptors the way real programs do: closes all of
 * them, dup2s over a range, or does it with raw system calls (as Go does),
 * then writes known lines into its own file while burning CPU, so the
 * profiler's writer flushes many times while the program's files are open.
 *   fd_prog CASE      CASE: closefrom | closeloop | dup2 | takeover | rawclose | rawdup | plain
 * takeover: dup2 and F_DUPFD onto every descriptor it did not open itself
 * (under sprof: the runtime's), through libc, and writes through them.
 *   fd_prog mksock PATH   bind an AF_UNIX socket at PATH (file-rule tests)
 * Writes own.txt in the current directory; exit 0. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(double secs)
{
    double end = cpu_now() + secs;
    while (cpu_now() < end)
        for (int i = 0; i < 20000; i++) sink += (unsigned long)i * 2654435761u;
}

static int open_own(void)
{
    int fd = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("own.txt");
        exit(2);
    }
    return fd;
}

/* close-on-exec set? From /proc/self/fdinfo: fcntl(F_GETFD) is what sprof
 * answers EBADF for its own */
static int cloexec(int fd)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    int f = open(path, O_RDONLY);
    if (f < 0) return 0;
    ssize_t n = read(f, buf, sizeof buf - 1);
    close(f);
    buf[n > 0 ? n : 0] = 0;
    char *flags = strstr(buf, "flags:");
    return flags && (strtoul(flags + 6, NULL, 8) & O_CLOEXEC);
}

/* every descriptor >= 3 except keep, from /proc/self/fd (only_cloexec:
 * those the process opened itself, not inherited ones; under sprof, the
 * runtime's) */
static int list_fds(int keep, int only_cloexec, int *out, int cap)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 0;
    int n = 0, self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < cap) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd >= 3 && fd != keep && fd != self && (!only_cloexec || cloexec(fd)))
            out[n++] = fd;
    }
    closedir(d);
    return n;
}

static int mksock(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    return s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "plain";
    if (!strcmp(c, "mksock")) return argc > 2 ? mksock(argv[2]) : 2;
    spin(0.15); /* samples before the program touches anything */
    int fds[64] = {3}, nfds = 1, own;
    if (!strcmp(c, "closefrom")) {
        closefrom(3);
        own = open_own();
    } else if (!strcmp(c, "closeloop")) {
        for (int fd = 3; fd <= 1024; fd++) close(fd);
        own = open_own();
    } else if (!strcmp(c, "dup2")) {
        own = open_own();
        nfds = 0;
        for (int fd = 3; fd <= 64; fd++) {
            if (fd != own && dup2(own, fd) != fd) {
                perror("dup2");
                return 3;
            }
            fds[nfds++] = fd;
            if (nfds == 64) break;
        }
    } else if (!strcmp(c, "takeover")) {
        own = open_own();
        int others[4096], n = list_fds(own, 1, others, 4096);
        for (int i = 0; i < n; i++) {
            int fd = i == 0 ? fcntl(own, F_DUPFD, others[0]) : dup2(own, others[i]);
            if (fd != others[i]) {
                fprintf(stderr, "takeover: got %d, not %d\n", fd, others[i]);
                return 3;
            }
            if (i < 63) fds[nfds++] = fd;
        }
    } else if (!strcmp(c, "rawclose")) {
        syscall(SYS_close_range, 3u, ~0u, 0);
        own = open_own();
    } else if (!strcmp(c, "rawdup")) {
        own = open_own();
        int others[4096], n = list_fds(own, 0, others, 4096);
        for (int i = 0; i < n; i++) syscall(SYS_dup3, own, others[i], 0);
    } else {
        own = open_own();
    }
    if (strcmp(c, "dup2") != 0) fds[0] = own; /* takeover: own, then the numbers it took */
    /* ~0.5 s of CPU, one line every ~2.5 ms through the program's descriptors */
    for (int i = 0; i < 200; i++) {
        char line[64];
        int len = snprintf(line, sizeof line, "%s line %d\n", c, i);
        if (write(fds[i % nfds], line, (size_t)len) != len) {
            perror("write");
            return 4;
        }
        spin(0.0025);
    }
    printf("%s: 200 lines written\n", c);
    return 0;
}
