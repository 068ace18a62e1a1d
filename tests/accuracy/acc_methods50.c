/* 50 methods of different costs: sp_Method_<i> does (50 + i) units of work
 * (i = 1..50, each with its own constant, so no two bodies are alike). Four
 * rounds, each calling every method once in its own shuffled order. Scored as
 * the others (worst share error) and with rperf's metric: mean over methods
 * of |measured - expected| / expected. */
#include "acc_truth.h"

#include <stddef.h>

enum { METHODS = 50, ROUNDS = 4 };
static int64_t method_ns[METHODS + 1];

#define METHOD(i)                                                                                  \
    static ACC_METHOD void sp_Method_##i(uint64_t unit)                                            \
    {                                                                                              \
        int64_t t0 = acc_cpu_ns();                                                                 \
        acc_spin(unit * (50 + i), 0xb000 + i);                                                     \
        method_ns[i] += acc_span_ns(t0);                                                         \
    }
#define TEN(d) METHOD(d##0) METHOD(d##1) METHOD(d##2) METHOD(d##3) METHOD(d##4) \
               METHOD(d##5) METHOD(d##6) METHOD(d##7) METHOD(d##8) METHOD(d##9)
METHOD(1) METHOD(2) METHOD(3) METHOD(4) METHOD(5) METHOD(6) METHOD(7) METHOD(8) METHOD(9)
TEN(1) TEN(2) TEN(3) TEN(4)
METHOD(50)
#define REF(i) sp_Method_##i,
#define REFS(d) REF(d##0) REF(d##1) REF(d##2) REF(d##3) REF(d##4) \
                REF(d##5) REF(d##6) REF(d##7) REF(d##8) REF(d##9)
static void (*const methods[METHODS + 1])(uint64_t) = {
    NULL, REF(1) REF(2) REF(3) REF(4) REF(5) REF(6) REF(7) REF(8) REF(9) REFS(1) REFS(2) REFS(3) REFS(4) REF(50)};

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    /* sum over methods of (50 + i) = 3775 units per round */
    uint64_t unit = acc_units(acc_budget_s() * 1e6 / (3775.0 * ROUNDS));
    int order[METHODS];
    unsigned seed = 12345;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < METHODS; i++)
            order[i] = i + 1;
        for (int i = METHODS - 1; i > 0; i--) {
            seed = seed * 1103515245u + 12345u;
            int j = (int)((seed >> 8) % (unsigned)(i + 1)), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        for (int i = 0; i < METHODS; i++)
            methods[order[i]](unit);
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    int calls[METHODS + 1];
    for (int i = 0; i <= METHODS; i++)
        calls[i] = ROUNDS;
    acc_rperf_methods("sp_Method_", METHODS, method_ns, calls);
    acc_truth("total", total);
    return 0;
}
