/* CPU-bound helpers shared by the small programs of tests/stacks. */
#ifndef STACKS_BUSY_H
#define STACKS_BUSY_H
#include <time.h>

/* the process's CPU time, in seconds */
static inline double busy_cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a few tens of microseconds of arithmetic the compiler cannot drop */
static inline unsigned long busy_steps(unsigned long x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}
#endif
