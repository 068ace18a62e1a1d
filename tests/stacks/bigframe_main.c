/* Stacks above large frames, for tests/stacks. Modes (argv[1]), each
 * running ~SECONDS of CPU (argv[2]):
 *   qsort4k   busy_main keeps a 4 KiB buffer and sorts with libc's qsort and
 *             a comparator of ours: the comparator's caller chain runs
 *             through glibc's frameless msort, whose callers' return
 *             addresses sit above that buffer
 *   frame64k  a frameless function (bigframe_frameless.c, built without
 *             frame pointers) with a 64 KiB local array calls a leaf
 *   frame64k_blocked  the same with every signal blocked around each call
 *             (the profiler's live walk of that stack comes only after it)
 *   frame32k  the same with a 32 KiB frame
 *   deep400   recursion 400 frames deep under main: beyond the kernel's
 *             frame-pointer chain (perf_event_max_stack, 127)
 *   snprintf  formats numbers (glibc's __vfprintf_internal: a ~1.5 KiB
 *             frameless frame) under two frame-pointer callers
 * Built with frame pointers, except bigframe_frameless.c. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long bigframe_frameless(unsigned long seed, int n);
unsigned long bigframe_frameless32k(unsigned long seed, int n);

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) static int compare_ints(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

__attribute__((noinline)) static void busy_main(double seconds)
{
    int buf[1024]; /* 4 KiB between busy_main's frame record and qsort */
    unsigned long s = 12345;
    double end = cpu_now() + seconds;
    while (cpu_now() < end) {
        for (int i = 0; i < 1024; i++) {
            s = s * 6364136223846793005ul + 1442695040888963407ul;
            buf[i] = (int)(s >> 33);
        }
        qsort(buf, 1024, sizeof buf[0], compare_ints);
        sink += (unsigned long)buf[512];
    }
}

__attribute__((noinline)) static void run_frame64k(double seconds)
{
    double end = cpu_now() + seconds;
    unsigned long s = 1;
    while (cpu_now() < end) s = bigframe_frameless(s, 2000);
    sink = s;
}

__attribute__((noinline)) static void run_frame32k(double seconds)
{
    double end = cpu_now() + seconds;
    unsigned long s = 1;
    while (cpu_now() < end) s = bigframe_frameless32k(s, 2000);
    sink = s;
}

__attribute__((noinline)) static unsigned long deep_leaf(unsigned long s)
{
    for (int i = 0; i < 200000; i++) s = s * 6364136223846793005ul + 1442695040888963407ul;
    return s;
}

__attribute__((noinline)) static unsigned long deep_descend(int depth, unsigned long s)
{
    volatile unsigned long keep = (unsigned long)depth; /* read after the call: every level keeps its frame */
    if (depth == 0) return deep_leaf(s);
    unsigned long r = deep_descend(depth - 1, s);
    return r ^ keep;
}

__attribute__((noinline)) static void run_deep400(double seconds)
{
    double end = cpu_now() + seconds;
    unsigned long s = 1;
    while (cpu_now() < end) s = deep_descend(400, s);
    sink = s;
}

__attribute__((noinline)) static void format_numbers(double seconds)
{
    char out[64];
    double end = cpu_now() + seconds;
    unsigned long i = 0;
    while (cpu_now() < end)
        for (int k = 0; k < 1000; k++, i++) sink += (unsigned long)snprintf(out, sizeof out, "%lu %.3f", i, (double)i / 7.0);
}

__attribute__((noinline)) static void run_frame64k_blocked(double seconds)
{
    double end = cpu_now() + seconds;
    unsigned long s = 1;
    sigset_t all, old;
    sigfillset(&all);
    while (cpu_now() < end) {
        sigprocmask(SIG_BLOCK, &all, &old);
        s = bigframe_frameless(s, 2000);
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
    sink = s;
}

__attribute__((noinline)) static void run_snprintf(double seconds) { format_numbers(seconds); }

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "qsort4k";
    double seconds = argc > 2 ? atof(argv[2]) : 1.0;
    if (!strcmp(mode, "qsort4k")) busy_main(seconds);
    else if (!strcmp(mode, "frame64k")) run_frame64k(seconds);
    else if (!strcmp(mode, "frame64k_blocked")) run_frame64k_blocked(seconds);
    else if (!strcmp(mode, "frame32k")) run_frame32k(seconds);
    else if (!strcmp(mode, "deep400")) run_deep400(seconds);
    else if (!strcmp(mode, "snprintf")) run_snprintf(seconds);
    else {
        fprintf(stderr, "bigframe: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
