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

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
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
    size_t total_frames = 0, misses = 0;
    for (size_t i = 0; i < npcs; i++) /* warm the page cache and TLB once */
        total_frames += sprof_symmap_lookup(m, pcs[i], frames, 16);
    total_frames = 0;
    double best = 1e300;
    for (int rep = 0; rep < 3; rep++) { /* best of 3: the machine is shared */
        size_t frames_seen = 0;
        t0 = now_ns();
        for (size_t i = 0; i < npcs; i++) {
            size_t n = sprof_symmap_lookup(m, pcs[i], frames, 16);
            frames_seen += n;
            misses += n == 0;
        }
        double t = now_ns() - t0;
        if (t < best)
            best = t;
        total_frames = frames_seen;
    }
    printf("symmap open+validate: %.2f ms\n", t_open / 1e6);
    printf("lookup: %zu PCs, %.1f ns/PC (best of 3), %.2f frames/PC, %zu misses\n", npcs, best / npcs,
           (double)total_frames / npcs, misses / 3);
    sprof_symmap_close(m);
    free(pcs);
    return 0;
}
