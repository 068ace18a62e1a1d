/* A program of fixed work for sprof-diff's CPU columns: sp_A_work and
 * sp_B_work each run a fixed number of iterations times SCALE (argv[1]),
 * about 3:2 in time, so a larger SCALE makes the whole program slower while
 * every method keeps its share; B_SCALE (argv[3]) makes sp_B_work alone
 * slower (a real change of the shares). Both run the same instruction mix
 * (one LCG step, different constants so the compiler does not fold them):
 * a loaded machine (a sibling job, frequency changes) then slows both alike
 * and the shares stay put; with two different loops a CI run once moved
 * them 0.6 pp apart, a real change the replicate test rightly marked. */
#include <stdint.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void sp_A_work(long n)
{
    uint64_t s = sink;
    for (long i = 0; i < n; i++) s = s * 6364136223846793005ull + 1442695040888963407ull;
    sink = s;
}

__attribute__((noinline)) static void sp_B_work(long n)
{
    uint64_t s = sink;
    for (long i = 0; i < n; i++) s = s * 2862933555777941757ull + 3037000493ull;
    sink = s;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    long rounds = argc > 2 ? atol(argv[2]) : 200;
    double b_scale = argc > 3 ? atof(argv[3]) : 1.0;
    for (long r = 0; r < rounds; r++) {
        sp_A_work((long)(300000 * scale));
        sp_B_work((long)(200000 * scale * b_scale));
    }
    return 0;
}
