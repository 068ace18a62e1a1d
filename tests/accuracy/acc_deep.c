/* Deep recursion vs a shallow method: sp_Deep_run descends 500 frames of
 * sp_Tree_descend and works at the bottom (sp_Tree_leaf, ~500 us); it
 * alternates with sp_Flat_compute. A profiler that cuts deep stacks loses
 * sp_Deep_run (and main) from those samples. */
#include "acc_truth.h"

enum { DEPTH = 500 };
static int64_t deep_ns, leaf_ns, flat_ns;

static ACC_METHOD uint64_t sp_Tree_leaf(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0xa00a);
    leaf_ns += acc_span_ns(t0);
    return acc_sink;
}

static ACC_METHOD uint64_t sp_Tree_descend(int depth, uint64_t units)
{
    if (depth == 0)
        return sp_Tree_leaf(units);
    uint64_t r = sp_Tree_descend(depth - 1, units);
    return r + (uint64_t)depth; /* not a tail call: every level keeps its frame */
}

static ACC_METHOD void sp_Deep_run(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_sink += sp_Tree_descend(DEPTH, units);
    deep_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Flat_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0xa11a);
    flat_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    uint64_t leaf = acc_units(500), flat = acc_units(400);
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9)) {
        sp_Deep_run(leaf);
        sp_Flat_compute(flat);
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    int64_t total = sp_Main_run();
    /* a cut deep stack still holds sp_Tree_descend: it stays in the total */
    acc_scope("sp_Main_run");
    acc_scope("sp_Tree_descend");
    acc_truth("sp_Deep_run", deep_ns);
    acc_truth("sp_Tree_leaf", leaf_ns);
    acc_truth("sp_Flat_compute", flat_ns);
    acc_truth("total", total);
    return 0;
}
