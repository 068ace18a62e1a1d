/* Bursty threads vs a steady one: two threads run sp_Burst_work in bursts of
 * 0.2-2 ms separated by 1 ms sleeps; one thread runs sp_Steady_work in 2 ms
 * chunks without pause. Each thread routine measures itself (start to end)
 * and each burst / chunk is measured. */
#include "acc_truth.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static _Atomic int64_t burst_thread_ns, burst_work_ns, steady_thread_ns, steady_work_ns;
static int64_t budget_ns;

static ACC_METHOD void sp_Burst_work(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x8008);
    burst_work_ns += acc_span_ns(t0);
}

static ACC_METHOD void *sp_Burst_thread(void *arg)
{
    int64_t t0 = acc_cpu_ns();
    unsigned seed = (unsigned)(uintptr_t)arg;
    struct timespec pause = {0, 1000000};
    while (acc_cpu_ns() - t0 < budget_ns / 4) {
        seed = seed * 1103515245u + 12345u;
        sp_Burst_work(acc_units(200 + (seed >> 8) % 1800));
        nanosleep(&pause, NULL);
    }
    burst_thread_ns += acc_span_ns(t0);
    return NULL;
}

static ACC_METHOD void sp_Steady_work(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x8118);
    steady_work_ns += acc_span_ns(t0);
}

static ACC_METHOD void *sp_Steady_thread(void *arg)
{
    (void)arg;
    int64_t t0 = acc_cpu_ns();
    uint64_t units = acc_units(2000);
    while (acc_cpu_ns() - t0 < budget_ns / 2)
        sp_Steady_work(units);
    steady_thread_ns += acc_span_ns(t0);
    return NULL;
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    budget_ns = (int64_t)(acc_budget_s() * 1e9);
    pthread_t t[3];
    pthread_create(&t[0], NULL, sp_Burst_thread, (void *)1);
    pthread_create(&t[1], NULL, sp_Burst_thread, (void *)2);
    pthread_create(&t[2], NULL, sp_Steady_thread, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    acc_scope("sp_Burst_thread");
    acc_scope("sp_Steady_thread");
    acc_truth("sp_Burst_thread", burst_thread_ns);
    acc_truth("sp_Burst_work", burst_work_ns);
    acc_truth("sp_Steady_thread", steady_thread_ns);
    acc_truth("sp_Steady_work", steady_work_ns);
    acc_truth("total", burst_thread_ns + steady_thread_ns);
    return 0;
}
