/* The runtime fault matrix's test program (tests/faults/): one behaviour per
 * case, each running about SECS seconds of wall time, each exiting 0 when it
 * ran as intended (or dying of its own SIGSEGV for `segv`). The profiler
 * must never change that outcome.
 *   threads SECS        8 threads created and joined in a loop
 *   spin4 SECS          4 threads working side by side for SECS (ThreadSanitizer run)
 *   fibers SECS         4 ucontext fibers on mmap'd 64 KiB stacks, no guard page
 *   fork SECS           fork without exec; the child works, then exit(0)
 *   fork_exec SECS      fork + exec of this program (`work`); the parent waits
 *   work SECS           plain CPU work (what fork_exec's child runs)
 *   sigprof SECS        its own SIGPROF handler + ITIMER_PROF; fails if the
 *                       handler stops being called or is replaced
 *   deep SECS           10,000-deep recursion, working at the bottom
 *   nofp SECS           work in a call chain built with -fomit-frame-pointer
 *   dlopen SECS LIB     dlopen(LIB) halfway, then works in its fault_dl_hot()
 *   sigmask SECS        blocks and unblocks every signal in a tight loop
 *   segv SECS           works, then dereferences NULL (dies of SIGSEGV) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

uint64_t fault_nofp_entry(uint64_t x, double secs); /* fault_nofp.c */

static double secs = 1.0;
static volatile uint64_t sink;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t work_leaf(uint64_t x, int n)
{
    for (int i = 0; i < n; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : "+r"(x));
    return x;
}

/* CPU work for `s` seconds of wall time. Threads call it at once: the
 * result goes to `sink` atomically (no data race of our own under TSan). */
__attribute__((noinline)) static void work_for(double s)
{
    double t0 = mono();
    uint64_t x = (uint64_t)(uintptr_t)&t0;
    while (mono() - t0 < s) x = work_leaf(x, 2000);
    __atomic_fetch_add(&sink, x, __ATOMIC_RELAXED);
}

static void *thread_body(void *arg)
{
    (void)arg;
    work_for(0.002);
    return NULL;
}

static int do_threads(void)
{
    double t0 = mono();
    long rounds = 0;
    while (mono() - t0 < secs) {
        pthread_t th[8];
        for (int i = 0; i < 8; i++)
            if (pthread_create(&th[i], NULL, thread_body, NULL) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                return 1;
            }
        for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
        rounds++;
    }
    printf("thread rounds %ld (%ld threads)\n", rounds, rounds * 8);
    return rounds > 0 ? 0 : 1;
}

static void *spin_body(void *arg)
{
    work_for(*(double *)arg);
    return NULL;
}

static int do_spin4(void)
{
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, spin_body, &secs) != 0) return 1;
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    return 0;
}

/* fibers: the stacks are plain mmap'd memory, no guard page, as Spinel's */
#define NFIB 4
static ucontext_t main_ctx, fib_ctx[NFIB];
static volatile int fib_done;

static void fiber_body(int k)
{
    for (;;) {
        sink += work_leaf(sink + (uint64_t)k, 300);
        swapcontext(&fib_ctx[k], &main_ctx);
        if (fib_done) break;
    }
    swapcontext(&fib_ctx[k], &main_ctx);
}

static int do_fibers(void)
{
    for (int k = 0; k < NFIB; k++) {
        void *stk = mmap(NULL, 64 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (stk == MAP_FAILED) return 1;
        getcontext(&fib_ctx[k]);
        fib_ctx[k].uc_stack.ss_sp = stk;
        fib_ctx[k].uc_stack.ss_size = 64 * 1024;
        fib_ctx[k].uc_link = &main_ctx;
        makecontext(&fib_ctx[k], (void (*)(void))fiber_body, 1, k);
    }
    double t0 = mono();
    long switches = 0;
    while (mono() - t0 < secs)
        for (int k = 0; k < NFIB; k++, switches++) swapcontext(&main_ctx, &fib_ctx[k]);
    fib_done = 1;
    for (int k = 0; k < NFIB; k++) swapcontext(&main_ctx, &fib_ctx[k]);
    printf("fiber switches %ld\n", switches);
    return 0;
}

static int wait_child(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) return 1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child %d ended badly (status 0x%x)\n", (int)pid, st);
        return 1;
    }
    return 0;
}

static int do_fork(int with_exec)
{
    work_for(secs / 3);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        if (with_exec) {
            char s[32];
            snprintf(s, sizeof s, "%g", secs / 3);
            execl("/proc/self/exe", "fault_prog", "work", s, (char *)NULL);
            _exit(127);
        }
        work_for(secs / 3);
        exit(0); /* the child's exit path runs the runtime's destructor */
    }
    printf("child %d\n", (int)pid);
    work_for(secs / 3);
    int rc = wait_child(pid);
    work_for(secs / 6);
    return rc;
}

static volatile sig_atomic_t own_prof_hits;
static void own_prof_handler(int sig)
{
    (void)sig;
    own_prof_hits++;
}

static int do_sigprof(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_prof_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    work_for(secs / 2);
    int first = own_prof_hits;
    work_for(secs / 2);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    struct sigaction cur;
    sigaction(SIGPROF, NULL, &cur);
    printf("own SIGPROF handler hits %d (%d in the first half)\n", (int)own_prof_hits, first);
    if (cur.sa_handler != own_prof_handler) {
        fprintf(stderr, "SIGPROF handler replaced\n");
        return 1;
    }
    return own_prof_hits > first && first > 0 ? 0 : 1;
}

__attribute__((noinline)) static uint64_t recurse(int depth)
{
    if (depth == 0) {
        work_for(secs);
        return sink;
    }
    uint64_t r = recurse(depth - 1);
    __asm__ volatile("" : "+r"(r)); /* not a tail call */
    return r + 1;
}

static int do_dlopen(const char *lib)
{
    work_for(secs / 2);
    void *h = dlopen(lib, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    uint64_t (*hot)(uint64_t, double) = (uint64_t(*)(uint64_t, double))dlsym(h, "fault_dl_hot");
    if (!hot) return 1;
    sink += hot(sink, secs / 2);
    return 0;
}

static int do_sigmask(void)
{
    sigset_t all, old;
    sigfillset(&all);
    double t0 = mono();
    long flips = 0;
    while (mono() - t0 < secs) {
        sigprocmask(SIG_BLOCK, &all, &old);
        sink += work_leaf(sink, 3000);
        sigprocmask(SIG_SETMASK, &old, NULL);
        sink += work_leaf(sink, 3000);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        sink += work_leaf(sink, 1000);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        flips += 2;
    }
    printf("mask flips %ld\n", flips);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fault_prog CASE SECS [LIB]\n");
        return 2;
    }
    const char *what = argv[1];
    secs = atof(argv[2]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(what, "threads")) return do_threads();
    if (!strcmp(what, "spin4")) return do_spin4();
    if (!strcmp(what, "fibers")) return do_fibers();
    if (!strcmp(what, "fork")) return do_fork(0);
    if (!strcmp(what, "fork_exec")) return do_fork(1);
    if (!strcmp(what, "work")) {
        work_for(secs);
        return 0;
    }
    if (!strcmp(what, "sigprof")) return do_sigprof();
    if (!strcmp(what, "deep")) {
        sink += recurse(10000);
        return 0;
    }
    if (!strcmp(what, "nofp")) {
        sink += fault_nofp_entry(sink, secs);
        return 0;
    }
    if (!strcmp(what, "dlopen") && argc >= 4) return do_dlopen(argv[3]);
    if (!strcmp(what, "sigmask")) return do_sigmask();
    if (!strcmp(what, "segv")) {
        work_for(secs);
        *(volatile int *)(uintptr_t)argc /* never mapped */ = 1;
        return 3;
    }
    fprintf(stderr, "fault_prog: unknown case %s\n", what);
    return 2;
}
