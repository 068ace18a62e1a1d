/* Built with -fomit-frame-pointer (tests/stacks/CMakeLists.txt): functions
 * with a 64 KiB and a 32 KiB frame and no frame record, between main's
 * chain and a leaf. */
__attribute__((noinline)) unsigned long bigframe_leaf(volatile unsigned long *a, int n, int mask)
{
    unsigned long s = 0;
    for (int i = 0; i < n; i++) s += a[(i * 7919) & mask] ^ (unsigned long)i;
    return s;
}

__attribute__((noinline)) unsigned long bigframe_frameless(unsigned long seed, int n)
{
    volatile unsigned long a[8192]; /* 64 KiB */
    for (int i = 0; i < 8192; i += 64) a[i] = seed + (unsigned long)i;
    unsigned long s = 0;
    for (int r = 0; r < 50; r++) s += bigframe_leaf(a, n, 8191);
    return s + a[seed & 8191];
}

__attribute__((noinline)) unsigned long bigframe_frameless32k(unsigned long seed, int n)
{
    volatile unsigned long a[4096]; /* 32 KiB */
    for (int i = 0; i < 4096; i += 64) a[i] = seed + (unsigned long)i;
    unsigned long s = 0;
    for (int r = 0; r < 50; r++) s += bigframe_leaf(a, n, 4095);
    return s + a[seed & 4095];
}
