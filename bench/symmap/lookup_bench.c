/* Lookup cost per PC after mmap, for bench/symmap/run.sh.
 * usage: lookup_bench SYMMAP NPCS ADDR_FILE NADDR
 * Draws NPCS random PCs inside the map's functions (fixed seed), times
 * sprof_symmap_lookup over all of them, and writes the first NADDR PCs (hex)
 * to ADDR_FILE so addr2line can be timed on the very same addresses. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sprof/symmap.h"

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static double now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
/* CPU time of this thread: the machine is shared, wall time counts the
 * time other processes held the CPU. */
static double cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

/* Best of 3 passes over pcs[0..n) cycled to `total` lookups; CPU and wall ns per lookup. */
static size_t timed_lookups(const sprof_symmap *m, const uint64_t *pcs, size_t n, size_t total,
                            double *cpu_per, double *wall_per)
{
    sprof_frame frames[16];
    size_t frames_seen = 0;
    *cpu_per = *wall_per = 1e300;
    for (int rep = 0; rep < 3; rep++) {
        frames_seen = 0;
        double w0 = now_ns(), c0 = cpu_ns();
        for (size_t i = 0, j = 0; i < total; i++, j = j + 1 == n ? 0 : j + 1)
            frames_seen += sprof_symmap_lookup(m, pcs[j], frames, 16);
        double c = (cpu_ns() - c0) / total, w = (now_ns() - w0) / total;
        if (c < *cpu_per)
            *cpu_per = c;
        if (w < *wall_per)
            *wall_per = w;
    }
    return frames_seen;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: lookup_bench SYMMAP NPCS ADDR_FILE NADDR\n");
        return 2;
    }
    size_t npcs = strtoull(argv[2], NULL, 10), naddr = strtoull(argv[4], NULL, 10);
    char err[512];
    double t0 = now_ns();
    sprof_symmap *m = sprof_symmap_open(argv[1], err, sizeof err);
    double t_open = now_ns() - t0;
    if (!m) {
        fprintf(stderr, "lookup_bench: %s\n", err);
        return 1;
    }
    size_t nf = sprof_symmap_function_count(m);
    uint64_t *pcs = malloc(npcs * sizeof *pcs);
    if (!nf || !pcs) {
        fprintf(stderr, "lookup_bench: no functions or no memory\n");
        return 1;
    }
    for (size_t i = 0; i < npcs; i++) {
        sprof_frame f;
        sprof_symmap_function(m, next_random() % nf, &f);
        uint64_t span = f.func_hi > f.func_lo ? f.func_hi - f.func_lo : 1;
        pcs[i] = f.func_lo + next_random() % span;
    }
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        perror(argv[3]);
        return 1;
    }
    for (size_t i = 0; i < naddr && i < npcs; i++)
        fprintf(out, "0x%" PRIx64 "\n", pcs[i]);
    fclose(out);

    sprof_frame frames[16];
    size_t misses = 0;
    for (size_t i = 0; i < npcs; i++) /* warm the page cache and TLB once; count misses */
        misses += sprof_symmap_lookup(m, pcs[i], frames, 16) == 0;
    double cpu, wall;
    size_t total_frames = timed_lookups(m, pcs, npcs, npcs, &cpu, &wall);
    printf("symmap open+validate: %.2f ms\n", t_open / 1e6);
    printf("lookup, %zu random PCs: %.1f ns/PC CPU time (%.1f ns wall), %.2f frames/PC, %zu misses\n",
           npcs, cpu, wall, (double)total_frames / npcs, misses);
    size_t hot = npcs < 4096 ? npcs : 4096;
    timed_lookups(m, pcs, hot, npcs, &cpu, &wall);
    printf("lookup, %zu distinct PCs cycled (cache-warm, like a real profile): %.1f ns/PC CPU time (%.1f ns wall)\n",
           hot, cpu, wall);
    timed_lookups(m, pcs, 1, npcs, &cpu, &wall);
    printf("lookup, one PC repeated (all in L1: the compute cost): %.1f ns/PC CPU time (%.1f ns wall)\n", cpu,
           wall);
    sprof_symmap_close(m);
    free(pcs);
    return 0;
}
