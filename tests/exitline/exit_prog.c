/* The programs of the exit-line tests (exitline_test.sh). Usage:
 *   exit_prog spin SECS     burn CPU, exit normally
 *   exit_prog empty         exit at once (no sample: under one period of CPU)
 *   exit_prog take SECS     install its own handler on every real-time signal
 *                           (as the Go runtime does), then burn CPU
 *   exit_prog block SECS    block every real-time signal, then burn CPU
 *   exit_prog reuse2 SECS   close stderr, open own.txt (it gets descriptor 2),
 *                           write "mine\n" to it, burn CPU, exit normally
 *   exit_prog rawexit SECS  burn CPU, then leave through a raw exit_group
 *                           system call (as Go's os.Exit does): no destructor,
 *                           no _exit wrapper
 * Prints "ok" on stdout (rawexit: before it exits). Built with -DLOOKS_LIKE_GO
 * (exit_prog_go) it carries a .go.buildinfo section, which is how the runtime
 * recognises a Go program (whose end it cannot see). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef LOOKS_LIKE_GO
__attribute__((used, section(".go.buildinfo"))) static const char go_buildinfo[32] = "\xff Go buildinf:";
#endif

static volatile unsigned long sink;
static volatile sig_atomic_t foreign_signals;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(double secs)
{
    double end = cpu_now() + secs;
    while (cpu_now() < end)
        for (int i = 0; i < 10000; i++) sink += (unsigned long)i * 7u;
}

static void on_any(int sig)
{
    (void)sig;
    foreign_signals++;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    double secs = argc > 2 ? atof(argv[2]) : 0.5;
    if (!strcmp(what, "empty")) {
        puts("ok");
        return 0;
    }
    if (!strcmp(what, "take")) {
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_any;
            sigaction(s, &sa, NULL);
        }
    } else if (!strcmp(what, "block")) {
        sigset_t rt;
        sigemptyset(&rt);
        for (int s = SIGRTMIN; s <= SIGRTMAX; s++) sigaddset(&rt, s);
        sigprocmask(SIG_BLOCK, &rt, NULL);
    } else if (!strcmp(what, "reuse2")) {
        close(2);
        int fd = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd != 2 || write(fd, "mine\n", 5) != 5) return 3;
    } else if (strcmp(what, "spin") != 0 && strcmp(what, "rawexit") != 0) {
        fprintf(stderr, "usage: exit_prog spin|empty|take|block|reuse2|rawexit [SECS]\n");
        return 2;
    }
    burn(secs);
    printf("ok\n");
    fflush(stdout);
#ifdef LOOKS_LIKE_GO
    syscall(SYS_exit_group, 0); /* as every Go program ends */
#endif
    if (!strcmp(what, "rawexit")) syscall(SYS_exit_group, 0);
    return 0;
}
