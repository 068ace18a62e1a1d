/* write/read-heavy vs compute: sp_Writer_emit appends 4 KiB blocks to a temp
 * file, sp_Reader_load reads them back, sp_Stats_compute only computes.
 * Writer and reader are nothing but system calls, so their time is also the
 * truth for kernel-leaf samples ([syscall]).
 *
 * The calls are made with the syscall instruction itself, not glibc's
 * wrappers: in a process with threads those take the cancellable path,
 * __pthread_enable_asynccancel and __pthread_disable_asynccancel around
 * the call, user-mode code that the method's clock counted as the call's
 * (~1.5 % of all CPU when sprof's writer thread still switched glibc to
 * that mode: the profile's [syscall] read 1.3-2.0 pp under that "truth" in
 * 4 runs of 5, with the methods' own shares within 0.9 pp). */
#include "acc_truth.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

/* mov $NR,%eax right before the syscall instruction, as glibc's wrappers
 * do: the profiler decodes the call's number from it */
#define RAW_SYSCALL(nr, a, b, c, d)                                                              \
    ({                                                                                           \
        long ret_;                                                                               \
        register long a_ __asm__("rdi") = (long)(a);                                             \
        register long b_ __asm__("rsi") = (long)(b);                                             \
        register long c_ __asm__("rdx") = (long)(c);                                             \
        register long d_ __asm__("r10") = (long)(d);                                             \
        __asm__ volatile("mov %[n], %%eax\n\tsyscall"                                            \
                         : "=a"(ret_)                                                            \
                         : [n] "i"(nr), "r"(a_), "r"(b_), "r"(c_), "r"(d_)                       \
                         : "rcx", "r11", "memory");                                              \
        ret_;                                                                                    \
    })

enum { BLOCK = 4096, BLOCKS = 32 };
static char block[BLOCK];
static int fd = -1;
static int64_t writer_ns, reader_ns, stats_ns;
static int64_t rounds;

static ACC_METHOD void sp_Writer_emit(void)
{
    int64_t t0 = acc_cpu_ns();
    if (RAW_SYSCALL(SYS_ftruncate, fd, 0, 0, 0) != 0 || RAW_SYSCALL(SYS_lseek, fd, 0, SEEK_SET, 0) != 0)
        abort();
    for (int i = 0; i < BLOCKS; i++)
        if (RAW_SYSCALL(SYS_write, fd, block, BLOCK, 0) != BLOCK)
            abort();
    writer_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Reader_load(void)
{
    int64_t t0 = acc_cpu_ns();
    char in[BLOCK];
    for (int i = 0; i < BLOCKS; i++)
        if (RAW_SYSCALL(SYS_pread64, fd, in, BLOCK, (long)i * BLOCK) != BLOCK)
            abort();
    acc_sink += (uint64_t)in[7];
    reader_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Stats_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x1001);
    stats_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    /* one round: write + read back 128 KiB, then a compute batch of about the
     * same CPU; rounds until the budget is spent */
    uint64_t units = acc_units(150), seed = 0x2545F4914F6CDD1Dull;
    while (acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9)) {
        sp_Writer_emit();
        /* 60-140 % of the batch, drawn: with rounds of one length a fixed
         * sampling period can stay in step with them for a quick run's
         * ~1,200 samples (perf_event read 6.5-9.6 pp off in 2 of 16 quick
         * runs, either way), which no real program's loop does for long */
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        sp_Stats_compute(units * (60 + (seed >> 33) % 81) / 100);
        sp_Reader_load();
        rounds++;
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    char path[] = "/tmp/sprof-acc-io-XXXXXX";
    fd = mkstemp(path);
    if (fd < 0)
        return 1;
    unlink(path);
    for (int i = 0; i < BLOCK; i++)
        block[i] = (char)i;
    /* the clock reads are system calls too (a thread's CPU clock is not
     * read in the vDSO): those outside the writer and the reader, 2 per
     * compute batch and rounds + 3 in sp_Main_run, are [syscall] time at
     * the cost of one read (perf_event, kernel sampled: 0.47 % of all CPU) */
    int64_t c0 = acc_cpu_ns();
    for (int i = 0; i < 2000; i++)
        (void)acc_cpu_ns();
    int64_t read_ns = (acc_cpu_ns() - c0) / 2001;
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_kernel_only("sp_Writer_emit");
    acc_kernel_only("sp_Reader_load");
    acc_truth("sp_Writer_emit", writer_ns);
    acc_truth("sp_Reader_load", reader_ns);
    acc_truth("sp_Stats_compute", stats_ns);
    acc_truth("[syscall]", writer_ns + reader_ns + (3 * rounds + 3) * read_ns);
    acc_truth("total", total);
    return 0;
}
