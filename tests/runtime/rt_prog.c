/* Test program for the runtime stub. One binary, several behaviours:
 *   spin SECS [THREADS] [cpu]  CPU-bound threads; prints "thread TID CPU_NS" per thread
 *                         ("cpu": each thread runs until it has used SECS of CPU,
 *                         at most 30 x SECS of wall time, for loaded machines)
 *   deep SECS             50-deep frame-pointer recursion, spinning in an FP leaf
 *   frameless SECS        spins in a frameless leaf called from an FP caller
 *   memcmp SECS           spins in glibc memcmp
 *   malloc SECS           spins in glibc malloc/free
 *   longcall SECS         2 ms of compute, then mmap(MAP_POPULATE) of 32 MiB and its
 *                         munmap, in turn; prints "longcall CALLS_CPU_NS THREAD_CPU_NS"
 *   fibers SECS           ucontext fibers on mmap'd 64 KiB stacks, ~10,000 switches/s
 *   fork SECS             forks; parent and child both spin; prints "child PID"
 *   sigprof SECS          installs its own SIGPROF handler + ITIMER_PROF; checks it is kept
 *   tasks                 prints "tasks N" (threads in /proc/self/task)
 *   sleep SECS            alternates sleeping syscalls and work; prints "eintr N"
 *   fork_exec SECS        fork; the child exec()s this program ("spin SECS") at once
 *   exec SECS [HOPS]      spins SECS, then exec()s this program itself: "exec SECS HOPS-1"
 *                         while HOPS > 1, else "spin SECS"
 *   dlopen SECS           dlopen()s libz after start, then spins
 *   underscore_exit SECS  spins SECS/2, vfork()s a child that _exit()s at once,
 *                         spins SECS/2 more, then ends with _exit(0) (no destructors)
 *   crash SECS segv|abort spins, then dies of the signal
 *   badfp SECS            spins with rbp holding garbage and with a corrupted saved
 *                         frame pointer: the walk must stop, never fault
 * Prints "range NAME LO HI" for code ranges the checker needs. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

uint64_t rt_frameless_leaf(uint64_t x, int n);

static double secs = 1.0;
static int until_cpu;
static volatile uint64_t sink;

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report_thread(void)
{
    printf("thread %ld %lld\n", (long)syscall(SYS_gettid), (long long)(now(CLOCK_THREAD_CPUTIME_ID) * 1e9));
}

__attribute__((noinline)) static uint64_t fp_leaf(uint64_t x)
{
    for (int i = 0; i < 2000; i++) x = x * 6364136223846793005ull + 1442695040888963407ull;
    __asm__ volatile("" : "+r"(x));
    return x;
}

/* Frame-pointer work until t_end (monotonic seconds). */
static inline void spin_until(double t_end)
{
    while (now(CLOCK_MONOTONIC) < t_end) sink += fp_leaf(sink);
}

/* The parent's side of fork and fork_exec: name the child, work until
 * t_end, reap it. 0 if the child exited 0, else 4. */
static int work_then_reap(pid_t child, double t_end)
{
    printf("child %d\n", (int)child);
    spin_until(t_end);
    int st;
    waitpid(child, &st, 0);
    report_thread();
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 4;
}

static void *spin_thread(void *arg)
{
    if (arg) pthread_setname_np(pthread_self(), (const char *)arg);
    double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    if (until_cpu) {
        while (now(CLOCK_THREAD_CPUTIME_ID) - c0 < secs && now(CLOCK_MONOTONIC) - t0 < 30 * secs)
            for (int i = 0; i < 20; i++) sink += fp_leaf(sink);
    } else {
        spin_until(t0 + secs);
    }
    report_thread();
    return NULL;
}

static int do_spin(int n)
{
    if (n <= 1) {
        spin_thread(NULL);
        return 0;
    }
    pthread_t th[64];
    if (n > 64) n = 64;
    static char names[64][16];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "worker-%d", i);
        pthread_create(&th[i], NULL, spin_thread, names[i]);
    }
    for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
    return 0;
}

/* Not a tail call: work after the recursive call keeps every frame. */
__attribute__((noinline)) static uint64_t recurse(int depth, double t0)
{
    uint64_t r;
    if (depth == 0) {
        r = 0;
        while (now(CLOCK_MONOTONIC) - t0 < secs) r += fp_leaf(r);
    } else {
        r = recurse(depth - 1, t0);
    }
    __asm__ volatile("" : "+r"(r));
    return r + (uint64_t)depth;
}

__attribute__((noinline)) static uint64_t frameless_caller(uint64_t x)
{
    x = rt_frameless_leaf(x, 4000);
    __asm__ volatile("" : "+r"(x));
    return x + 1;
}

static char bufa[1 << 16], bufb[1 << 16];

__attribute__((noinline)) static int memcmp_caller(size_t n)
{
    int r = memcmp(bufa, bufb, n);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noinline)) static void *malloc_caller(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : "+r"(p));
    return p;
}

__attribute__((noinline)) static void free_caller(void *p)
{
    free(p);
    __asm__ volatile("");
}

#if defined(__x86_64__)
/* Spin n iterations with rbp = v (not a frame pointer). rbp is saved and
 * restored by hand: the compiler does not let asm clobber it. */
__attribute__((noinline)) static void spin_with_rbp(uint64_t v, long n)
{
    __asm__ volatile("push %%rbp\n\t"
                     "mov %0, %%rbp\n\t"
                     "1: dec %1\n\t"
                     "jnz 1b\n\t"
                     "pop %%rbp\n\t"
                     : "+r"(v), "+r"(n)
                     :
                     : "memory", "cc");
}

/* Spin with this function's saved frame pointer ([rbp]) overwritten. */
__attribute__((noinline)) static void spin_with_bad_link(uint64_t v, long n)
{
    uint64_t *rbp;
    __asm__ volatile("mov %%rbp, %0" : "=r"(rbp));
    uint64_t saved = rbp[0];
    __asm__ volatile("" ::: "memory");
    *(volatile uint64_t *)rbp = v;
    while (n-- > 0) __asm__ volatile("");
    *(volatile uint64_t *)rbp = saved;
    __asm__ volatile("" ::: "memory");
}

static int do_badfp(double t0)
{
    char local[64];
    uint64_t sp_near = (uint64_t)(uintptr_t)local;
    uint64_t vals[] = {0, 1, 0x10000000ull, 0xffff800000000000ull, sp_near - 4096, sp_near + 3,
                       sp_near + (1ull << 22), (uint64_t)(uintptr_t)bufa, (uint64_t)(uintptr_t)&do_badfp,
                       0x7ffffffff000ull, ~0ull - 15};
    unsigned i = 0;
    while (now(CLOCK_MONOTONIC) - t0 < secs) {
        uint64_t v = vals[i++ % (sizeof vals / sizeof vals[0])];
        spin_with_rbp(v, 200000);
        spin_with_bad_link(v, 200000);
    }
    report_thread();
    return 0;
}
#else
static int do_badfp(double t0)
{
    (void)t0;
    report_thread();
    return 0;
}
#endif

static void range(const char *name, void *fn) { printf("range %s %p %p\n", name, fn, (void *)((char *)fn + 256)); }

/* fibers */
#define NFIB 4
static ucontext_t main_ctx, fib_ctx[NFIB];
static volatile int fib_stop;
static uint64_t switches;

__attribute__((noinline)) static void fiber_work(int k)
{
    /* ~100 us of work, with a few nested frames */
    double t0 = now(CLOCK_MONOTONIC);
    while (now(CLOCK_MONOTONIC) - t0 < 0.0001) sink += fp_leaf(sink + (uint64_t)k);
}

static void fiber_body(int k)
{
    while (!fib_stop) {
        fiber_work(k);
        switches++;
        swapcontext(&fib_ctx[k], &main_ctx);
    }
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
    double t0 = now(CLOCK_MONOTONIC);
    while (now(CLOCK_MONOTONIC) - t0 < secs)
        for (int k = 0; k < NFIB; k++) swapcontext(&main_ctx, &fib_ctx[k]);
    fib_stop = 1;
    for (int k = 0; k < NFIB; k++) swapcontext(&main_ctx, &fib_ctx[k]);
    printf("switches %llu per_sec %.0f\n", (unsigned long long)switches, (double)switches / secs);
    report_thread();
    return 0;
}

static volatile sig_atomic_t own_hits;
static void own_handler(int sig)
{
    (void)sig;
    own_hits++;
}

static int do_sigprof(void)
{
    struct sigaction sa, cur;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_PROF, &it, NULL);
    double t0 = now(CLOCK_MONOTONIC);
    spin_until(t0 + secs);
    sigaction(SIGPROF, NULL, &cur);
    int kept = !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == own_handler;
    printf("own_handler_kept %d own_hits %d\n", kept, (int)own_hits);
    report_thread();
    return kept && own_hits > 0 ? 0 : 3;
}

static int count_tasks(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: rt_prog spin|deep|frameless|memcmp|malloc|fibers|fork|sigprof|tasks [SECS] [N]\n");
        return 2;
    }
    const char *what = argv[1];
    if (argc > 2) secs = atof(argv[2]);
    double t0 = now(CLOCK_MONOTONIC);
    if (!strcmp(what, "spin")) {
        until_cpu = argc > 4 && !strcmp(argv[4], "cpu");
        return do_spin(argc > 3 ? atoi(argv[3]) : 1);
    }
    if (!strcmp(what, "deep")) {
        range("recurse", (void *)recurse);
        sink += recurse(50, t0);
        report_thread();
        return 0;
    }
    if (!strcmp(what, "frameless")) {
        range("leaf", (void *)rt_frameless_leaf);
        range("caller", (void *)frameless_caller);
        while (now(CLOCK_MONOTONIC) - t0 < secs) sink += frameless_caller(sink);
        report_thread();
        return 0;
    }
    if (!strcmp(what, "memcmp")) {
        range("caller", (void *)memcmp_caller);
        while (now(CLOCK_MONOTONIC) - t0 < secs) sink += (uint64_t)memcmp_caller(sizeof bufa);
        report_thread();
        return 0;
    }
    if (!strcmp(what, "malloc")) {
        range("caller", (void *)malloc_caller);
        range("caller2", (void *)free_caller);
        void *keep[64] = {0};
        unsigned i = 0;
        while (now(CLOCK_MONOTONIC) - t0 < secs) {
            for (int k = 0; k < 1000; k++, i++) {
                free_caller(keep[i % 64]);
                keep[i % 64] = malloc_caller(16 + (i * 7919u) % 4000);
            }
        }
        for (int k = 0; k < 64; k++) free(keep[k]);
        report_thread();
        return 0;
    }
    if (!strcmp(what, "longcall")) {
        /* ~2 ms of compute, then one mmap that populates 32 MiB and its
         * munmap: system calls of milliseconds of kernel CPU, whose
         * scheduling points let the cpuclock pacer run and send its signal
         * from inside them. Prints the calls' CPU and the thread's. */
        const size_t len = 32u << 20;
        double in_calls = 0, c_start = now(CLOCK_THREAD_CPUTIME_ID);
        while (now(CLOCK_MONOTONIC) - t0 < secs) {
            double c = now(CLOCK_THREAD_CPUTIME_ID);
            while (now(CLOCK_THREAD_CPUTIME_ID) - c < 0.002)
                for (int k = 0; k < 1000; k++) sink = sink * 6364136223846793005ull + 1;
            c = now(CLOCK_THREAD_CPUTIME_ID);
            void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
            if (p == MAP_FAILED) {
                perror("mmap");
                return 1;
            }
            munmap(p, len);
            in_calls += now(CLOCK_THREAD_CPUTIME_ID) - c;
        }
        printf("longcall %.0f %.0f\n", in_calls * 1e9, (now(CLOCK_THREAD_CPUTIME_ID) - c_start) * 1e9);
        return 0;
    }
    if (!strcmp(what, "fibers")) return do_fibers();
    if (!strcmp(what, "fork")) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            spin_until(t0 + secs);
            exit(0); /* runs the destructors: the child's own trace gets its END */
        }
        return work_then_reap(pid, t0 + secs);
    }
    if (!strcmp(what, "sigprof")) return do_sigprof();
    if (!strcmp(what, "fork_exec") || !strcmp(what, "exec")) {
        char s[32];
        snprintf(s, sizeof s, "%g", secs);
        if (!strcmp(what, "exec")) {
            spin_until(t0 + secs);
            report_thread();
            int hops = argc > 3 ? atoi(argv[3]) : 1;
            if (hops > 1) {
                char h[16];
                snprintf(h, sizeof h, "%d", hops - 1);
                execl("/proc/self/exe", "rt_prog", "exec", s, h, (char *)NULL);
            } else {
                execl("/proc/self/exe", "rt_prog", "spin", s, (char *)NULL);
            }
            return 6;
        }
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid == 0) {
            execl("/proc/self/exe", "rt_prog", "spin", s, (char *)NULL);
            _exit(127);
        }
        return work_then_reap(pid, t0 + secs);
    }
    if (!strcmp(what, "underscore_exit")) {
        spin_until(t0 + secs / 2);
        pid_t pid = vfork();
        if (pid == 0) _exit(0); /* must not end the parent's profile */
        if (pid < 0) return 1;
        waitpid(pid, NULL, 0);
        spin_until(t0 + secs);
        report_thread();
        fflush(stdout);
        _exit(0);
    }
    if (!strcmp(what, "badfp")) return do_badfp(t0);
    if (!strcmp(what, "dlopen")) {
        void *h = dlopen("libz.so.1", RTLD_NOW);
        if (!h) {
            printf("dlopen failed: %s\n", dlerror());
            return 5;
        }
        const char *(*ver)(void) = (const char *(*)(void))dlsym(h, "zlibVersion");
        printf("zlib %s\n", ver ? ver() : "?");
        spin_until(t0 + secs);
        report_thread();
        return 0;
    }
    if (!strcmp(what, "crash")) {
        spin_until(t0 + secs);
        report_thread();
        if (argc > 3 && !strcmp(argv[3], "abort")) abort();
        volatile int *volatile bad = (volatile int *)(uintptr_t)sink;
        if ((uintptr_t)bad >= 4096) bad = NULL; /* (sink is never that small) */
        *bad = 1; /* a real fault: kernel-generated SIGSEGV */
        return 0;
    }
    if (!strcmp(what, "sleep")) {
        int eintr = 0;
        while (now(CLOCK_MONOTONIC) - t0 < secs) {
            struct timespec ts = {0, 3000000};
            if (nanosleep(&ts, NULL) != 0 && errno == EINTR) eintr++;
            if (poll(NULL, 0, 3) < 0 && errno == EINTR) eintr++;
            char c;
            int fds[2];
            if (pipe(fds) == 0) {
                struct pollfd pf = {fds[0], POLLIN, 0};
                if (poll(&pf, 1, 2) < 0 && errno == EINTR) eintr++;
                close(fds[0]);
                close(fds[1]);
            }
            (void)c;
            double t1 = now(CLOCK_MONOTONIC);
            spin_until(t1 + 0.002);
        }
        printf("eintr %d\n", eintr);
        report_thread();
        return 0;
    }
    if (!strcmp(what, "tasks")) {
        printf("tasks %d\n", count_tasks());
        return 0;
    }
    fprintf(stderr, "rt_prog: unknown behaviour %s\n", what);
    return 2;
}
