/* Many short threads vs a steady method: the main thread starts thousands of
 * threads one after the other, each running sp_Short_work for ~100 us (less
 * than one sampling period at 4 kHz), while it runs sp_Steady_compute
 * (~150 us) itself, then joins. Each short thread measures its routine. */
#include "acc_truth.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static _Atomic int64_t short_ns;
static int64_t steady_ns;
static uint64_t short_units;

static ACC_METHOD void sp_Short_work(uint64_t units) { acc_spin(units, 0x9009); }

static ACC_METHOD void *sp_Short_thread(void *arg)
{
    (void)arg;
    sp_Short_work(short_units);
    /* the thread's CPU clock starts at 0: this is all it ran, its start-up
     * in glibc (and the kernel) included, which a profile charges to the
     * thread's root, this routine */
    short_ns += acc_cpu_ns();
    return NULL;
}

static ACC_METHOD void sp_Steady_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x9119);
    steady_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    uint64_t steady = acc_units(150);
    /* main's own CPU is about half the case's: stop at half the budget */
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 0.5e9)) {
        pthread_t t;
        if (pthread_create(&t, NULL, sp_Short_thread, NULL) != 0)
            abort();
        sp_Steady_compute(steady);
        pthread_join(t, NULL);
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    short_units = acc_units(100);
    int64_t main_ns = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_scope("sp_Short_thread");
    acc_truth("sp_Short_thread", short_ns);
    acc_truth("sp_Steady_compute", steady_ns);
    acc_truth("total", main_ns + short_ns);
    return 0;
}
