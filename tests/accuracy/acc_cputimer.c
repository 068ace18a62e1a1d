/* A CPU-time timer's signal handler vs the work it interrupts: the program
 * arms ITIMER_VIRTUAL every 1 ms of its user CPU; the kernel checks CPU
 * timers at its tick, so the handler (sp_Timer_tick, ~100 us of spin) runs
 * right after every tick: ~2.5 % of the CPU at HZ 250. A sampler whose
 * period divides the tick's sees it at one fixed phase: at 4 kHz (250 us)
 * the handler's 100 us hold one of the samples' 16 phases per tick or
 * none, 6.25 % or 0 % of the samples, never 2.5 % (perf_event's fixed
 * period before the runtime dithered it; a 450 us handler at 1 kHz read
 * 0.1-0.3 % for 11 %). The handler times itself; sp_Main_run and
 * sp_Main_compute measure their batches (handler time included: the
 * handler's frames are above theirs). */
#include "acc_truth.h"

#include <signal.h>
#include <string.h>
#include <sys/time.h>

static int64_t tick_ns, compute_ns;
static uint64_t tick_units;

static ACC_METHOD void sp_Timer_tick(int sig)
{
    (void)sig;
    int64_t t0 = acc_cpu_ns();
    acc_spin(tick_units, 0x9119);
    tick_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Main_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x9229);
    compute_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    uint64_t units = acc_units(200);
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9))
        sp_Main_compute(units);
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    tick_units = acc_units(100);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sp_Timer_tick;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct itimerval every_ms = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    if (sigaction(SIGVTALRM, &sa, NULL) != 0 || setitimer(ITIMER_VIRTUAL, &every_ms, NULL) != 0) return 1;
    int64_t total = sp_Main_run();
    setitimer(ITIMER_VIRTUAL, &off, NULL);
    acc_scope("sp_Main_run");
    acc_truth("sp_Timer_tick", tick_ns);
    acc_truth("sp_Main_compute", compute_ns);
    acc_truth("total", total);
    return 0;
}
