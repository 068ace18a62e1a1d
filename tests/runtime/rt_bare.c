/* A program that references nothing of the runtime stub (no threads, no
 * dlopen), linked with the plain path of libsprof_rt.a as
 * `spinel app.rb --link libsprof_rt.a` does: the stub must still start. */
#include <stdio.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
    volatile unsigned long x = 1;
    while (cpu_seconds() < 0.3)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
    printf("%lu\n", (unsigned long)x);
    return 0;
}
