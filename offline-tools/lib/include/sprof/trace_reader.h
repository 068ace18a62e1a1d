/* Streaming reader for sprof trace files (runtime-stub/include/sprof/trace_format.h).
 * The file is mmap'd; views point into it and stay valid until close.
 * Every length and count is checked before use: a hostile file yields an
 * error, never an out-of-bounds read. A truncated tail is not an error: the
 * reader stops there and reports it (sprof_trace_truncated). */
#ifndef SPROF_TRACE_READER_H
#define SPROF_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/trace_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_trace sprof_trace;

typedef struct sprof_sample_view {
    uint32_t tid, flags;
    uint64_t time_ns, weight_ns;
    uint64_t pc, sp, fp;
    uint32_t fp0_off;
    uint32_t nframes;
    const uint64_t *ret;    /* nframes */
    const uint32_t *fpoff;  /* nframes */
    uint32_t ncand;
    const uint32_t *cand_off; /* ncand */
    const uint64_t *cand_val; /* ncand */
} sprof_sample_view;

typedef struct sprof_mapping_view {
    uint64_t start, end, file_offset;
    uint32_t prot;
    uint32_t build_id_len;
    const uint8_t *build_id;
    const char *path;
} sprof_mapping_view;

typedef struct sprof_thread_view {
    uint32_t tid, event;
    uint64_t time_ns;
    const char *name;
} sprof_thread_view;

typedef struct sprof_info_view {
    uint32_t pid, mode, mechanism, hz, max_depth, arch;
    uint64_t start_monotonic_ns, start_realtime_ns;
    const char *exe_path;
} sprof_info_view;

typedef struct sprof_trace_record {
    uint32_t type; /* enum sprof_rec_type; unknown types are skipped by next() */
    union {
        sprof_info_view info;
        sprof_mapping_view mapping;
        sprof_thread_view thread;
        sprof_sample_view sample;
        struct sprof_rec_stats stats; /* copied; format 1.1 fields 0 when the record predates them */
    } u;
} sprof_trace_record;

/* Open and check the file header. NULL + one line "<path>: <problem>" in err. */
sprof_trace *sprof_trace_open(const char *path, char *err, size_t errlen);
/* Same over memory (fuzzing, tests); bytes must outlive the reader. */
sprof_trace *sprof_trace_open_mem(const void *data, size_t size, const char *name,
                                  char *err, size_t errlen);
void sprof_trace_close(sprof_trace *t);
const char *sprof_trace_name(const sprof_trace *t);

/* Next record: 1 = *rec filled, 0 = end of data (clean END or truncated
 * tail), -1 = malformed (err filled, "<path>: record at offset N: ..."). */
int sprof_trace_next(sprof_trace *t, sprof_trace_record *rec, char *err, size_t errlen);
/* Start again from the first record. */
void sprof_trace_rewind(sprof_trace *t);
/* The caller is done with the file's bytes before `upto` (a pointer into a
 * view) for now: their pages leave memory (they stay readable: a later
 * access reads them from the file again). Called as a pass over the file
 * moves forward; a pointer before the previous one starts a new pass.
 * Keeps a reader of a large trace from holding all of it in RAM. No-op
 * for sprof_trace_open_mem and pointers outside the file. */
void sprof_trace_release(sprof_trace *t, const void *upto);
/* The same for the bytes before the record next() will read: what a pass
 * that only moves forward calls. (A format 2 sample's arrays lie in a
 * STACK record before it, anywhere in the file: sprof_trace_release with
 * them does nothing.) */
void sprof_trace_release_read(sprof_trace *t);
/* After next() returned 0: 1 if the file ended without an END record. */
int sprof_trace_truncated(const sprof_trace *t);
/* After next() returned 0 at an END: why the trace ended (enum
 * sprof_end_reason, 0 = not recorded: an older writer, or no END) and, for
 * SPROF_END_FATAL_SIGNAL, the signal in *signal (may be NULL). */
uint32_t sprof_trace_end_reason(const sprof_trace *t, uint32_t *signal);
/* Byte offset of the record next() will read. */
uint64_t sprof_trace_offset(const sprof_trace *t);

const char *sprof_mechanism_name(uint32_t mech); /* "perf_event", "cpuclock_paced", ... */
/* STATS.kernel_sampling: "none", "perf_event", "tick", "?" */
const char *sprof_kernel_sampling_name(uint32_t how);
/* What to do when kernel time was drawn only at the tick, for a trace
 * recorded with mechanism mech (a clause for the views and sprof-trace). */
const char *sprof_kernel_tick_remedy(uint32_t mech);

/* Name of x86-64 system call `nr` ("write"), NULL if out of the table
 * (any int is safe to pass). Generated table: syscall_names.c. */
const char *sprof_syscall_name(int nr);

/* The synthetic leaf frame a KERNEL sample gets on top of its user stack:
 * "[syscall write]", "[syscall]" (number unknown or not in the table),
 * "[page fault]", "[kernel]". Written to buf; NULL if flags has no
 * SPROF_SAMPLE_KERNEL. */
const char *sprof_kernel_leaf_name(uint32_t flags, char *buf, size_t buflen);
/* Is this frame name (len bytes, not NUL-terminated) one of those leaves? */
int sprof_is_kernel_leaf_name(const char *name, size_t len);

#ifdef __cplusplus
}
#endif
#endif
