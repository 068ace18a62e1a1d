/* The program tailmain.c's main jumps to: a few calls deep, busy for the
 * given seconds of CPU. */
#include <stdlib.h>
#include "busy.h"

__attribute__((noinline)) static unsigned long tail_work(unsigned long x)
{
    return busy_steps(x);
}

__attribute__((noinline)) static unsigned long tail_loop(double seconds)
{
    unsigned long x = 1;
    double end = busy_cpu_seconds() + seconds;
    while (busy_cpu_seconds() < end)
        x = tail_work(x);
    return x;
}

int run_program(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    return tail_loop(seconds) == 42; /* 0 */
}
