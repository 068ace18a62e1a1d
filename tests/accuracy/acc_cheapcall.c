/* A few-us compute step interleaved with a cheap system call (getppid), the
 * call being ~5-10 % of the loop's CPU. Everything is measured.
 *
 * A step or a call is too short for the thread's CPU clock (a system call
 * itself), so each is timed with CLOCK_MONOTONIC (vDSO, ~20 ns; the cost of
 * one read, timed alone, is taken off each interval) and each batch with
 * both clocks. Wall time inside a step is its CPU time plus any time the
 * thread was switched out (the cpuclock pacer's wakes do that every
 * period); the batch's wall minus CPU is taken off its most overrun steps
 * and calls, each down to its usual time at most. Calibrated truths (the
 * costs measured alone, before and after the run) were up to 2.7 pp off
 * the loop's measured time in one run in three: a step does not cost the
 * same alone as beside the system call. */
#include "acc_truth.h"

#include <stdint.h>
#include <unistd.h>

enum { STEPS_PER_BATCH = 100, MAX_OVERRUNS = 32 };
static int64_t loop_ns, other_ns;
static int64_t step_ns, probe_ns;          /* measured, switched-out time taken off */
static int64_t step_usual, probe_usual;    /* fastest of many, alone */
static int64_t read_ns;                     /* one CLOCK_MONOTONIC read */

/* this batch's items that ran longer than usual: how much, and which sum */
static struct { int64_t over; int64_t *sum; } overruns[MAX_OVERRUNS];
static int n_overruns;

static ACC_METHOD void sp_Probe_tick(void) { acc_sink += (uint64_t)getppid(); }

static ACC_METHOD void sp_Step_work(uint64_t units) { acc_spin(units, 0x5005); }

static void count(int64_t *sum, int64_t usual, int64_t ns)
{
    ns -= read_ns;
    *sum += ns;
    int64_t over = ns - usual;
    if (over <= 1000) return; /* switches take several us */
    int slot = n_overruns;
    if (slot == MAX_OVERRUNS) { /* keep the largest */
        slot = 0;
        for (int i = 1; i < MAX_OVERRUNS; i++)
            if (overruns[i].over < overruns[slot].over) slot = i;
        if (overruns[slot].over >= over) return;
    } else {
        n_overruns++;
    }
    overruns[slot].over = over;
    overruns[slot].sum = sum;
}

/* the batch's switched-out time, off its most overrun items */
static void take_off_switched_out(int64_t switched_out)
{
    while (switched_out > 0 && n_overruns > 0) {
        int top = 0;
        for (int i = 1; i < n_overruns; i++)
            if (overruns[i].over > overruns[top].over) top = i;
        int64_t take = overruns[top].over < switched_out ? overruns[top].over : switched_out;
        *overruns[top].sum -= take;
        switched_out -= take;
        overruns[top] = overruns[--n_overruns];
    }
    n_overruns = 0;
}

static ACC_METHOD void sp_Loop_run(uint64_t units)
{
    int64_t t0 = acc_cpu_ns(), wall0 = acc_mono_ns();
    for (int i = 0; i < STEPS_PER_BATCH; i++) {
        int64_t a = acc_mono_ns();
        sp_Step_work(units);
        int64_t b = acc_mono_ns();
        sp_Probe_tick();
        int64_t c = acc_mono_ns();
        count(&step_ns, step_usual, b - a);
        count(&probe_ns, probe_usual, c - b);
    }
    int64_t cpu = acc_span_ns(t0);
    loop_ns += cpu;
    take_off_switched_out((acc_mono_ns() - wall0) - cpu);
}

static ACC_METHOD void sp_Other_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x5115);
    other_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(uint64_t step_units, uint64_t other_units)
{
    int64_t t0 = acc_cpu_ns();
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9)) {
        sp_Loop_run(step_units);
        sp_Other_compute(other_units);
    }
    return acc_span_ns(t0);
}

/* the fastest of many timed runs of one step (units) or call (units 0) */
static int64_t usual_ns(uint64_t units)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 2000; i++) {
        int64_t t0 = acc_mono_ns();
        if (units) sp_Step_work(units);
        else sp_Probe_tick();
        int64_t ns = acc_mono_ns() - t0 - read_ns;
        best = ns < best ? ns : best;
    }
    return best;
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    read_ns = INT64_MAX;
    for (int i = 0; i < 10000; i++) {
        int64_t t0 = acc_mono_ns(), ns = acc_mono_ns() - t0;
        read_ns = ns < read_ns ? ns : read_ns;
    }
    probe_usual = usual_ns(0);
    /* a step ~12x the call: the call is ~7 % of sp_Loop_run */
    uint64_t units = acc_units((double)probe_usual * 12 / 1000.0);
    step_usual = usual_ns(units);
    int64_t total = sp_Main_run(units, units * STEPS_PER_BATCH);
    acc_scope("sp_Main_run");
    acc_truth("sp_Loop_run", loop_ns);
    acc_truth("sp_Other_compute", other_ns);
    acc_truth("sp_Step_work", step_ns);
    acc_truth("sp_Probe_tick", probe_ns);
    acc_truth("[syscall]", probe_ns);
    acc_truth("total", total);
    return 0;
}
