/* A few-us compute step interleaved with a cheap system call (getppid), the
 * call being ~5-10 % of the loop's CPU. Per-call costs are too small to time
 * one by one, so they are calibrated: N calls alone and N steps alone, before
 * and after the measured run, in the same process. Truth: sp_Loop_run and
 * sp_Other_compute measured; sp_Step_work, sp_Probe_tick and the [syscall]
 * leaf = calls x calibrated cost. */
#include "acc_truth.h"

#include <unistd.h>

enum { STEPS_PER_BATCH = 100 };
static int calibration_calls; /* 20,000 in full mode: ~0.1 s */
static int64_t loop_ns, other_ns, loop_calls;

static ACC_METHOD void sp_Probe_tick(void) { acc_sink += (uint64_t)getppid(); }

static ACC_METHOD void sp_Step_work(uint64_t units) { acc_spin(units, 0x5005); }

static ACC_METHOD void sp_Loop_run(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    for (int i = 0; i < STEPS_PER_BATCH; i++) {
        sp_Step_work(units);
        sp_Probe_tick();
    }
    loop_calls += STEPS_PER_BATCH;
    loop_ns += acc_cpu_ns() - t0;
}

static ACC_METHOD void sp_Other_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x5115);
    other_ns += acc_cpu_ns() - t0;
}

static ACC_METHOD int64_t sp_Main_run(uint64_t step_units, uint64_t other_units)
{
    int64_t t0 = acc_cpu_ns();
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9)) {
        sp_Loop_run(step_units);
        sp_Other_compute(other_units);
    }
    return acc_cpu_ns() - t0;
}

/* ns per call of sp_Probe_tick and of sp_Step_work(units), added to *probe, *step */
static void calibrate(uint64_t units, double *probe, double *step)
{
    int64_t t0 = acc_cpu_ns();
    for (int i = 0; i < calibration_calls; i++)
        sp_Probe_tick();
    int64_t t1 = acc_cpu_ns();
    for (int i = 0; i < calibration_calls; i++)
        sp_Step_work(units);
    int64_t t2 = acc_cpu_ns();
    *probe += (double)(t1 - t0) / calibration_calls;
    *step += (double)(t2 - t1) / calibration_calls;
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    calibration_calls = (int)(20000 * acc_budget_s() / 1.5);
    double probe = 0, step = 0;
    calibrate(1, &probe, &step);
    /* a step ~12x the call: the call is ~7 % of sp_Loop_run */
    uint64_t units = acc_units(probe * 12 / 1000.0);
    probe = step = 0;
    calibrate(units, &probe, &step);
    int64_t total = sp_Main_run(units, units * STEPS_PER_BATCH);
    calibrate(units, &probe, &step);
    probe /= 2, step /= 2;
    acc_scope("sp_Main_run");
    acc_truth("sp_Loop_run", loop_ns);
    acc_truth("sp_Other_compute", other_ns);
    acc_truth("sp_Step_work", (int64_t)(step * (double)loop_calls));
    acc_truth("sp_Probe_tick", (int64_t)(probe * (double)loop_calls));
    acc_truth("[syscall]", (int64_t)(probe * (double)loop_calls));
    acc_truth("total", total);
    return 0;
}
