/* Built with -fomit-frame-pointer (tests/stacks/CMakeLists.txt): a
 * function with a 64 KiB frame and no frame record, between main's chain
 * and a leaf that has one. */
__attribute__((noinline)) unsigned long bigframe_leaf(volatile unsigned long *a, int n)
{
    unsigned long s = 0;
    for (int i = 0; i < n; i++) s += a[(i * 7919) & 8191] ^ (unsigned long)i;
    return s;
}

__attribute__((noinline)) unsigned long bigframe_frameless(unsigned long seed, int n)
{
    volatile unsigned long a[8192]; /* 64 KiB */
    for (int i = 0; i < 8192; i += 64) a[i] = seed + (unsigned long)i;
    unsigned long s = 0;
    for (int r = 0; r < 50; r++) s += bigframe_leaf(a, n);
    return s + a[seed & 8191];
}
