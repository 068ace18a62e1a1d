/* malloc/free of large blocks vs compute: sp_Buffer_churn allocates blocks of
 * 96 KiB to 2 MiB (around glibc's mmap threshold, which moves: brk growth and
 * trimming, mmap/munmap, madvise), writes every page, frees them.
 * sp_Codec_compute only computes. User and kernel time mixed: no leaf truth. */
#include "acc_truth.h"

#include <stdlib.h>
#include <string.h>

static int64_t buffer_ns, codec_ns;

static ACC_METHOD void sp_Buffer_churn(unsigned round)
{
    int64_t t0 = acc_cpu_ns();
    char *blocks[4];
    for (int i = 0; i < 4; i++) {
        size_t size = (size_t)(96 + ((round * 7 + (unsigned)i * 13) % 32) * 64) << 10;
        blocks[i] = malloc(size);
        if (!blocks[i])
            abort();
        for (size_t off = 0; off < size; off += 4096)
            blocks[i][off] = (char)off;
    }
    for (int i = 3; i >= 0; i--) {
        acc_sink += (uint64_t)blocks[i][4096];
        free(blocks[i]);
    }
    buffer_ns += acc_span_ns(t0);
}

static ACC_METHOD void sp_Codec_compute(uint64_t units)
{
    int64_t t0 = acc_cpu_ns();
    acc_spin(units, 0x3003);
    codec_ns += acc_span_ns(t0);
}

static ACC_METHOD int64_t sp_Main_run(void)
{
    int64_t t0 = acc_cpu_ns();
    uint64_t units = acc_units(1500);
    for (unsigned round = 0; acc_cpu_ns() - t0 < (int64_t)(acc_budget_s() * 1e9); round++) {
        sp_Buffer_churn(round);
        sp_Codec_compute(units);
    }
    return acc_span_ns(t0);
}

int main(int argc, char **argv)
{
    acc_setup(argc, argv);
    int64_t total = sp_Main_run();
    acc_scope("sp_Main_run");
    acc_truth("sp_Buffer_churn", buffer_ns);
    acc_truth("sp_Codec_compute", codec_ns);
    acc_truth("total", total);
    return 0;
}
