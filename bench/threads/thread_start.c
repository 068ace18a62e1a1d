/* thread_start N: starts N threads one after another; each runs a ~7 us
 * routine and reads its own CPU clock at the end (a new thread's clock
 * starts at 0). Prints the mean: what a thread start costs the new thread,
 * whatever profiler is attached. Then, with the main thread working ~20 us
 * beside each thread (as a program's main thread does), the whole
 * process's CPU per thread (getrusage: the profiler's own threads in the
 * process included, a profiler's separate process not). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long total_ns;

static void spin(int iterations)
{
    volatile unsigned x = 0;
    for (int i = 0; i < iterations; i++) x += (unsigned)i;
}

static void *routine(void *arg)
{
    spin(20000);
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    total_ns += ts.tv_sec * 1000000000LL + ts.tv_nsec; /* joined before the next starts */
    return arg;
}

static double process_cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* n threads one after another, the main thread spinning main_spin
 * iterations beside each before it joins it; 0 if one could not start */
static int start_threads(int n, int main_spin)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, routine, NULL) != 0) return 0;
        spin(main_spin);
        pthread_join(t, NULL);
    }
    return 1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n <= 0) return 2;
    if (!start_threads(n, 0)) return 1;
    double own = (double)total_ns / 1000.0 / n;
    double c0 = process_cpu_us();
    if (!start_threads(n, 60000)) return 1;
    printf("%.2f %.2f\n", own, (process_cpu_us() - c0) / n);
    return 0;
}
