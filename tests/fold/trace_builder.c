/* Build sprof trace files record by record (see trace_builder.h). */
#include "trace_builder.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t zeros[8];

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void put(trace_builder *b, const void *p, size_t n)
{
    if (n)
        fwrite(p, 1, n, b->f);
}

static void put_string(trace_builder *b, const char *s)
{
    size_t n = strlen(s) + 1;
    put(b, s, n);
    put(b, zeros, pad8(n) - n);
}

int tb_open(trace_builder *b, const char *path)
{
    b->f = fopen(path, "wb");
    if (!b->f)
        return -1;
    struct sprof_trace_file_header h;
    memcpy(h.magic, SPROF_TRACE_MAGIC, 8);
    h.version = SPROF_TRACE_VERSION;
    h.header_size = sizeof h;
    put(b, &h, sizeof h);
    return 0;
}

void tb_info(trace_builder *b, uint32_t mode, uint32_t hz, uint64_t start_ns, const char *exe)
{
    struct sprof_rec_info r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_INFO;
    r.h.size = (uint32_t)(sizeof r + pad8(strlen(exe) + 1));
    r.pid = 4242;
    r.mode = mode;
    r.mechanism = SPROF_MECH_CPUCLOCK_PACED;
    r.hz = hz;
    r.max_depth = 256;
    r.arch = 62;
    r.start_monotonic_ns = start_ns;
    r.start_realtime_ns = start_ns;
    put(b, &r, sizeof r);
    put_string(b, exe);
}

void tb_mapping(trace_builder *b, uint64_t start, uint64_t end, uint64_t off, const uint8_t *id,
                uint32_t idlen, const char *path)
{
    struct sprof_rec_mapping r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_MAPPING;
    r.h.size = (uint32_t)(sizeof r + pad8(strlen(path) + 1));
    r.start = start;
    r.end = end;
    r.file_offset = off;
    r.prot = 5; /* PROT_READ | PROT_EXEC */
    r.build_id_len = idlen;
    if (idlen)
        memcpy(r.build_id, id, idlen);
    put(b, &r, sizeof r);
    put_string(b, path);
}

void tb_thread(trace_builder *b, uint32_t tid, uint32_t event, uint64_t time_ns, const char *name)
{
    struct sprof_rec_thread r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_THREAD;
    r.h.size = (uint32_t)(sizeof r + pad8(strlen(name) + 1));
    r.tid = tid;
    r.event = event;
    r.time_ns = time_ns;
    put(b, &r, sizeof r);
    put_string(b, name);
}

void tb_sample(trace_builder *b, uint32_t tid, uint32_t flags, uint64_t time_ns, uint64_t weight_ns,
               uint64_t pc, uint64_t sp, uint64_t fp, uint32_t fp0_off, const uint64_t *ret,
               const uint32_t *fpoff, uint16_t nframes, const uint32_t *cand_off,
               const uint64_t *cand_val, uint16_t ncand)
{
    struct sprof_rec_sample r;
    memset(&r, 0, sizeof r);
    size_t size = sizeof r + 8 * (size_t)nframes + pad8(4 * (size_t)nframes) +
                  pad8(4 * (size_t)ncand) + 8 * (size_t)ncand;
    r.h.type = SPROF_REC_SAMPLE;
    r.h.size = (uint32_t)size;
    r.tid = tid;
    r.flags = flags;
    r.nframes = nframes;
    r.ncand = ncand;
    r.fp0_off = fp0_off;
    r.time_ns = time_ns;
    r.weight_ns = weight_ns;
    r.pc = pc;
    r.sp = sp;
    r.fp = fp;
    put(b, &r, sizeof r);
    put(b, ret, 8 * (size_t)nframes);
    put(b, fpoff, 4 * (size_t)nframes);
    put(b, zeros, pad8(4 * (size_t)nframes) - 4 * (size_t)nframes);
    put(b, cand_off, 4 * (size_t)ncand);
    put(b, zeros, pad8(4 * (size_t)ncand) - 4 * (size_t)ncand);
    put(b, cand_val, 8 * (size_t)ncand);
}

void tb_stats(trace_builder *b, uint64_t written, uint64_t dropped, uint64_t truncated)
{
    struct sprof_rec_stats r;
    memset(&r, 0, sizeof r);
    r.h.type = SPROF_REC_STATS;
    r.h.size = sizeof r;
    r.samples_written = written;
    r.samples_dropped = dropped;
    r.samples_truncated = truncated;
    put(b, &r, sizeof r);
}

void tb_stats_record(trace_builder *b, const struct sprof_rec_stats *st, uint32_t size)
{
    struct sprof_rec_stats r = *st;
    r.h.type = SPROF_REC_STATS;
    r.h.size = size;
    put(b, &r, size < sizeof r ? size : sizeof r);
    for (size_t n = sizeof r; n < size; n += 8)
        put(b, zeros, 8);
}

uint32_t tb_syscall_flags(int nr)
{
    return SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_SYSCALL |
           ((uint32_t)(nr + 1) & SPROF_SAMPLE_SYSCALL_MASK) << SPROF_SAMPLE_SYSCALL_SHIFT;
}

int tb_close(trace_builder *b, int truncated)
{
    if (!truncated) {
        struct sprof_rec_hdr h = { SPROF_REC_END, sizeof h };
        put(b, &h, sizeof h);
    }
    int bad = ferror(b->f);
    return (fclose(b->f) != 0 || bad) ? -1 : 0;
}
