/* CPU-bound test program: N threads (argv[2], default 1) spin for argv[1]
 * seconds of wall time each doing deep-ish frame-pointer calls. Prints
 * per-thread CPU seconds and tids as "thread TID CPU_NS" lines. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double secs = 1.0;
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long work(int depth, unsigned long x)
{
    if (depth > 0) return work(depth - 1, x * 3 + 1) + 1;
    for (int i = 0; i < 1000; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
    (void)arg;
    double t0 = now(CLOCK_MONOTONIC);
    while (now(CLOCK_MONOTONIC) - t0 < secs) sink += work(10, sink);
    printf("thread %ld %lld\n", (long)syscall(SYS_gettid), (long long)(now(CLOCK_THREAD_CPUTIME_ID) * 1e9));
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) secs = atof(argv[1]);
    int n = argc > 2 ? atoi(argv[2]) : 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (n <= 1) {
        spin(NULL);
    } else {
        pthread_t th[64];
        for (int i = 0; i < n && i < 64; i++) pthread_create(&th[i], NULL, spin, NULL);
        for (int i = 0; i < n && i < 64; i++) pthread_join(th[i], NULL);
    }
    printf("process_cpu_ns %lld\n", (long long)(now(CLOCK_PROCESS_CPUTIME_ID) * 1e9));
    return 0;
}
