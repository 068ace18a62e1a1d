/* The joined profile: the one data model every sprof view projects from
 * (fold, diff, callgraph, top, flamegraph, pprof, speedscope).
 *
 *   samples -> distinct stacks (root first) -> interned frames
 *
 * A frame is one Ruby (or C, or library) frame with the line it was at:
 * the leaf's own line, or the call-site line for callers. Inlined Ruby
 * methods are frames of their own (flag SPROF_FRAME_INLINED). Views that
 * do not care about lines merge frames by name.
 *
 * Loading from traces: identical raw PC arrays are aggregated first, each
 * distinct PC is symbolized once, then stacks are expanded, so memory grows
 * with distinct stacks, not samples. */
#ifndef SPROF_PROFILE_H
#define SPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/symmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Extra frame flags beyond enum sprof_frame_flags (same 16-bit field). */
enum sprof_pframe_flags {
    SPROF_PFRAME_SYNTHETIC = 1u << 8,  /* [Fiber], [thread ...], [unknown], kernel leaves ([syscall write]) */
    SPROF_PFRAME_UNRESOLVED = 1u << 9, /* no symbol: named module+0xoffset or 0xaddr */
    SPROF_PFRAME_ANON_CODE = 1u << 10, /* code in anonymous executable memory (JIT) no perf map names */
};

typedef struct sprof_pframe {
    const char *name;   /* Ruby name; C/library symbol for other code; never NULL */
    const char *c_name; /* C symbol ("" for synthetic frames) */
    const char *file;   /* .rb/.c file of `line`, "" if unknown */
    const char *module; /* binary or library path the code is in, "" if synthetic */
    uint32_t line;      /* 0 if unknown */
    uint8_t kind;       /* enum sprof_kind */
    uint8_t cost;       /* enum sprof_cost */
    uint16_t flags;     /* enum sprof_frame_flags | enum sprof_pframe_flags */
    uint64_t address;   /* a representative link-time (or module-relative) address, for exports */
    uint32_t def_line;  /* line of the method's `def` (Spinel map) or function start, 0 if unknown;
                         * a property of the method, for views (top, pprof start_line) */
} sprof_pframe;

typedef struct sprof_pstack {
    uint32_t nframes;
    uint32_t *frames;  /* indices into profile.frames, ROOT FIRST */
    uint64_t samples;  /* number of samples */
    uint64_t cpu_ns;   /* sum of sample weights (CPU ns; wall ns in wall mode) */
    uint32_t tid;      /* 0 unless the profile was loaded per thread */
} sprof_pstack;

typedef struct sprof_profile_stats {
    uint64_t samples;        /* samples kept, counted as the stacks count them (a tick kernel sample: the periods it stands for) */
    uint64_t filtered;       /* samples skipped by --from/--to/--tid */
    uint64_t dropped;        /* runtime: buffer full */
    uint64_t truncated;      /* runtime: depth cap */
    uint64_t unresolved_pcs; /* distinct PCs with no symbol */
    uint64_t incomplete;     /* samples whose stack does not reach main/[Fiber]/thread start */
    uint64_t truncated_files; /* input traces that ended without END */
    uint64_t forced;         /* samples of traces read with --force against a symmap of another build */
} sprof_profile_stats;

/* What one input trace says about its own accuracy, for the accounting
 * warnings (sprof/accounting.h): its last STATS record (format 1.1 fields
 * 0 = not recorded) and the weights of all its samples, before any
 * --from/--to/--tid filter (the warnings are about the recording). */
typedef struct sprof_trace_accounting {
    char *path;
    uint32_t mode, mechanism, hz; /* from INFO */
    int have_stats;               /* 0: killed before the first STATS record */
    uint64_t cpu_ns_total, user_cpu_ns, system_cpu_ns;
    uint64_t weight_ns_total, kernel_weight_ns; /* the runtime's sums (0: not recorded) */
    uint64_t achieved_millihz, threads_seen, samples_dropped, signals_lost;
    uint32_t kernel_sampling, kernel_hz; /* enum sprof_kernel_sampling */
    uint64_t own_cpu_ns;                 /* (1.2) sprof's own threads' CPU; 0: not recorded */
    uint64_t read_weight_ns;        /* sum of the weights of the samples in the file */
    uint64_t read_kernel_weight_ns; /* of which KERNEL samples */
} sprof_trace_accounting;

/* One sample in time (sprof_load_options.timeline): when, which thread,
 * what it weighs, and its stack. Traces only. */
typedef struct sprof_timeline_sample { /* 32 bytes: one per sample of a trace */
    uint64_t time_ns;   /* the trace's CLOCK_MONOTONIC */
    uint64_t weight_ns; /* CPU (wall in wall mode) ns the sample stands for */
    uint32_t count;     /* samples it counts for (as the stacks count them) */
    uint32_t stack;     /* index into stacks */
    uint32_t tid;
    uint32_t flags;     /* the sample's flags (enum sprof_sample_flags: OFFCPU in wall mode, KERNEL, ...) */
} sprof_timeline_sample;

typedef struct sprof_thread_label {
    uint32_t tid;
    char name[20];      /* the thread's name in the trace ("" if none) */
} sprof_thread_label;

typedef struct sprof_profile {
    sprof_pframe *frames;
    size_t nframes;
    sprof_pstack *stacks;
    size_t nstacks;
    sprof_profile_stats stats;
    uint32_t mode;      /* enum sprof_mode of the traces (cpu unless all were wall) */
    uint32_t hz;        /* rate asked (first trace) */
    uint8_t build_id[32];
    uint32_t build_id_len;
    char *binary_path;  /* from the symmap, may be NULL */
    /* Wall-clock span the samples cover (traces only; 0 when unknown, as
     * for folded or perf-script input): the earliest trace's start (plus
     * --from), and the time of the last sample kept. For pprof's
     * time_nanos/duration_nanos. */
    uint64_t start_realtime_ns, end_realtime_ns;
    /* a JIT's perf map (/tmp/perf-PID.map) that exists but was not used, or
     * had lines left out: the first such note, "" if none (views print it) */
    char jit_note[512];
    sprof_trace_accounting *traces; /* one per input trace, in load order */
    size_t ntraces;
    /* every kept sample in file order, and the threads' names (only when
     * loaded with sprof_load_options.timeline; from traces) */
    sprof_timeline_sample *timeline;
    size_t ntimeline;
    sprof_thread_label *threads;
    size_t nthreads;
    uint64_t timeline_origin_ns; /* the earliest trace's start (CLOCK_MONOTONIC): --from/--to count from it */
    /* folded input with fractional counts (difffolded.pl -n): each stack's
     * exact count, stacks[i].samples being it rounded; NULL otherwise. Only
     * the folded writers (sprof-fold, sprof-diff --folded) print it. */
    double *exact_counts;
    size_t nexact;
    struct sprof_profile_internal *internal; /* interning tables, string pool */
} sprof_profile;

typedef struct sprof_load_options {
    int no_inline;      /* drop inlined frames (keep only real functions) */
    int per_thread;     /* add a root frame "[thread NAME tid]" and keep tid in stacks */
    int timeline;       /* keep every sample's time, thread, weight and stack (profile.timeline) */
    int force;          /* accept a build-id mismatch */
    uint64_t from_ns;   /* keep samples with time >= start + from_ns (0: from start) */
    uint64_t to_ns;     /* and time < start + to_ns (0: to the end) */
    const uint32_t *tids; /* keep only these thread ids (NULL: all) */
    size_t ntids;
    /* perf script / allocation report parsing (sprof/perf_script.h); NULL: defaults */
    const struct sprof_perf_options *text;
} sprof_load_options;

void sprof_profile_init(sprof_profile *p);
void sprof_profile_free(sprof_profile *p);

/* Add samples from sprof traces, symbolized through the symmap (may be
 * NULL: then everything is named from ELF symbols of the mapped files).
 * Can be called several times (traces are summed). 0, or -1 + err. */
int sprof_profile_add_traces(sprof_profile *p, const char *const *trace_paths, size_t ntraces,
                             const char *symmap_path, const sprof_load_options *opt,
                             char *err, size_t errlen);

/* Add stacks from a folded file ("a;b;c 123" lines). Frame names are taken
 * as written; a trailing "_[k]"-style class suffix is parsed back into the
 * cost class, and the kernel leaves ([syscall write], [page fault],
 * [kernel]) are class kernel by name. 0, or -1 + err naming the file and line. */
int sprof_profile_add_folded(sprof_profile *p, const char *path, char *err, size_t errlen);
/* The same from an open stream; `path` only names it in errors. */
int sprof_profile_add_folded_stream(sprof_profile *p, FILE *f, const char *path,
                                    char *err, size_t errlen);

/* Low-level building blocks for parsers (perf script, alloc reports, tests).
 * Intern a frame (strings copied) and add `samples`/`cpu_ns` to the stack
 * made of `frames` (root first). */
uint32_t sprof_profile_intern_frame(sprof_profile *p, const sprof_pframe *f);
int sprof_profile_add_stack(sprof_profile *p, const uint32_t *frames, uint32_t n,
                            uint64_t samples, uint64_t cpu_ns, uint32_t tid);
/* The cost class a stack's time is shown in on a timeline: gc when a
 * collector frame is on it (the time the collector ran), else its leaf's
 * (kernel for a kernel-time leaf). enum sprof_cost. */
int sprof_pstack_time_class(const sprof_profile *p, const sprof_pstack *s);
/* The same, and the index of the stack it went to in *index. */
int sprof_profile_add_stack_at(sprof_profile *p, const uint32_t *frames, uint32_t n, uint64_t samples,
                               uint64_t cpu_ns, uint32_t tid, uint32_t *index);

/* Folded output (sorted lines, "root;...;leaf N"). */
typedef struct sprof_fold_format {
    int weight_cpu;  /* 1: CPU ns, 0: sample counts */
    int c_names;     /* raw C names instead of Ruby names */
    int lines;       /* "Foo#bar:12" */
    int classes;     /* suffix _[u] user, _[r] runtime, _[g] gc, _[n] native, _[k] kernel (docs/folded.md) */
} sprof_fold_format;
int sprof_profile_write_folded(const sprof_profile *p, FILE *out, const sprof_fold_format *fmt);

/* The cost class a sample is charged to, for class splits: the leaf's
 * class, except that native code (libc malloc/free/memcpy, ...) called by
 * the collector or allocator is gc time and called by a runtime helper is
 * runtime time: a native leaf takes the class of its nearest non-native
 * caller when that caller is gc or runtime. Native code called straight
 * from Ruby code stays native. Empty stack: native. */
uint8_t sprof_pstack_cost(const sprof_profile *p, const sprof_pstack *s);

/* Name a frame as the folded output would (for views that merge by name). */
const char *sprof_pframe_display(const sprof_pframe *f, const sprof_fold_format *fmt,
                                 char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif
#endif
