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

#include "sprof/trace_reader.h"

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
    if (fh.version != SPROF_TRACE_VERSION) {
        set_err(err, errlen, "%s: trace format version %u, this reader supports %u", name, fh.version,
                SPROF_TRACE_VERSION);
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
    free(t->name);
    free(t);
}

const char *sprof_trace_name(const sprof_trace *t) { return t->name; }

void sprof_trace_rewind(sprof_trace *t)
{
    t->off = t->first;
    t->done = t->truncated = 0;
    t->end_reason = t->end_signal = 0;
}

/* at most one madvise per this many bytes passed: each also drops the
 * pages of the first samples of hot stacks, which the next compare reads
 * back, so not too often */
#define RELEASE_STEP (32u << 20)

void sprof_trace_release(sprof_trace *t, const void *upto)
{
    uintptr_t p = (uintptr_t)upto, base = (uintptr_t)t->map;
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

int sprof_trace_next(sprof_trace *t, sprof_trace_record *rec, char *err, size_t errlen)
{
    for (;;) {
        if (t->done) return 0;
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
            uint64_t need = (uint64_t)sizeof r + (uint64_t)r.nframes * 8 + (((uint64_t)r.nframes * 4 + 7) & ~7ull) +
                            (((uint64_t)r.ncand * 4 + 7) & ~7ull) + (uint64_t)r.ncand * 8;
            if (need != h.size)
                BAD("SAMPLE with %u frames and %u candidates needs %llu bytes, record has %u", r.nframes, r.ncand,
                    (unsigned long long)need, h.size);
            /* arrays are 8-aligned within the record; the record is 8-aligned in the file */
            const uint8_t *q = p + sizeof r;
            sprof_sample_view *v = &rec->u.sample;
            v->tid = r.tid;
            v->flags = r.flags;
            v->time_ns = r.time_ns;
            v->weight_ns = r.weight_ns;
            v->pc = r.pc;
            v->sp = r.sp;
            v->fp = r.fp;
            v->fp0_off = r.fp0_off;
            v->nframes = r.nframes;
            v->ret = (const uint64_t *)(const void *)q;
            q += (size_t)r.nframes * 8;
            v->fpoff = (const uint32_t *)(const void *)q;
            q += ((size_t)r.nframes * 4 + 7) & ~(size_t)7;
            v->ncand = r.ncand;
            v->cand_off = (const uint32_t *)(const void *)q;
            q += ((size_t)r.ncand * 4 + 7) & ~(size_t)7;
            v->cand_val = (const uint64_t *)(const void *)q;
            break;
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
