/* stdio formatting vs compute: sp_Report_format snprintf()s integers and
 * floats (glibc's frameless vfprintf internals under a Ruby method);
 * sp_Model_step only computes. */
#include "acc_truth.h"

#include <stdio.h>

static int64_t report_ns, model_ns;

static ACC_METHOD void sp_Report_format(unsigned round)
{
    int64_t t0 = acc_cpu_ns();
    char buf[128];
    for (unsigned i = 0; i < 200; i++) {
        int n = snprintf(buf, sizeof buf, "%u:%d %.3f %x", round, (int)(i * 7919u), (double)i / 7.0, i * round);
        acc_sink += (uint64_t)n + (uint64_t)buf[3];
    }
    report_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Model_step(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x4004);
    model_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    uint64_t units = acc_units(120);
    for (unsigned round = 0; acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9); round++) {
        sp_Report_format(round);
        sp_Model_step(units);
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_truth("sp_Report_format", report_ns);
    acc_truth("sp_Model_step", model_ns);
    acc_truth("total", total);
    return 0;
}
