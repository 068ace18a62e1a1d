/* For own_threads_test.sh: a program without threads of its own that
 * allocates, takes a mutex, loads a library and forks, under sprof. It
 * prints whether glibc still runs it in single-thread mode
 * (__libc_single_threaded) at the start and at the end, and the child's
 * exit status. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void churn(double seconds)
{
    void *keep[256] = {0};
    unsigned long r = 12345;
    for (double end = cpu_now() + seconds; cpu_now() < end;) {
        for (int i = 0; i < 20000; i++) {
            r = r * 6364136223846793005ul + 1442695040888963407ul;
            int k = (int)(r >> 56);
            free(keep[k]);
            keep[k] = malloc(16 + (r >> 40) % 512);
            pthread_mutex_lock(&mu);
            sink += (unsigned long)keep[k];
            pthread_mutex_unlock(&mu);
        }
    }
    for (int k = 0; k < 256; k++) free(keep[k]);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 0.5;
    printf("single-threaded at start: %d\n", __libc_single_threaded);
    churn(secs / 2);
    void *h = dlopen(argc > 2 ? argv[2] : "libm.so.6", RTLD_NOW);
    printf("dlopen: %s\n", h ? "ok" : "failed");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        churn(0.1);
        _exit(7);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exit: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    churn(secs / 2);
    printf("single-threaded at end: %d\n", __libc_single_threaded);
    return 0;
}
