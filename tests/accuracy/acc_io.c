/* write/read-heavy vs compute: sp_Writer_emit appends 4 KiB blocks to a temp
 * file, sp_Reader_load reads them back, sp_Stats_compute only computes.
 * Writer and reader are almost nothing but system calls, so their time is
 * also the truth for kernel-leaf samples ([syscall]). */
#include "acc_truth.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { BLOCK = 4096, BLOCKS = 32 };
static char block[BLOCK];
static int fd = -1;
static int64_t writer_ns, reader_ns, stats_ns;

static ACC_METHOD void sp_Writer_emit(void)
{
    int64_t t0 = acc_cpu_ns();
    if (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)
        abort();
    for (int i = 0; i < BLOCKS; i++)
        if (write(fd, block, BLOCK) != BLOCK)
            abort();
    writer_ns += acc_cpu_ns() - t0;
}

static ACC_METHOD void sp_Reader_load(void)
{
    int64_t t0 = acc_cpu_ns();
    char in[BLOCK];
    for (int i = 0; i < BLOCKS; i++)
        if (pread(fd, in, BLOCK, (off_t)i * BLOCK) != BLOCK)
            abort();
    acc_sink += (uint64_t)in[7];
    reader_ns += acc_cpu_ns() - t0;
}

static ACC_METHOD void sp_Stats_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x1001);
    stats_ns += acc_cpu_ns() - t0;
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
    }
    return acc_cpu_ns() - t0;
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
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_truth("sp_Writer_emit", writer_ns);
    acc_truth("sp_Reader_load", reader_ns);
    acc_truth("sp_Stats_compute", stats_ns);
    acc_truth("[syscall]", writer_ns + reader_ns);
    acc_truth("total", total);
    return 0;
}
