/* Writes the fold fixture files into a directory for the CLI test:
 *   app.symmap      (fixture_symmap.c)
 *   app.trace       samples of main;Foo#bar;Baz#qux and a frameless leaf
 *   other.trace     the same from another build (build-id 0a0b0c0d)
 *   kernel.trace    format 1.1: 60 user + 40 write(2) kernel samples under
 *                   main;Foo#bar;Baz#qux, STATS accounting for all its CPU
 *   lossy.trace     the same samples, STATS saying they cover 80 % of the
 *                   CPU at 80 % of the rate asked, kernel time (20 %) unsampled
 *   old.trace       kernel.trace's samples with a format 1.0 (64-byte) STATS
 *   incomplete.trace 70 samples under main;Foo#bar;Baz#qux and 30 in the
 *                   same place with no frame chain at all (frame pointer 0,
 *                   no return-address candidates): stacks that do not reach
 *                   main, which every view must report (sprof/caveats.h)
 * usage: make_fixture DIR */
#include <stdio.h>
#include <string.h>

#include "fixture_symmap.h"
#include "trace_builder.h"

#define LOAD 0x555555554000ull
#define SP 0x7ffd00010000ull

/* A trace of the fixture binary: header, INFO (cpu, 1 kHz) and its one mapping. */
static int open_fixture_trace(trace_builder *b, const char *path, const uint8_t *id)
{
    if (tb_open(b, path) != 0)
        return -1;
    tb_info(b, SPROF_MODE_CPU, 1000, 1000, FIXTURE_BINARY);
    tb_mapping(b, LOAD + 0x1000, LOAD + 0x11000, 0x1000, id, 4, FIXTURE_BINARY);
    return 0;
}

static int trace(const char *path, const uint8_t *id)
{
    trace_builder b;
    if (open_fixture_trace(&b, path, id) != 0)
        return -1;
    uint64_t ret_main[1] = { LOAD + 0x1310 };
    uint32_t off[1] = { 0x40 };
    uint32_t coff[1] = { 0 };
    uint64_t cval[1] = { LOAD + 0x1130 };
    for (int i = 0; i < 60; i++)
        tb_sample(&b, 7, 0, 1000 + (uint64_t)i * 1000000, 1000000, LOAD + 0x1115, SP, SP + 0x40,
                  0x40, ret_main, off, 1, NULL, NULL, 0);
    for (int i = 0; i < 40; i++)
        tb_sample(&b, 8, 0, 1000 + (uint64_t)i * 1000000, 1000000, LOAD + 0x1510, SP, SP + 0x40,
                  0x40, ret_main, off, 1, coff, cval, 1);
    tb_stats(&b, 100, 0, 0);
    return tb_close(&b, 0);
}

#define MS 1000000ull

/* Which STATS a kernel_trace gets. */
enum stats_kind { STATS_ACCURATE, STATS_LOSSY, STATS_V1 };

static int kernel_trace(const char *path, enum stats_kind kind)
{
    trace_builder b;
    const uint8_t id[4] = { FIXTURE_BUILD_ID };
    if (open_fixture_trace(&b, path, id) != 0)
        return -1;
    uint64_t ret_main[1] = { LOAD + 0x1310 };
    uint32_t off[1] = { 0x40 };
    for (int i = 0; i < 100; i++)
        tb_sample(&b, 7, i < 60 ? 0 : tb_syscall_flags(1), 1000 + (uint64_t)i * MS, MS, LOAD + 0x1115, SP,
                  SP + 0x40, 0x40, ret_main, off, 1, NULL, NULL, 0);
    struct sprof_rec_stats st;
    memset(&st, 0, sizeof st);
    st.samples_written = 100;
    st.threads_seen = 1;
    st.cpu_ns_total = 100 * MS;
    st.achieved_millihz = 1000000;
    st.user_cpu_ns = 60 * MS;
    st.system_cpu_ns = 40 * MS;
    st.weight_ns_total = 100 * MS;
    st.kernel_weight_ns = 40 * MS;
    st.kernel_sampling = SPROF_KSAMPLE_PERF;
    st.own_cpu_ns = 5 * MS;
    if (kind == STATS_LOSSY) {
        st.cpu_ns_total = 125 * MS;
        st.user_cpu_ns = 100 * MS;
        st.system_cpu_ns = 25 * MS;
        st.achieved_millihz = 800000;
        st.signals_lost = 30;
        st.kernel_sampling = SPROF_KSAMPLE_NONE;
    }
    tb_stats_record(&b, &st, kind == STATS_V1 ? SPROF_REC_STATS_V1_SIZE : sizeof st);
    return tb_close(&b, 0);
}

static int incomplete_trace(const char *path)
{
    trace_builder b;
    const uint8_t id[4] = { FIXTURE_BUILD_ID };
    if (open_fixture_trace(&b, path, id) != 0)
        return -1;
    uint64_t ret_main[1] = { LOAD + 0x1310 };
    uint32_t off[1] = { 0x40 };
    for (int i = 0; i < 100; i++) {
        if (i < 70)
            tb_sample(&b, 7, 0, 1000 + (uint64_t)i * MS, MS, LOAD + 0x1115, SP, SP + 0x40, 0x40, ret_main, off, 1,
                      NULL, NULL, 0);
        else
            tb_sample(&b, 7, 0, 1000 + (uint64_t)i * MS, MS, LOAD + 0x1115, SP, 0, 0, NULL, NULL, 0, NULL, NULL, 0);
    }
    tb_stats(&b, 100, 0, 0);
    return tb_close(&b, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_fixture DIR\n");
        return 2;
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/app.symmap", argv[1]);
    fixture_symmap_write(p);
    const uint8_t good[4] = { FIXTURE_BUILD_ID }, bad[4] = { 0x0a, 0x0b, 0x0c, 0x0d };
    snprintf(p, sizeof p, "%s/app.trace", argv[1]);
    if (trace(p, good) != 0)
        return 1;
    snprintf(p, sizeof p, "%s/other.trace", argv[1]);
    if (trace(p, bad) != 0)
        return 1;
    static const struct {
        const char *name;
        enum stats_kind kind;
    } kt[] = { { "kernel.trace", STATS_ACCURATE }, { "lossy.trace", STATS_LOSSY }, { "old.trace", STATS_V1 } };
    for (size_t i = 0; i < sizeof kt / sizeof kt[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", argv[1], kt[i].name);
        if (kernel_trace(p, kt[i].kind) != 0)
            return 1;
    }
    snprintf(p, sizeof p, "%s/incomplete.trace", argv[1]);
    if (incomplete_trace(p) != 0)
        return 1;
    return 0;
}
