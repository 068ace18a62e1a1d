/* Fibers switching often: two ucontext fibers hand over to each other after
 * 15 us (sp_Ping_step) and 8 us (sp_Pong_step) of work; every swapcontext
 * makes an rt_sigprocmask system call. Batches of 40 exchanges alternate with
 * sp_Solo_compute on the main stack. Steps are calibrated (called alone, N
 * times, before and after); sp_Solo_compute is measured. */
#include "acc_truth.h"

#include <stdlib.h>
#include <ucontext.h>

enum { EXCHANGES = 40, FIBER_STACK = 256 << 10, CALIBRATION_CALLS = 2000 };
static ucontext_t main_ctx, ping_ctx, pong_ctx;
static uint64_t ping_units, pong_units;
static int remaining;
static int64_t solo_ns, ping_steps, pong_steps;

static ACC_METHOD void sp_Ping_step(uint64_t units) { acc_spin(units, 0x6006); }
static ACC_METHOD void sp_Pong_step(uint64_t units) { acc_spin(units, 0x6116); }

static ACC_METHOD void sp_Ping_fiber(void)
{
    for (;;) {
        sp_Ping_step(ping_units);
        ping_steps++;
        swapcontext(&ping_ctx, &pong_ctx);
    }
}

static ACC_METHOD void sp_Pong_fiber(void)
{
    for (;;) {
        sp_Pong_step(pong_units);
        pong_steps++;
        swapcontext(&pong_ctx, --remaining > 0 ? &ping_ctx : &main_ctx);
    }
}

static ACC_METHOD void sp_Solo_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x6226);
    solo_ns += acc_cpu_ns() - t0;
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    uint64_t solo = acc_units(600);
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9)) {
        remaining = EXCHANGES;
        swapcontext(&main_ctx, &pong_ctx);
        sp_Solo_compute(solo);
    }
    return acc_cpu_ns() - t0;
}

static void make_fiber(ucontext_t *ctx, void (*fn)(void))
{
    getcontext(ctx);
    ctx->uc_stack.ss_sp = malloc(FIBER_STACK);
    ctx->uc_stack.ss_size = FIBER_STACK;
    ctx->uc_link = &main_ctx;
    if (!ctx->uc_stack.ss_sp)
        abort();
    makecontext(ctx, fn, 0);
}

static void calibrate(double *ping, double *pong)
{
    int64_t t0 = acc_cpu_ns();
    for (int i = 0; i < CALIBRATION_CALLS; i++)
        sp_Ping_step(ping_units);
    int64_t t1 = acc_cpu_ns();
    for (int i = 0; i < CALIBRATION_CALLS; i++)
        sp_Pong_step(pong_units);
    int64_t t2 = acc_cpu_ns();
    *ping += (double)(t1 - t0) / CALIBRATION_CALLS;
    *pong += (double)(t2 - t1) / CALIBRATION_CALLS;
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    ping_units = acc_units(15);
    pong_units = acc_units(8);
    make_fiber(&ping_ctx, sp_Ping_fiber);
    make_fiber(&pong_ctx, sp_Pong_fiber);
    double ping = 0, pong = 0;
    calibrate(&ping, &pong);
    int64_t total = sp_Main_run();
    calibrate(&ping, &pong);
    acc_scope("sp_Main_run");
    acc_scope("sp_Ping_fiber");
    acc_scope("sp_Pong_fiber");
    acc_truth("sp_Ping_step", (int64_t)(ping / 2 * (double)ping_steps));
    acc_truth("sp_Pong_step", (int64_t)(pong / 2 * (double)pong_steps));
    acc_truth("sp_Solo_compute", solo_ns);
    acc_truth("total", total);
    return 0;
}
