/* Trace reader: mmap the file, walk records with every size and count
 * checked against the record before use. See sprof/trace_reader.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "sprof/trace_reader.h"

/* A STACK record with its parent's part added: arrays as in a SAMPLE. */
struct decoded_stack {
    uint64_t sp, pc, fp;
    uint32_t fp0_off, nframes, ncand;
    const uint8_t *arrays;
};

/* Decoded stacks may take at most this plus DECODED_PER_BYTE per byte of
 * the file (a parent chain can make a 48-byte record stand for 64k
 * frames): real traces expand 5-30x. */
#define DECODED_BASE ((uint64_t)256 << 20)
#define DECODED_PER_BYTE 256

struct sprof_trace {
    const uint8_t *data;
    size_t size;
    void *map; /* non-NULL if we own an mmap */
    size_t map_len;
    size_t released; /* bytes of the map given back with sprof_trace_release */
    char *name;
    size_t off;       /* next record */
    size_t first;     /* offset of the first record */
    int done, truncated;
    uint32_t end_reason, end_signal; /* format 1.3 END payload (0: not recorded) */
    /* format 2.0: every STACK record decoded, in file order (a pass after
     * a rewind finds them again, and views stay valid until close); the
     * ones since the start or the last STACK_RESET by index; the SAMPLES
     * batch being read */
    struct decoded_stack *decoded;
    size_t ndecoded, cap_decoded, seen;
    sprof_arena decoded_arena;
    uint64_t decoded_bytes;
    uint32_t *stacks; /* index -> decoded */
    size_t nstacks, cap_stacks;
    int compact;                /* a STACK record was seen */
    const uint8_t *batch_next, *batch_end;
    uint32_t batch_left, batch_done;
    uint64_t batch_tid, batch_time, batch_weight;
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

sprof_trace *sprof_trace_open_mem(const void *data, size_t size, const char *name, char *err, size_t errlen)
{
    if (!name) name = "<memory>";
    struct sprof_trace_file_header fh;
    if (size == 0) {
        /* the runtime writes the header at start: its first write failed */
        set_err(err, errlen, "%s: empty (0 bytes): the runtime could not write a byte to it (the file system "
                "was full or the file size limit hit when the run began; the run's exit line said why)", name);
        return NULL;
    }
    if (size < sizeof fh) {
        size_t m = size < 8 ? size : 8;
        if (size > 0 && memcmp(data, SPROF_TRACE_MAGIC, m) == 0)
            set_err(err, errlen,
                    "%s: the trace is cut short at byte %zu, inside its %zu-byte file header: the program "
                    "was stopped as sprof started (no samples to read); profile it again",
                    name, size, sizeof fh);
        else
            set_err(err, errlen, "%s: too short for a trace header (%zu bytes)", name, size);
        return NULL;
    }
    memcpy(&fh, data, sizeof fh);
    if (memcmp(fh.magic, SPROF_TRACE_MAGIC, 8) != 0) {
        set_err(err, errlen, "%s: not an sprof trace (bad magic)", name);
        return NULL;
    }
    if (fh.version < SPROF_TRACE_VERSION_MIN || fh.version > SPROF_TRACE_VERSION) {
        set_err(err, errlen, "%s: trace format version %u, this reader supports %u to %u", name, fh.version,
                SPROF_TRACE_VERSION_MIN, SPROF_TRACE_VERSION);
        return NULL;
    }
    if (fh.header_size < sizeof fh || fh.header_size > size || (fh.header_size & 7)) {
        set_err(err, errlen, "%s: bad header size %u", name, fh.header_size);
        return NULL;
    }
    sprof_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->name = strdup(name))) {
        free(t);
        set_err(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    t->data = data;
    t->size = size;
    t->first = t->off = fh.header_size;
    return t;
}

sprof_trace *sprof_trace_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        set_err(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    void *map = NULL;
    if (size > 0) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            set_err(err, errlen, "%s: mmap: %s", path, strerror(errno));
            close(fd);
            return NULL;
        }
    }
    close(fd);
    static const uint8_t empty[1];
    sprof_trace *t = sprof_trace_open_mem(map ? map : empty, size, path, err, errlen);
    if (!t) {
        if (map) munmap(map, size);
        return NULL;
    }
    t->map = map;
    t->map_len = size;
    return t;
}

void sprof_trace_close(sprof_trace *t)
{
    if (!t) return;
    if (t->map) munmap(t->map, t->map_len);
    free(t->stacks);
    free(t->decoded);
    sprof_arena_free(&t->decoded_arena);
    free(t->name);
    free(t);
}

const char *sprof_trace_name(const sprof_trace *t) { return t->name; }

void sprof_trace_rewind(sprof_trace *t)
{
    t->off = t->first;
    t->done = t->truncated = 0;
    t->end_reason = t->end_signal = 0;
    t->nstacks = 0;
    t->seen = 0;
    t->batch_left = 0;
}

/* at most one madvise per this many bytes passed: each also drops the
 * pages of the first samples of hot stacks, which the next compare reads
 * back, so not too often */
#define RELEASE_STEP (32u << 20)

void sprof_trace_release(sprof_trace *t, const void *upto)
{
    uintptr_t p = (uintptr_t)upto, base = (uintptr_t)t->map;
    /* A format 2 sample's arrays are in its STACK record, anywhere before
     * it: its pointers do not move forward with a pass (the caller's
     * position does: sprof_trace_release_read). */
    if (t->compact && upto != t->data + t->off)
        return;
    if (!t->map || p < base || p - base > t->map_len)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t end = (size_t)(p - base) / page * page;
    if (end < t->released)
        t->released = 0; /* a new pass from the start */
    if (end < t->released + RELEASE_STEP)
        return;
    /* a read-only private file mapping never written: dropping its pages
     * loses nothing, a later touch refaults them from the file */
    if (madvise((uint8_t *)t->map + t->released, end - t->released, MADV_DONTNEED) == 0)
        t->released = end;
}

void sprof_trace_release_read(sprof_trace *t) { sprof_trace_release(t, t->data + t->off); }

int sprof_trace_truncated(const sprof_trace *t) { return t->truncated; }

uint32_t sprof_trace_end_reason(const sprof_trace *t, uint32_t *signal)
{
    if (signal) *signal = t->end_signal;
    return t->end_reason;
}
uint64_t sprof_trace_offset(const sprof_trace *t) { return t->off; }

/* NUL-terminated string inside [p, end); NULL if there is no NUL */
static const char *tail_string(const uint8_t *p, const uint8_t *end)
{
    if (p >= end || !memchr(p, 0, (size_t)(end - p))) return NULL;
    return (const char *)p;
}

#define BAD(...)                                                                                   \
    do {                                                                                           \
        char msg_[160];                                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                                  \
        set_err(err, errlen, "%s: record at offset %zu: %s", t->name, t->off, msg_);               \
        t->done = 1;                                                                               \
        return -1;                                                                                 \
    } while (0)

/* Bytes a SAMPLE's or a STACK's arrays take. */
static uint64_t arrays_bytes(uint64_t nframes, uint64_t ncand)
{
    return nframes * 8 + ((nframes * 4 + 7) & ~7ull) + ((ncand * 4 + 7) & ~7ull) + ncand * 8;
}

/* The arrays at q (laid out as in a SAMPLE record) into the view. */
static void view_arrays(sprof_sample_view *v, const uint8_t *q, uint32_t nframes, uint32_t ncand)
{
    v->nframes = nframes;
    v->ret = (const uint64_t *)(const void *)q;
    q += (size_t)nframes * 8;
    v->fpoff = (const uint32_t *)(const void *)q;
    q += ((size_t)nframes * 4 + 7) & ~(size_t)7;
    v->ncand = ncand;
    v->cand_off = (const uint32_t *)(const void *)q;
    q += ((size_t)ncand * 4 + 7) & ~(size_t)7;
    v->cand_val = (const uint64_t *)(const void *)q;
}

/* Reads varint i of a STACK's body into *v; -1 past the record. */
#define NEXT(v)                                                                                    \
    do {                                                                                           \
        if (sprof_varint_get(&q, end, &(v)) != 0) BAD("STACK body runs past the record");          \
    } while (0)

/* The STACK record at p (size bytes) decoded and appended to t->decoded:
 * its new frames and candidates from the varints, then its parent's
 * outermost ones at the same stack addresses. 0, or -1 (err). */
static int decode_stack(sprof_trace *t, const uint8_t *p, uint32_t size, char *err, size_t errlen)
{
    const uint8_t *q = p + sizeof(struct sprof_rec_hdr), *end = p + size;
    uint64_t hd[SPROF_STACK_FIELDS];
    for (unsigned i = 0; i < SPROF_STACK_FIELDS; i++)
        NEXT(hd[i]);
    struct {
        uint64_t parent, keep_frames, keep_cands, nframes, ncand, sp, pc, fp;
        uint32_t fp0_off;
    } r = {hd[0], hd[1], hd[2], hd[3], hd[4], 0, 0, 0, (uint32_t)(hd[5] - 1)};
    if (r.nframes > UINT16_MAX || r.ncand > UINT16_MAX || r.keep_frames > UINT16_MAX || r.keep_cands > UINT16_MAX ||
        hd[5] > UINT32_MAX)
        BAD("STACK counts (%llu + %llu frames, %llu + %llu candidates, fp0_off %llu) over their 16 or 32 bits",
            (unsigned long long)r.nframes, (unsigned long long)r.keep_frames, (unsigned long long)r.ncand,
            (unsigned long long)r.keep_cands, (unsigned long long)hd[5]);
    const struct decoded_stack *par = NULL;
    if (r.parent) {
        if (r.parent > t->nstacks)
            BAD("STACK refers to parent stack %llu, but %zu STACK records came before it",
                (unsigned long long)r.parent - 1, t->nstacks);
        par = &t->decoded[t->stacks[r.parent - 1]];
        if (r.keep_frames > par->nframes || r.keep_cands > par->ncand)
            BAD("STACK keeps %u frames and %u candidates of a parent that has %u and %u", (unsigned)r.keep_frames,
                (unsigned)r.keep_cands, par->nframes, par->ncand);
    } else if (r.keep_frames || r.keep_cands) {
        BAD("STACK keeps %u frames and %u candidates but has no parent", (unsigned)r.keep_frames,
            (unsigned)r.keep_cands);
    }
    r.sp = sprof_unzigzag(hd[6], par ? par->sp : 0);
    r.pc = sprof_unzigzag(hd[7], par ? par->pc : 0);
    r.fp = sprof_unzigzag(hd[8], r.sp);
    uint32_t nf = (uint32_t)(r.nframes + r.keep_frames), nc = (uint32_t)(r.ncand + r.keep_cands);
    if (nf > UINT16_MAX || nc > UINT16_MAX) BAD("STACK of %u frames and %u candidates (at most 65535 each)", nf, nc);
    uint64_t bytes = arrays_bytes(nf, nc);
    if (t->decoded_bytes + bytes > DECODED_BASE + (uint64_t)DECODED_PER_BYTE * t->size)
        BAD("the stacks expand to more than %llu bytes: not a trace the runtime writes",
            (unsigned long long)(DECODED_BASE + (uint64_t)DECODED_PER_BYTE * t->size));
    uint8_t *arr = sprof_arena_alloc(&t->decoded_arena, bytes ? bytes : 8);
    if (!arr) BAD("out of memory for a stack of %u frames and %u candidates", nf, nc);
    memset(arr, 0, bytes);
    uint64_t *ret = (uint64_t *)(void *)arr;
    uint32_t *fpoff = (uint32_t *)(void *)(arr + 8 * (size_t)nf);
    uint32_t *coff = (uint32_t *)(void *)(arr + 8 * (size_t)nf + ((4 * (size_t)nf + 7) & ~(size_t)7));
    uint64_t *cval = (uint64_t *)(void *)((uint8_t *)coff + ((4 * (size_t)nc + 7) & ~(size_t)7));
    uint64_t prev_ret = r.pc, prev_off = 0, x;
    for (uint32_t i = 0; i < (uint32_t)r.nframes; i++) {
        NEXT(x);
        ret[i] = prev_ret = sprof_unzigzag(x, prev_ret);
        NEXT(x);
        prev_off = sprof_unzigzag(x, prev_off);
        if (prev_off > UINT32_MAX) BAD("STACK frame %u: offset 0x%llx is over 32 bits", i, (unsigned long long)prev_off);
        fpoff[i] = (uint32_t)prev_off;
    }
    uint64_t prev_code = prev_ret;
    prev_off = 0;
    for (uint32_t i = 0; i < (uint32_t)r.ncand; i++) {
        NEXT(x);
        prev_off = sprof_unzigzag(x, prev_off);
        if (prev_off > UINT32_MAX)
            BAD("STACK candidate %u: offset 0x%llx is over 32 bits", i, (unsigned long long)prev_off);
        coff[i] = (uint32_t)prev_off;
        NEXT(x);
        if (x & 1) {
            cval[i] = sprof_unzigzag(x >> 1, r.sp + prev_off);
        } else {
            cval[i] = prev_code = sprof_unzigzag(x >> 1, prev_code);
        }
    }
    size_t rest = (size_t)(end - q);
    if (rest >= 8) BAD("STACK record has %zu bytes after its body", rest);
    for (size_t i = 0; i < rest; i++)
        if (q[i]) BAD("STACK record's padding is not zero");
    if (par) { /* the parent's outer part: the same stack words, offsets from this sp */
        sprof_sample_view pv;
        view_arrays(&pv, par->arrays, par->nframes, par->ncand);
        const uint64_t *pret = pv.ret, *pcv = pv.cand_val;
        const uint32_t *pfp = pv.fpoff, *pco = pv.cand_off;
        for (uint32_t i = 0; i < (uint32_t)r.keep_frames; i++) {
            uint32_t from = par->nframes - (uint32_t)r.keep_frames + i, y = pfp[from];
            uint64_t o = y == SPROF_FPOFF_UNKNOWN ? y : par->sp + y - r.sp;
            if (o > UINT32_MAX) BAD("STACK keeps a frame at 0x%llx, below its sp", (unsigned long long)(par->sp + y));
            ret[r.nframes + i] = pret[from];
            fpoff[r.nframes + i] = (uint32_t)o;
        }
        for (uint32_t i = 0; i < (uint32_t)r.keep_cands; i++) {
            uint32_t from = par->ncand - (uint32_t)r.keep_cands + i, y = pco[from];
            uint64_t o = SPROF_CAND_IS_MARKER(y) ? y : par->sp + y - r.sp;
            if (o > UINT32_MAX)
                BAD("STACK keeps a candidate at 0x%llx, below its sp", (unsigned long long)(par->sp + y));
            coff[r.ncand + i] = (uint32_t)o;
            cval[r.ncand + i] = pcv[from];
        }
    }
    if (t->ndecoded == t->cap_decoded) {
        size_t cap = t->cap_decoded ? t->cap_decoded * 2 : 1024;
        struct decoded_stack *v = realloc(t->decoded, cap * sizeof *v);
        if (!v) BAD("out of memory for the stack table (%zu stacks)", t->ndecoded);
        t->decoded = v;
        t->cap_decoded = cap;
    }
    struct decoded_stack *d = &t->decoded[t->ndecoded++];
    d->sp = r.sp;
    d->pc = r.pc;
    d->fp = r.fp;
    d->fp0_off = r.fp0_off;
    d->nframes = nf;
    d->ncand = nc;
    d->arrays = arr;
    t->decoded_bytes += bytes;
    return 0;
}
#undef NEXT

/* The next sample of the SAMPLES batch at t->off: 1, or -1 (err set). */
static int batch_sample(sprof_trace *t, sprof_trace_record *rec, char *err, size_t errlen)
{
    uint64_t f[7];
    uint32_t n = t->batch_done;
    for (int i = 0; i < 7; i++)
        if (sprof_varint_get(&t->batch_next, t->batch_end, &f[i]) != 0)
            BAD("SAMPLES entry %u of %u runs past the record or holds a varint over 64 bits", n,
                n + t->batch_left);
    uint64_t tid = sprof_unzigzag(f[0], t->batch_tid);
    if (tid > UINT32_MAX) BAD("SAMPLES entry %u: thread id %llu is over 32 bits", n, (unsigned long long)tid);
    if (f[1] > UINT32_MAX) BAD("SAMPLES entry %u: flags 0x%llx are over 32 bits", n, (unsigned long long)f[1]);
    if (f[2] >= t->nstacks)
        BAD("SAMPLES entry %u refers to stack %llu, but %zu STACK records came before it", n,
            (unsigned long long)f[2], t->nstacks);
    const struct decoded_stack *k = &t->decoded[t->stacks[f[2]]];
    memset(rec, 0, sizeof *rec);
    rec->type = SPROF_REC_SAMPLE;
    sprof_sample_view *v = &rec->u.sample;
    v->tid = (uint32_t)tid;
    v->flags = (uint32_t)f[1];
    v->time_ns = sprof_unzigzag(f[3], t->batch_time);
    v->weight_ns = sprof_unzigzag(f[4], t->batch_weight);
    v->pc = sprof_unzigzag(f[5], k->pc);
    v->fp = sprof_unzigzag(f[6], k->fp);
    v->sp = k->sp;
    v->fp0_off = k->fp0_off;
    view_arrays(v, k->arrays, k->nframes, k->ncand);
    t->batch_tid = tid;
    t->batch_time = v->time_ns;
    t->batch_done++;
    if (--t->batch_left == 0) {
        /* only the padding may follow the last entry */
        size_t rest = (size_t)(t->batch_end - t->batch_next);
        if (rest >= 8) BAD("SAMPLES record has %zu bytes after its %u entries", rest, t->batch_done);
        for (size_t i = 0; i < rest; i++)
            if (t->batch_next[i]) BAD("SAMPLES record's padding is not zero");
        t->off = (size_t)(t->batch_end - t->data);
    }
    return 1;
}

int sprof_trace_next(sprof_trace *t, sprof_trace_record *rec, char *err, size_t errlen)
{
    for (;;) {
        if (t->done) return 0;
        if (t->batch_left) return batch_sample(t, rec, err, errlen);
        size_t left = t->size - t->off;
        if (left == 0) { /* ended without END: the writer was killed */
            t->truncated = 1;
            t->done = 1;
            return 0;
        }
        struct sprof_rec_hdr h;
        if (left < sizeof h) {
            t->truncated = 1;
            t->done = 1;
            return 0;
        }
        memcpy(&h, t->data + t->off, sizeof h);
        if (h.size < sizeof h || (h.size & 7)) BAD("size %u is not a multiple of 8 of at least 8", h.size);
        if (h.size > SPROF_TRACE_MAX_RECORD) BAD("size %u exceeds the %u-byte limit", h.size, SPROF_TRACE_MAX_RECORD);
        if (h.size > left) { /* cut in the middle of a record: stop cleanly */
            t->truncated = 1;
            t->done = 1;
            return 0;
        }
        const uint8_t *p = t->data + t->off, *end = p + h.size;
        memset(rec, 0, sizeof *rec);
        rec->type = h.type;
        switch (h.type) {
        case SPROF_REC_INFO: {
            struct sprof_rec_info r;
            if (h.size < sizeof r) BAD("INFO record too short (%u bytes)", h.size);
            memcpy(&r, p, sizeof r);
            const char *exe = tail_string(p + sizeof r, end);
            if (!exe) BAD("INFO executable path is not NUL-terminated");
            sprof_info_view *v = &rec->u.info;
            v->pid = r.pid;
            v->mode = r.mode;
            v->mechanism = r.mechanism;
            v->hz = r.hz;
            v->max_depth = r.max_depth;
            v->arch = r.arch;
            v->start_monotonic_ns = r.start_monotonic_ns;
            v->start_realtime_ns = r.start_realtime_ns;
            v->exe_path = exe;
            break;
        }
        case SPROF_REC_MAPPING: {
            struct sprof_rec_mapping r;
            if (h.size < sizeof r) BAD("MAPPING record too short (%u bytes)", h.size);
            memcpy(&r, p, sizeof r);
            if (r.build_id_len > sizeof r.build_id) BAD("MAPPING build-id length %u > 32", r.build_id_len);
            if (r.end < r.start) BAD("MAPPING end 0x%llx before start 0x%llx", (unsigned long long)r.end,
                                     (unsigned long long)r.start);
            const char *path = tail_string(p + sizeof r, end);
            if (!path) BAD("MAPPING path is not NUL-terminated");
            sprof_mapping_view *v = &rec->u.mapping;
            v->start = r.start;
            v->end = r.end;
            v->file_offset = r.file_offset;
            v->prot = r.prot;
            v->build_id_len = r.build_id_len;
            v->build_id = p + offsetof(struct sprof_rec_mapping, build_id);
            v->path = path;
            break;
        }
        case SPROF_REC_THREAD: {
            struct sprof_rec_thread r;
            if (h.size < sizeof r) BAD("THREAD record too short (%u bytes)", h.size);
            memcpy(&r, p, sizeof r);
            const char *name = tail_string(p + sizeof r, end);
            if (!name) BAD("THREAD name is not NUL-terminated");
            if (r.event > SPROF_THREAD_EXIT) BAD("THREAD event %u unknown", r.event);
            rec->u.thread.tid = r.tid;
            rec->u.thread.event = r.event;
            rec->u.thread.time_ns = r.time_ns;
            rec->u.thread.name = name;
            break;
        }
        case SPROF_REC_SAMPLE: {
            struct sprof_rec_sample r;
            if (h.size < sizeof r) BAD("SAMPLE record too short (%u bytes)", h.size);
            memcpy(&r, p, sizeof r);
            uint64_t need = (uint64_t)sizeof r + arrays_bytes(r.nframes, r.ncand);
            if (need != h.size)
                BAD("SAMPLE with %u frames and %u candidates needs %llu bytes, record has %u", r.nframes, r.ncand,
                    (unsigned long long)need, h.size);
            /* arrays are 8-aligned within the record; the record is 8-aligned in the file */
            sprof_sample_view *v = &rec->u.sample;
            v->tid = r.tid;
            v->flags = r.flags;
            v->time_ns = r.time_ns;
            v->weight_ns = r.weight_ns;
            v->pc = r.pc;
            v->sp = r.sp;
            v->fp = r.fp;
            v->fp0_off = r.fp0_off;
            view_arrays(v, p + sizeof r, r.nframes, r.ncand);
            break;
        }
        case SPROF_REC_STACK: { /* format 2.0: kept for the SAMPLES after it */
            /* a pass after a rewind meets the same records in the same order */
            if (t->seen == t->ndecoded && decode_stack(t, p, h.size, err, errlen) != 0) return -1;
            if (t->nstacks == t->cap_stacks) {
                size_t cap = t->cap_stacks ? t->cap_stacks * 2 : 1024;
                uint32_t *v = realloc(t->stacks, cap * sizeof *v);
                if (!v) BAD("out of memory for the stack table (%zu stacks)", t->nstacks);
                t->stacks = v;
                t->cap_stacks = cap;
            }
            t->stacks[t->nstacks++] = (uint32_t)t->seen++;
            t->compact = 1;
            t->off += h.size;
            continue;
        }
        case SPROF_REC_STACK_RESET:
            t->nstacks = 0;
            t->off += h.size;
            continue;
        case SPROF_REC_SAMPLES: { /* format 2.0: its samples one by one (batch_sample) */
            struct sprof_rec_samples r;
            if (h.size < sizeof r) BAD("SAMPLES record too short (%u bytes)", h.size);
            memcpy(&r, p, sizeof r);
            if (r.count == 0) {
                t->off += h.size;
                continue;
            }
            t->batch_next = p + sizeof r;
            t->batch_end = end;
            t->batch_left = r.count;
            t->batch_done = 0;
            t->batch_tid = 0;
            t->batch_time = r.time_ns;
            t->batch_weight = r.weight_ns;
            return batch_sample(t, rec, err, errlen);
        }
        case SPROF_REC_STATS: {
            /* Format 1.1 appended fields: an older 64-byte STATS leaves them 0
             * ("not recorded"); a newer, longer one keeps what we know. */
            if (h.size < SPROF_REC_STATS_V1_SIZE) BAD("STATS record too short (%u bytes)", h.size);
            size_t known = h.size < sizeof rec->u.stats ? h.size : sizeof rec->u.stats;
            memcpy(&rec->u.stats, p, known); /* rec was zeroed above */
            break;
        }
        case SPROF_REC_END:
            if (h.size >= sizeof(struct sprof_rec_end)) { /* format 1.3: why it ended */
                struct sprof_rec_end e;
                memcpy(&e, p, sizeof e);
                t->end_reason = e.reason;
                t->end_signal = e.signal;
            }
            t->off += h.size;
            t->done = 1;
            return 1;
        default: /* unknown (newer writer): skip */
            t->off += h.size;
            continue;
        }
        t->off += h.size;
        return 1;
    }
}
