/* Samples inside a signal handler, for tests/stacks. argv[1] = "normal"
 * (the handler runs on the thread's stack) or "alt" (on a sigaltstack);
 * argv[2] = seconds of CPU. main -> raise_loop -> raise(SIGUSR1) ->
 * [signal frame] -> on_signal -> burn: the unwind must go through the
 * signal frame (__restore_rt) to the interrupted raise and raise_loop.
 * argv[1] = "barrier": main -> barrier_loop -> store_pages -> [SIGSEGV,
 * signal frame on a sigaltstack] -> barrier_on_fault -> burn / mprotect
 * (sigframe_barrier.c): the interrupted code keeps frame pointers. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "sigframe.h"

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

/* The barrier handler's work, from a file with frame pointers: inside burn
 * rbp is this function's record, on the alternate stack, which links to
 * the interrupted code's (the other case, rbp still the interrupted
 * code's, is the handler's own mprotect call) */
void sigframe_burn(void)
{
    burn();
}

enum { BARRIER_PAGES = 16 };
static char *barrier_pages;

__attribute__((noinline)) static long page_offset(int i)
{
    return (long)i * 4096 + (i & 7);
}

/* Not a leaf, so it keeps a frame record: the store it is interrupted at
 * is in rbp-based code (a frameless leaf interrupted under perf_event
 * leaves its caller unknown: signal_alt) */
__attribute__((noinline)) static void store_pages(void)
{
    for (int i = 0; i < BARRIER_PAGES; i++) barrier_pages[page_offset(i)] = (char)i;
}

__attribute__((noinline)) static void barrier_loop(double seconds)
{
    double end = cpu_now() + seconds;
    while (cpu_now() < end) {
        mprotect(barrier_pages, BARRIER_PAGES * 4096, PROT_READ);
        store_pages();
    }
}

static int run_barrier(double seconds)
{
    barrier_pages = mmap(NULL, BARRIER_PAGES * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    stack_t ss = {.ss_sp = malloc(256 * 1024), .ss_size = 256 * 1024, .ss_flags = 0};
    if (barrier_pages == MAP_FAILED || !ss.ss_sp || sigaltstack(&ss, NULL) != 0) return perror("barrier set-up"), 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = barrier_on_fault;
    sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0) return perror("sigaction"), 1;
    barrier_loop(seconds);
    return 0;
}

int main(int argc, char **argv)
{
    int alt = argc > 1 && !strcmp(argv[1], "alt");
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    if (argc > 1 && !strcmp(argv[1], "barrier")) return run_barrier(seconds);
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
