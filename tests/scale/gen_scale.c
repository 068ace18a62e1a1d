/* Synthetic sprof traces that stress the readers' scaling, consistent with
 * a real binary (bench/fold/workload.c) and its symmap:
 *   threads N: N threads, each with a START and a NAME record, one sample
 *              and an EXIT record (sprof-trace info was quadratic in N);
 *   mappings K: K more MAPPING records (libraries that do not exist on
 *              disk, one page each) before 1,000 samples;
 *   stacks  M: M samples over 4 threads, every one a distinct stack:
 *              main -> 3 frames from the sample number's prefix class ->
 *              4 base-32 digits of the number -> the leaf in fn_x: 9
 *              frames, 160 bytes per sample (the size the issue measured).
 * Frame records are 32 bytes apart from sp+8, no candidates needed.
 *   usage: gen_scale BINARY SYMMAP OUT.trace threads|mappings|stacks COUNT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/symmap.h"
#include "symmap_text.h"

#define LOAD 0x555555554000ull
#define NFN 32
#define NRET 8 /* return addresses per sample: 64 + 8 * 12 = 160 bytes */

typedef struct workload {
    uint64_t lo[NFN], hi[NFN];
    uint64_t main_lo, main_hi;
} workload;

/* a return address (or pc) inside function i, never its first byte */
static uint64_t inside(const workload *w, int i)
{
    return LOAD + w->lo[i] + (w->hi[i] - w->lo[i]) / 2;
}

/* The 9-frame stack of sample k: ret[] innermost caller first, main last. */
static void stack_of(const workload *w, uint64_t k, uint64_t *pc, uint64_t ret[NRET])
{
    int digit[4];
    for (int d = 0; d < 4; d++)
        digit[d] = (int)((k >> (5 * d)) & 31);
    int prefix = (int)((k >> 20) & 31);
    *pc = inside(w, (digit[0] + 1) & 31);
    ret[0] = inside(w, digit[0]);
    ret[1] = inside(w, digit[1]);
    ret[2] = inside(w, digit[2]);
    ret[3] = inside(w, digit[3]);
    ret[4] = inside(w, prefix);
    ret[5] = inside(w, (prefix * 7 + 3) & 31);
    ret[6] = inside(w, (prefix * 13 + 5) & 31);
    ret[7] = LOAD + w->main_lo + (w->main_hi - w->main_lo) / 2;
}

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[4], "threads") != 0 && strcmp(argv[4], "mappings") != 0 &&
                      strcmp(argv[4], "stacks") != 0)) {
        fprintf(stderr, "usage: gen_scale BINARY SYMMAP OUT.trace threads|mappings|stacks COUNT\n");
        return 2;
    }
    char err[512];
    sprof_symmap *m = sprof_symmap_open(argv[2], err, sizeof err);
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    workload w;
    for (int i = 0; i < NFN; i++) {
        char name[16];
        snprintf(name, sizeof name, "fn_%d", i);
        if (st_function(m, name, &w.lo[i], &w.hi[i]) != 0) {
            fprintf(stderr, "%s: no function %s\n", argv[2], name);
            return 1;
        }
    }
    if (st_function(m, "main", &w.main_lo, &w.main_hi) != 0) {
        fprintf(stderr, "%s: no main\n", argv[2]);
        return 1;
    }
    trace_builder b;
    if (tb_open(&b, argv[3]) != 0) {
        perror(argv[3]);
        return 1;
    }
    tb_info(&b, SPROF_MODE_CPU, 1000, 1000, argv[1]);
    if (st_map_text(&b, m, LOAD, argv[1], argv[2]) != 0)
        return 1;
    uint64_t count = strtoull(argv[5], NULL, 10);
    uint32_t fpoff[NRET];
    for (int i = 0; i < NRET; i++)
        fpoff[i] = 8 + 32 * (uint32_t)i;
    uint64_t pc, ret[NRET];
    if (strcmp(argv[4], "threads") == 0) {
        for (uint64_t i = 0; i < count; i++) {
            uint32_t tid = 1000 + (uint32_t)i;
            uint64_t t0 = 1000 + i * 1000;
            char name[16];
            snprintf(name, sizeof name, "w%u", (unsigned)(i % 100000));
            tb_thread(&b, tid, SPROF_THREAD_START, t0, "");
            tb_thread(&b, tid, SPROF_THREAD_NAME, t0 + 1, name);
            stack_of(&w, i, &pc, ret);
            uint64_t sp = 0x7ffd00000000ull - 0x10000ull * (i & 0xffff);
            tb_sample(&b, tid, 0, t0 + 2, 1000000, pc, sp, sp + 8, 8, ret, fpoff, NRET, NULL, NULL, 0);
            tb_thread(&b, tid, SPROF_THREAD_EXIT, t0 + 3, "");
        }
    } else if (strcmp(argv[4], "mappings") == 0) {
        static const uint8_t lib_id[20] = { 0x5c };
        for (uint64_t i = 0; i < count; i++) {
            char path[64];
            snprintf(path, sizeof path, "/nonexistent/sprof-scale/lib%llu.so", (unsigned long long)i);
            uint64_t start = 0x7f0000000000ull + i * 0x10000ull;
            tb_mapping(&b, start, start + 0x1000, 0, lib_id, sizeof lib_id, path);
        }
        for (uint64_t k = 0; k < 1000; k++) {
            uint64_t sp = 0x7ffd00000000ull;
            stack_of(&w, k, &pc, ret);
            tb_sample(&b, 1001, 0, 2000 + k * 1000, 1000000, pc, sp, sp + 8, 8, ret, fpoff, NRET, NULL, NULL, 0);
        }
    } else {
        for (uint32_t tid = 1001; tid <= 4; tid++)
            tb_thread(&b, tid, SPROF_THREAD_START, 1000, "worker");
        for (uint64_t k = 0; k < count; k++) {
            uint32_t tid = 1001 + (uint32_t)(k & 3);
            uint64_t sp = 0x7ffd00000000ull - 0x100000ull * (tid - 1000);
            stack_of(&w, k, &pc, ret);
            tb_sample(&b, tid, 0, 2000 + k * 1000, 1000000, pc, sp, sp + 8, 8, ret, fpoff, NRET, NULL, NULL, 0);
        }
    }
    tb_stats(&b, count, 0, 0);
    if (tb_close(&b, 0) != 0) {
        perror(argv[3]);
        return 1;
    }
    sprof_symmap_close(m);
    return 0;
}
