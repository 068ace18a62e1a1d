/* A loop in step with the sampling period: each round takes exactly 1 ms
 * of the thread's CPU (its end is on a 1 ms grid of the thread's clock),
 * the sampling period at 1 kHz and four of them at 4 kHz. sp_Deep_run
 * descends 200 frames (its samples cost more: a longer stack to copy or
 * walk) and works ~55 % of the round at the bottom; sp_Flat_compute works
 * out the rest. A sampler on a fixed grid takes every sample at the same
 * few points of the round, and its own cost moves those points where the
 * samples cost most: acc_deep, whose rounds came to ~1 ms by chance, read
 * 60-72 % deep for a 56 % truth under perf_event at 1 kHz before the
 * phase kicks (runtime-stub/src/sampling/perf_phase.c). */
#include "acc_truth.h"

enum { DEPTH = 200 };
static int64_t deep_ns, flat_ns, round_end, deep_end;
static uint64_t chunk;

/* work until the thread's clock passes `until` (chunks of ~100 us: a clock
 * read is a system call, which the cpuclock pacer's landings avoid) */
static inline __attribute__((always_inline)) void work_until(int64_t until, uint64_t salt)
{
    while (acc_cpu_ns() < until) acc_spin(chunk, salt);
}

static ACC_METHOD uint64_t sp_Tree_leaf(void)
{
    work_until(deep_end, 0xb00b);
    return acc_sink;
}

static ACC_METHOD uint64_t sp_Tree_descend(int depth)
{
    if (depth == 0)
        return sp_Tree_leaf();
    uint64_t r = sp_Tree_descend(depth - 1);
    return r + (uint64_t)depth; /* not a tail call: every level keeps its frame */
}

static ACC_METHOD void sp_Deep_run(void)
{
    int64_t t0 = acc_cpu_ns();
    acc_sink += sp_Tree_descend(DEPTH);
    deep_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Flat_compute(void)
{
    int64_t t0 = acc_cpu_ns();
    work_until(round_end, 0xb11b);
    flat_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    int64_t stop = t0 + (int64_t)(acc_budget_s() * 1e9);
    chunk = acc_units(100);
    round_end = t0;
    while (round_end < stop) {
        int64_t start = round_end;
        round_end = start + 1000000;
        deep_end = start + 550000;
        sp_Deep_run();
        sp_Flat_compute();
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_scope("sp_Tree_descend");
    acc_truth("sp_Deep_run", deep_ns);
    acc_truth("sp_Flat_compute", flat_ns);
    acc_truth("total", total);
    return 0;
}
