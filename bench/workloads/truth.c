/* Ground-truth workload for bench/run (overhead and accuracy).
 *
 *   truth [-t THREADS] [-r ROUNDS] [-b BASE] [-f FLOOR_HZ]
 *
 * Fixed work (ROUNDS rounds per thread), so a profiler's cost shows up as
 * extra CPU and wall time. Each round walks a 20-deep call chain
 * (level_01 .. level_20, none inlined, no sibling calls) and then runs four
 * leaves whose work is 4:3:2:1 x BASE LCG steps: leaf_a, leaf_b, leaf_c
 * (real functions) and leaf_d (always_inline into level_20). Every leaf
 * measures its own CPU time with CLOCK_THREAD_CPUTIME_ID around its work; the
 * totals are the ground truth the profilers' leaf shares are compared with.
 *
 * THREADS > 1: main starts THREADS-1 threads (root: worker_main) and runs
 * the same rounds itself (root: main).
 *
 * -f FLOOR_HZ: also start a thread that only wakes on absolute
 * CLOCK_MONOTONIC deadlines FLOOR_HZ times a second (timer slack 1 ns) —
 * the cheapest high-resolution periodic wakeup this machine can do — and
 * report how often it woke and its own CPU time.
 *
 * Prints "key value" lines (ns for times) on stdout at the end of main.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define NLEAVES 4

static const char *const leaf_names[NLEAVES] = { "leaf_a", "leaf_b", "leaf_c", "leaf_d" };

struct ctx {
    uint64_t base;      /* LCG steps of the smallest leaf */
    uint64_t state;     /* LCG state, kept live so nothing is optimised away */
    int64_t leaf_ns[NLEAVES];
    int64_t thread_cpu_ns;
};

static volatile uint64_t sink;
static long rounds = 1000;
static struct ctx ctxs[MAX_THREADS];

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline __attribute__((always_inline)) uint64_t lcg(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* Each leaf times itself: the clock reads are inside the leaf on purpose
 * (a sample landing in them belongs to the leaf in every profiler). */
#define LEAF_BODY(idx, mult)                                                   \
    int64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);                            \
    c->state = lcg(c->state, (mult) * c->base);                                \
    c->leaf_ns[idx] += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;

__attribute__((noinline)) void leaf_a(struct ctx *c) { LEAF_BODY(0, 4) }
__attribute__((noinline)) void leaf_b(struct ctx *c) { LEAF_BODY(1, 3) }
__attribute__((noinline)) void leaf_c(struct ctx *c) { LEAF_BODY(2, 2) }
static inline __attribute__((always_inline)) void leaf_d(struct ctx *c) { LEAF_BODY(3, 1) }

/* The chain: the empty asm after each call keeps the call a real call (no
 * tail call), so every level has a frame of its own. */
__attribute__((noinline)) void level_20(struct ctx *c)
{
    leaf_a(c);
    leaf_b(c);
    leaf_c(c);
    leaf_d(c);
    __asm__ volatile("" ::: "memory");
}
#define LEVEL(n, next)                                                         \
    __attribute__((noinline)) void level_##n(struct ctx *c)                    \
    {                                                                          \
        level_##next(c);                                                       \
        __asm__ volatile("" ::: "memory");                                     \
    }
LEVEL(19, 20) LEVEL(18, 19) LEVEL(17, 18) LEVEL(16, 17) LEVEL(15, 16) LEVEL(14, 15)
LEVEL(13, 14) LEVEL(12, 13) LEVEL(11, 12) LEVEL(10, 11) LEVEL(09, 10) LEVEL(08, 09)
LEVEL(07, 08) LEVEL(06, 07) LEVEL(05, 06) LEVEL(04, 05) LEVEL(03, 04) LEVEL(02, 03)
LEVEL(01, 02)

__attribute__((noinline)) static void run_rounds(struct ctx *c)
{
    for (long r = 0; r < rounds; r++)
        level_01(c);
    sink += c->state;
    c->thread_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void *worker_main(void *arg)
{
    run_rounds(arg);
    __asm__ volatile("" ::: "memory");
    return NULL;
}

/* ---- the floor: a thread that only wakes on a high-resolution timer ---- */
static atomic_int floor_stop;
static long floor_hz;
static uint64_t floor_wakeups, floor_late;
static int64_t floor_cpu_ns;

static void *floor_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    const int64_t period = 1000000000 / floor_hz;
    int64_t next = clock_ns(CLOCK_MONOTONIC) + period;
    while (!atomic_load_explicit(&floor_stop, memory_order_relaxed)) {
        struct timespec ts = { (time_t)(next / 1000000000), (long)(next % 1000000000) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        floor_wakeups++;
        next += period;
        int64_t now = clock_ns(CLOCK_MONOTONIC);
        if (next <= now) { /* overslept: count it, do not spin to catch up */
            floor_late++;
            next = now + period;
        }
    }
    floor_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

static long arg_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0) {
        fprintf(stderr, "truth: bad %s: %s\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    long nthreads = 1, base = 250000;
    int opt;
    while ((opt = getopt(argc, argv, "t:r:b:f:")) != -1) {
        switch (opt) {
        case 't': nthreads = arg_long(optarg, "thread count"); break;
        case 'r': rounds = arg_long(optarg, "round count"); break;
        case 'b': base = arg_long(optarg, "base"); break;
        case 'f': floor_hz = arg_long(optarg, "floor rate"); break;
        default:
            fprintf(stderr, "usage: truth [-t THREADS] [-r ROUNDS] [-b BASE] [-f FLOOR_HZ]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAX_THREADS || base < 1 || floor_hz > 1000000) {
        fprintf(stderr, "truth: threads 1..%d, base >= 1, floor <= 1000000\n", MAX_THREADS);
        return 2;
    }
    int64_t wall0 = clock_ns(CLOCK_MONOTONIC);
    pthread_t floor_thread, th[MAX_THREADS];
    if (floor_hz > 0 && pthread_create(&floor_thread, NULL, floor_main, NULL) != 0) {
        fprintf(stderr, "truth: cannot start the floor thread\n");
        return 1;
    }
    for (long i = 0; i < nthreads; i++) {
        ctxs[i].base = (uint64_t)base;
        ctxs[i].state = (uint64_t)i + 1;
    }
    for (long i = 1; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, worker_main, &ctxs[i]) != 0) {
            fprintf(stderr, "truth: cannot start thread %ld\n", i);
            return 1;
        }
    run_rounds(&ctxs[0]);
    for (long i = 1; i < nthreads; i++)
        pthread_join(th[i], NULL);
    if (floor_hz > 0) {
        atomic_store(&floor_stop, 1);
        pthread_join(floor_thread, NULL);
    }
    int64_t wall = clock_ns(CLOCK_MONOTONIC) - wall0;
    int64_t proc_cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

    int64_t leaves[NLEAVES] = { 0 }, threads_cpu = 0;
    for (long i = 0; i < nthreads; i++) {
        for (int l = 0; l < NLEAVES; l++)
            leaves[l] += ctxs[i].leaf_ns[l];
        threads_cpu += ctxs[i].thread_cpu_ns;
    }
    for (int l = 0; l < NLEAVES; l++)
        printf("leaf %s %lld\n", leaf_names[l], (long long)leaves[l]);
    printf("threads %ld\n", nthreads);
    printf("threads_cpu_ns %lld\n", (long long)threads_cpu);
    printf("process_cpu_ns %lld\n", (long long)proc_cpu);
    printf("wall_ns %lld\n", (long long)wall);
    if (floor_hz > 0) {
        printf("floor_hz %ld\n", floor_hz);
        printf("floor_wakeups %llu\n", (unsigned long long)floor_wakeups);
        printf("floor_late %llu\n", (unsigned long long)floor_late);
        printf("floor_thread_cpu_ns %lld\n", (long long)floor_cpu_ns);
    }
    printf("sink %llu\n", (unsigned long long)(sink & 1));
    return 0;
}
