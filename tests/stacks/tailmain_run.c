/* The program tailmain.c's main jumps to: a few calls deep, busy for the
 * given seconds of CPU. */
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long tail_work(unsigned long x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

__attribute__((noinline)) static unsigned long tail_loop(double seconds)
{
    unsigned long x = 1;
    double end = cpu_seconds() + seconds;
    while (cpu_seconds() < end)
        x = tail_work(x);
    return x;
}

int run_program(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    return tail_loop(seconds) == 42; /* 0 */
}
