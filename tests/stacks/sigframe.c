/* Samples inside a signal handler, for tests/stacks. argv[1] = "normal"
 * (the handler runs on the thread's stack) or "alt" (on a sigaltstack);
 * argv[2] = seconds of CPU. main -> raise_loop -> raise(SIGUSR1) ->
 * [signal frame] -> on_signal -> burn: the unwind must go through the
 * signal frame (__restore_rt) to the interrupted raise and raise_loop. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(void)
{
    unsigned long x = sink;
    for (int i = 0; i < 200000; i++) x = x * 6364136223846793005ul + (unsigned long)i;
    sink = x;
}

__attribute__((noinline)) static void on_signal(int sig)
{
    (void)sig;
    burn();
}

__attribute__((noinline)) static void raise_loop(double seconds)
{
    double end = cpu_now() + seconds;
    while (cpu_now() < end) raise(SIGUSR1);
}

int main(int argc, char **argv)
{
    int alt = argc > 1 && !strcmp(argv[1], "alt");
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (alt) {
        stack_t ss = {.ss_sp = malloc(256 * 1024), .ss_size = 256 * 1024, .ss_flags = 0};
        if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0) return perror("sigaltstack"), 1;
        sa.sa_flags = SA_ONSTACK;
    }
    if (sigaction(SIGUSR1, &sa, NULL) != 0) return perror("sigaction"), 1;
    raise_loop(seconds);
    return 0;
}
