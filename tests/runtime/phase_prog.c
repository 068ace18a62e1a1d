/* perf_event's phase kicks (runtime-stub/src/sampling/perf_phase.c):
 *   phase_prog spin      ~0.8 s of CPU in the main thread
 *   phase_prog blocked   the same in a thread that blocks every signal, which
 *                        then prints its pending signals ("pending N"): the
 *                        kicks must not queue up behind the mask */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void spin(void)
{
    uint64_t t0 = cpu_ns();
    while (cpu_ns() - t0 < 800000000ull)
        for (int i = 0; i < 100000; i++) sink += (uint64_t)i;
}

static void *blocked(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    spin();
    /* taken one by one: /proc's SigQ counts every signal queued to the
     * user, in any process (a loaded CI machine read 2-3 here) */
    unsigned n = 0;
    struct timespec none = {0, 0};
    while (sigtimedwait(&all, NULL, &none) > 0) n++;
    printf("pending %u\n", n);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "blocked") == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, blocked, NULL) != 0) return 1;
        pthread_join(t, NULL);
    } else {
        spin();
        printf("pending 0\n");
    }
    return 0;
}
