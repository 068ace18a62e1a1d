/* measure OUT -- CMD [ARGS...]
 * Runs CMD, waits for it, and writes "wall_ns cpu_ns maxrss_kib" to OUT:
 * wall time from fork to reap, user+system CPU of CMD and every descendant
 * it reaped (wait4 rusage), at microsecond resolution (/usr/bin/time only
 * prints centiseconds), and the largest resident set of CMD or any of
 * those descendants (ru_maxrss). CMD's stdout/stderr pass through. Exit status is
 * CMD's (128+signal if it was killed). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 4 || strcmp(argv[2], "--") != 0) {
        fprintf(stderr, "usage: measure OUT -- CMD [ARGS...]\n");
        return 2;
    }
    int64_t t0 = mono_ns();
    pid_t pid = fork();
    if (pid < 0) {
        perror("measure: fork");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[3], argv + 3);
        fprintf(stderr, "measure: cannot run %s\n", argv[3]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("measure: wait4");
        return 1;
    }
    int64_t wall = mono_ns() - t0;
    int64_t cpu = ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
                  ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "%lld %lld %ld\n", (long long)wall, (long long)cpu, ru.ru_maxrss) < 0 || fclose(f) != 0) {
        fprintf(stderr, "%s: cannot write\n", argv[1]);
        return 1;
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
