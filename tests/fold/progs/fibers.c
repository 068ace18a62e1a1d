/* Fixture for the fold fiber test: Spinel-style fibers (ucontext on
 * mmap'd 64 KiB stacks, a trampoline as the context's entry) that do all
 * the CPU work; main only switches between them. Every sample taken on a
 * fiber must fold to [Fiber];fiber_body;... with no stale chain into main. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#define NFIBERS 4
#define STACK_SIZE (64 * 1024)

static ucontext_t main_ctx, fiber_ctx[NFIBERS];
static volatile uint64_t sink;
static int done;

__attribute__((noinline)) uint64_t fiber_work(uint64_t x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ull + (uint64_t)i;
    return x;
}

__attribute__((noinline)) void fiber_body(int id)
{
    uint64_t x = (uint64_t)id;
    for (;;) {
        x = fiber_work(x);
        sink += x;
        swapcontext(&fiber_ctx[id], &main_ctx);
    }
}

/* the context entry, like Spinel's runtime */
__attribute__((noinline)) void sp_fiber_trampoline(int id)
{
    fiber_body(id);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    for (int i = 0; i < NFIBERS; i++) {
        void *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (stack == MAP_FAILED)
            return 1;
        getcontext(&fiber_ctx[i]);
        fiber_ctx[i].uc_stack.ss_sp = stack;
        fiber_ctx[i].uc_stack.ss_size = STACK_SIZE;
        fiber_ctx[i].uc_link = &main_ctx;
        makecontext(&fiber_ctx[i], (void (*)(void))sp_fiber_trampoline, 1, i);
    }
    double end = cpu_seconds() + seconds;
    unsigned long switches = 0;
    while (!done) {
        for (int k = 0; k < 64; k++, switches++)
            swapcontext(&main_ctx, &fiber_ctx[switches % NFIBERS]);
        done = cpu_seconds() >= end;
    }
    printf("%lu switches\n", switches);
    return 0;
}
