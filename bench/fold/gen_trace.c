/* Synthetic sprof trace for the fold benchmark, consistent with a real
 * binary and its symmap: stacks are walks through the workload's call
 * graph (main -> fn_i ... 24 deep ... -> burn), return addresses inside
 * the real functions, frame records 32 bytes apart, the frameless leaf's
 * return address among two stack candidates per sample, four threads; stack templates drawn with a Zipf-like skew so
 * a realistic few thousand distinct stacks carry the samples.
 *   usage: gen_trace BINARY SYMMAP OUT.trace NSAMPLES NTEMPLATES */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/symmap.h"
#include "symmap_text.h"

#define LOAD 0x555555554000ull
#define DEPTH 24

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A frameless leaf (burn: CFA = rsp+8) called from path[DEPTH]: its return
 * address is the candidate at sp, path[DEPTH]'s frame record is at sp+8 and
 * holds the return into path[DEPTH-1], and so on out to main. */
typedef struct tmpl {
    uint64_t pc;
    uint64_t leaf_ra;
    uint64_t ret[DEPTH + 1];
    uint16_t n;
} tmpl;

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: gen_trace BINARY SYMMAP OUT.trace NSAMPLES NTEMPLATES\n");
        return 2;
    }
    char err[512];
    sprof_symmap *m = sprof_symmap_open(argv[2], err, sizeof err);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    long nsamples = atol(argv[4]), ntemplates = atol(argv[5]);
    uint64_t fn_lo[32], fn_hi[32], burn_lo, burn_hi, main_lo, main_hi;
    for (int i = 0; i < 32; i++) {
        char name[16];
        snprintf(name, sizeof name, "fn_%d", i);
        if (st_function(m, name, &fn_lo[i], &fn_hi[i]) != 0) {
            fprintf(stderr, "%s: no function %s\n", argv[2], name);
            return 1;
        }
    }
    if (st_function(m, "burn", &burn_lo, &burn_hi) != 0 && st_function(m, "burn.constprop.0", &burn_lo, &burn_hi) != 0) {
        fprintf(stderr, "%s: no function burn\n", argv[2]);
        return 1;
    }
    if (st_function(m, "main", &main_lo, &main_hi) != 0) {
        fprintf(stderr, "%s: no main\n", argv[2]);
        return 1;
    }

    tmpl *t = calloc((size_t)ntemplates, sizeof *t);
    for (long k = 0; k < ntemplates; k++) {
        /* the workload's own walk: root fn, then the seed's bits pick the callee */
        uint64_t seed = next_rand() & 0xff;
        int fn = (int)(next_rand() & 31);
        int path[DEPTH + 1];
        path[0] = fn;
        for (int d = DEPTH; d > 0; d--) {
            fn = (fn * 7 + 3 + (int)((seed >> (d & 7)) & 1) * 11) & 31;
            path[DEPTH - d + 1] = fn;
        }
        t[k].pc = LOAD + burn_lo + 4 + next_rand() % (burn_hi - burn_lo - 4);
        uint16_t n = 0;
        t[k].leaf_ra = LOAD + fn_lo[path[DEPTH]] + (fn_hi[path[DEPTH]] - fn_lo[path[DEPTH]]) / 2;
        for (int i = DEPTH - 1; i >= 0; i--) /* return addresses, innermost caller first */
            t[k].ret[n++] = LOAD + fn_lo[path[i]] + (fn_hi[path[i]] - fn_lo[path[i]]) / 2;
        t[k].ret[n++] = LOAD + main_lo + (main_hi - main_lo) / 2;
        t[k].n = n;
    }

    trace_builder b;
    if (tb_open(&b, argv[3]) != 0) {
        perror(argv[3]);
        return 1;
    }
    tb_info(&b, SPROF_MODE_CPU, 10000, 1000, argv[1]);
    if (st_map_text(&b, m, LOAD, argv[1], argv[2]) != 0)
        return 1;
    for (uint32_t tid = 1; tid <= 4; tid++)
        tb_thread(&b, 1000 + tid, SPROF_THREAD_START, 1000, "worker");
    uint32_t fpoff[DEPTH + 1];
    for (int i = 0; i < DEPTH + 1; i++)
        fpoff[i] = 8 + 32 * (uint32_t)i;
    for (long s = 0; s < nsamples; s++) {
        /* skewed choice: a few templates are hot, a long tail is rare */
        uint64_t r = next_rand() % (uint64_t)ntemplates;
        long k = (long)((r * r) / (uint64_t)ntemplates);
        uint32_t tid = 1001 + (uint32_t)(s & 3);
        uint64_t sp = 0x7ffd00000000ull - 0x100000ull * (tid - 1000);
        uint32_t coff[2] = { 0, 24 };
        uint64_t cval[2] = { t[k].leaf_ra, sp + 0x48 };
        tb_sample(&b, tid, 0, 1000 + (uint64_t)s * 100000, 100000, t[k].pc, sp, sp + 8, 8,
                  t[k].ret, fpoff, t[k].n, coff, cval, 2);
    }
    tb_stats(&b, (uint64_t)nsamples, 0, 0);
    if (tb_close(&b, 0) != 0) {
        perror(argv[3]);
        return 1;
    }
    sprof_symmap_close(m);
    free(t);
    return 0;
}
