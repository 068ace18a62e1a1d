/* A program built entirely without frame pointers (as CPython and most
 * distributions' binaries are), whose hot path is 120 calls deep with
 * ~100-byte frames: ~12 KiB of stack and no frame record at all. The only
 * "records" scanning finds are pushed registers below return addresses;
 * the offline CFI unwinder needs the return addresses up to main's frame
 * (tests/stacks, nofp_deep). */
#include <stdlib.h>
#include "busy.h"

__attribute__((noinline)) static unsigned long nofp_leaf(unsigned long x)
{
    return busy_steps(x);
}

__attribute__((noinline)) static unsigned long nofp_descend(int depth, unsigned long x)
{
    volatile unsigned long pad[10]; /* a frame of ~100 bytes */
    for (int i = 0; i < 10; i++)
        pad[i] = x + (unsigned long)i;
    if (depth == 0)
        return nofp_leaf(x);
    return nofp_descend(depth - 1, x + pad[depth % 10]) ^ pad[3];
}

__attribute__((noinline)) static unsigned long nofp_run(double seconds)
{
    unsigned long x = 1;
    double end = busy_cpu_seconds() + seconds;
    while (busy_cpu_seconds() < end) /* a system call: not on every descent */
        for (int i = 0; i < 8; i++)
            x = nofp_descend(120, x);
    return x;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    return nofp_run(seconds) == 42;
}
