/* Test program for recording control (tests/control). Runs a script of
 * steps, each an argument, times in wall seconds from the start:
 *   a@T b@T c@T   spin in method_a / method_b / method_c until time T
 *   s@T           sleep until time T
 *   k             send the toggle signal (SIGUSR2) to itself
 *   h             install its own SIGUSR2 handler (the program uses the signal)
 *   H             check that its handler ran: prints "handled N", fails if N == 0
 *   t             start a thread that spins in method_t until the next step ends
 * Prints nothing else; exit 0 on success. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static _Atomic int handled;
static _Atomic int thread_run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double t0;

/* distinct constants: identical bodies would be folded into one function */
#define SPINNER(name, k)                                                   \
    __attribute__((noinline)) static void name(double until)              \
    {                                                                      \
        while (now_s() - t0 < until)                                       \
            for (int i = 0; i < 20000; i++) sink += (unsigned long)i * (k); \
    }
SPINNER(method_a, 7)
SPINNER(method_b, 11)
SPINNER(method_c, 13)

__attribute__((noinline)) static void *method_t(void *arg)
{
    (void)arg;
    volatile unsigned long own = 0; /* not `sink`: the main thread spins too */
    while (atomic_load(&thread_run))
        for (int i = 0; i < 20000; i++) own += (unsigned long)i * 3;
    return NULL;
}

static void on_usr2(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

int main(int argc, char **argv)
{
    t0 = now_s();
    pthread_t th;
    int have_thread = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        double at = strchr(s, '@') ? atof(strchr(s, '@') + 1) : 0;
        switch (s[0]) {
        case 'a': method_a(at); break;
        case 'b': method_b(at); break;
        case 'c': method_c(at); break;
        case 's':
            while (now_s() - t0 < at) usleep(10000);
            break;
        case 'k': kill(getpid(), SIGUSR2); break;
        case 'h': {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_usr2;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGUSR2, &sa, NULL);
            break;
        }
        case 'H':
            printf("handled %d\n", atomic_load(&handled));
            if (!atomic_load(&handled)) return 1;
            break;
        case 't':
            atomic_store(&thread_run, 1);
            if (pthread_create(&th, NULL, method_t, NULL) != 0) return 1;
            have_thread = 1;
            break;
        default: fprintf(stderr, "ctl_prog: unknown step %s\n", s); return 2;
        }
        if (have_thread && s[0] != 't') {
            atomic_store(&thread_run, 0);
            pthread_join(th, NULL);
            have_thread = 0;
        }
    }
    return 0;
}
