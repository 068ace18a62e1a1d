/* sprof trace file format, version 2 (format 2.0; version 1 files are read too): the contract between the runtime
 * stub (writer) and the offline tools (reader). Spec with rationale:
 * docs/trace-format.md. Little-endian x86-64 / aarch64 hosts only.
 *
 * File = sprof_trace_file_header, then records. Every record starts with
 * sprof_rec_hdr; `size` counts the whole record including the header and is
 * a multiple of 8, so a reader can skip types it does not know and stop
 * cleanly at a truncated tail. A file that ends without SPROF_REC_END was
 * not closed cleanly (killed): everything before the cut is still valid. */
#ifndef SPROF_TRACE_FORMAT_H
#define SPROF_TRACE_FORMAT_H

#include <stdint.h>

#define SPROF_TRACE_MAGIC "SPROFTRC" /* 8 bytes, no NUL stored */
#define SPROF_TRACE_VERSION 2u     /* written (format 2.0: STACK + SAMPLES records) */
#define SPROF_TRACE_VERSION_MIN 1u /* the oldest a reader still reads */
#define SPROF_TRACE_MAX_RECORD (1u << 20) /* readers refuse larger records */

struct sprof_trace_file_header {
    char magic[8];
    uint32_t version;
    uint32_t header_size; /* sizeof(struct sprof_trace_file_header) */
};

enum sprof_rec_type {
    SPROF_REC_INFO = 1,    /* once, first: process and sampler settings */
    SPROF_REC_MAPPING = 2, /* a loaded executable mapping (at start, after dlopen) */
    SPROF_REC_THREAD = 3,  /* a thread appeared, was named, or exited */
    SPROF_REC_SAMPLE = 4,  /* one stack sample */
    SPROF_REC_STATS = 5,   /* cumulative counters; the last one in the file wins */
    SPROF_REC_END = 6,     /* clean close; nothing follows (format 1.3: struct sprof_rec_end) */
    SPROF_REC_STACK = 7,   /* (2.0) a sample's stack, written once: struct sprof_rec_stack */
    SPROF_REC_SAMPLES = 8, /* (2.0) samples that refer to STACK records: struct sprof_rec_samples */
    SPROF_REC_STACK_RESET = 9, /* (2.0) STACK indexes start again at 0 (the writer's table was full) */
};

struct sprof_rec_hdr {
    uint32_t type; /* enum sprof_rec_type */
    uint32_t size; /* whole record, multiple of 8 */
};

enum sprof_mechanism {
    SPROF_MECH_NONE = 0,
    SPROF_MECH_PERF_EVENT = 1,     /* in-process perf_event_open task-clock, ring buffer drained */
    SPROF_MECH_CPUCLOCK_PACED = 2, /* sampler thread paces per-thread signals by thread CPU clocks */
    SPROF_MECH_POSIX_TIMER = 3,    /* timer_create(CLOCK_THREAD_CPUTIME_ID) per thread */
    SPROF_MECH_ITIMER = 4,         /* setitimer(ITIMER_PROF) */
    SPROF_MECH_WALL = 5,           /* wall-clock mode: sampler thread signals every thread */
    SPROF_MECH_WALL_PERF = 6,      /* wall-clock mode without signals: on-CPU samples from per-thread
                                    * perf_event task-clock events, off-CPU samples taken by the
                                    * sampler thread from blocked threads' stacks */
};

enum sprof_mode { SPROF_MODE_CPU = 0, SPROF_MODE_WALL = 1 };

struct sprof_rec_info {
    struct sprof_rec_hdr h;
    uint32_t pid;
    uint32_t mode;        /* enum sprof_mode */
    uint32_t mechanism;   /* enum sprof_mechanism actually running */
    uint32_t hz;          /* rate asked */
    uint32_t max_depth;
    uint32_t arch;        /* ELF e_machine of the host (62 = x86-64, 183 = aarch64) */
    uint64_t start_monotonic_ns;
    uint64_t start_realtime_ns;
    /* followed by the executable's path, NUL-terminated, padded to 8 */
};

struct sprof_rec_mapping {
    struct sprof_rec_hdr h;
    uint64_t start, end; /* runtime address range */
    uint64_t file_offset; /* pgoff of the mapping */
    uint32_t prot;        /* PROT_READ|PROT_WRITE|PROT_EXEC */
    uint32_t build_id_len; /* 0..32 */
    uint8_t build_id[32];
    /* followed by the path, NUL-terminated, padded to 8 */
};

enum sprof_thread_event { SPROF_THREAD_START = 0, SPROF_THREAD_NAME = 1, SPROF_THREAD_EXIT = 2 };

struct sprof_rec_thread {
    struct sprof_rec_hdr h;
    uint32_t tid;
    uint32_t event;  /* enum sprof_thread_event */
    uint64_t time_ns;
    /* followed by the thread name, NUL-terminated, padded to 8 ("" if none) */
};

enum sprof_sample_flags {
    SPROF_SAMPLE_TRUNCATED = 1u << 0,    /* depth cap reached: outermost frames missing */
    SPROF_SAMPLE_OFFCPU = 1u << 1,       /* wall mode: thread was not running */
    SPROF_SAMPLE_FP_SCANNED = 1u << 2,   /* rbp was not a valid frame; chain start found by stack scan */
    SPROF_SAMPLE_CHAIN_BROKEN = 1u << 3, /* walk stopped at an invalid frame pointer (not at the outermost frame) */
    SPROF_SAMPLE_KERNEL_CHAIN = 1u << 4, /* chain collected by the kernel (perf_event) */
    SPROF_SAMPLE_OFF_STACK = 1u << 5,    /* sp was outside the thread's own stack (ucontext fiber,
                                          * alternate signal stack): with KERNEL_CHAIN the chain may
                                          * continue past the fiber's root (makecontext's
                                          * __start_context) into stale frames; cut it there */
    /* Kernel time (format 1.1). A KERNEL sample stands for CPU time the
     * thread spent in the kernel on its own behalf (a system call, a page
     * fault or another trap); pc/sp/fp and the stack are the user context
     * that entered the kernel (for a system call pc is just after the
     * syscall instruction) and weight_ns is that kernel time. Readers show
     * it as a synthetic leaf frame under that user stack. */
    SPROF_SAMPLE_KERNEL = 1u << 6,
    SPROF_SAMPLE_SYSCALL = 1u << 7,    /* with KERNEL: entered by a system call; its number in
                                        * SPROF_SAMPLE_SYSCALL_NR(flags), -1 if not known */
    SPROF_SAMPLE_PAGE_FAULT = 1u << 8, /* with KERNEL, not SYSCALL: the thread took page faults
                                        * there (else the entry is not known: "[kernel]") */
    /* A user-time sample whose signal was delivered at a system-call return
     * later than the instant it stands for (the cpuclock fallback: the
     * thread ran on and entered the kernel before the signal reached it).
     * The function holding the syscall instruction is not where that time
     * went: readers charge the sample to that function's caller. */
    SPROF_SAMPLE_SYSCALL_SKID = 1u << 9,
    /* The CPU a thread ran after its last sample (all of it, for a thread
     * that ended within its first period), charged when the thread ended to
     * its start routine: pc is that routine's address, there is no stack
     * (nframes = ncand = 0, sp = fp = 0). Readers take it as a complete
     * stack of one frame, the thread's root. */
    SPROF_SAMPLE_THREAD_TAIL = 1u << 10,
    /* With KERNEL: taken by the tick kernel sampler (STATS.kernel_sampling
     * = tick): it stands for all the kernel time since the previous tick,
     * its weight, which is many periods of the asked rate. */
    SPROF_SAMPLE_KERNEL_TICK = 1u << 11,
    /* A sample that stands for part of a period: the cpuclock pacer's
     * signal landed after a page fault (the kernel time the tick sampler
     * recorded there is off its weight); or (2.7) perf_event's half of the
     * CPU a phase kick's restart dropped, at the kick's stack or the
     * previous sample's; or (2.8, with KERNEL|SYSCALL) the CPU of a system
     * call after the cpuclock pacer's signal was sent, which waited for its
     * return. Counted by weight, as KERNEL_TICK. */
    SPROF_SAMPLE_PARTIAL = 1u << 12,
    /* (1.2) The frame-pointer chain went on above the stack words the
     * sampler could record (the perf_event stack copy, SPROF_SCAN_MAX, the
     * candidate cap): frames between the last recorded word and the chain
     * may be missing. Readers count the stack incomplete when their unwind
     * needed such a word. */
    SPROF_SAMPLE_STACK_CUT = 1u << 13,
    /* (2.9) The cpuclock pacer's draw: one landing, its weight exactly the
     * thread's CPU since its previous landing. */
    SPROF_SAMPLE_DRAW = 1u << 14,
    /* (2.9, with DRAW) that previous landing wrote the thread's previous
     * DRAW sample: readers weighing by CPU give half of this weight to
     * that sample's stack (the trapezoid rule: each draw stands for half
     * the CPU before it and half after it, not all of it before). */
    SPROF_SAMPLE_DRAW_PREV = 1u << 15,
};

/* bits 16..27 of a KERNEL|SYSCALL sample's flags: system call number + 1 (0 = not known) */
#define SPROF_SAMPLE_SYSCALL_SHIFT 16
#define SPROF_SAMPLE_SYSCALL_MASK 0xfffu
#define SPROF_SAMPLE_SYSCALL_NR(flags) ((int)(((flags) >> SPROF_SAMPLE_SYSCALL_SHIFT) & SPROF_SAMPLE_SYSCALL_MASK) - 1)
/* A perf_event user-mode sample flagged SYSCALL may lie up to this many
 * bytes from the call's return address (a host that takes the interrupt
 * held across sysret a few instructions later): the runtime flags it, the
 * unwinder applies the row that ends at the `syscall` there too. */
#define SPROF_SYSCALL_SKID_BYTES 16u

/* How kernel time was sampled (STATS.kernel_sampling). */
enum sprof_kernel_sampling {
    SPROF_KSAMPLE_NONE = 0, /* not sampled (older trace, wall mode, or SPROF_KERNEL=off): a thread's
                             * kernel time is in the weight of its next user-mode sample */
    SPROF_KSAMPLE_PERF = 1, /* the perf_event itself samples kernel mode (perf_event_paranoid <= 1
                             * or CAP_PERFMON): every sample at the asked rate */
    SPROF_KSAMPLE_TICK = 2, /* a per-thread POSIX CPU timer: the kernel checks it at its tick, so
                             * kernel-mode samples come at most kernel_hz per CPU second, each
                             * weighted by the thread's CPU since the last, in the proportion
                             * the kernel's ticks charged to system time */
    SPROF_KSAMPLE_PACER = 3, /* (2.1) cpuclock: the pacer signals each thread from the thread's own
                              * CPU, so its samples land where a timer interrupt stopped the thread,
                              * in kernel mode too: every sample at the asked rate (the tick only
                              * says how much of a landing at a faulting pc was the kernel's) */
};

#define SPROF_FPOFF_UNKNOWN 0xffffffffu
/* (1.5) A candidate whose offset is SPROF_CAND_REBASE is not a stack word:
 * its value is the base address of the candidates after it, which are
 * offsets from that base (a second stack segment: the interrupted stack
 * below a signal handler that runs on an alternate signal stack). */
#define SPROF_CAND_REBASE 0xffffffffu
/* (2.5) A candidate whose offset is SPROF_CAND_RBX is not a stack word
 * either: its value is rbx at the sample. Recorded only when the pc is in
 * the dynamic linker and rbx points into the stack above sp: its
 * lazy-binding trampoline (_dl_runtime_resolve) keeps its CFA in rbx. At
 * most one, never in a stack another one shares. */
#define SPROF_CAND_RBX 0xfffffffeu
/* a candidate offset that names no stack word (REBASE, RBX) */
#define SPROF_CAND_IS_MARKER(off) ((off) == SPROF_CAND_REBASE || (off) == SPROF_CAND_RBX)

/* One sample. Layout after the fixed part, each array 8-byte padded:
 *   uint64_t ret[nframes];      return addresses of the frame-pointer chain,
 *                               first frame record outward (leaf pc NOT included)
 *   uint32_t fpoff[nframes];    offset of each frame record from sp,
 *                               SPROF_FPOFF_UNKNOWN if not known
 *   uint32_t cand_off[ncand];   stack candidates: offset from sp of a word ...
 *   uint64_t cand_val[ncand];   ... and its value. Words between sp and the
 *                               first frame record that point into an
 *                               executable mapping or into the stack itself,
 *                               so the offline side can finish the unwind with
 *                               CFI through code without frame pointers. */
struct sprof_rec_sample {
    struct sprof_rec_hdr h;
    uint32_t tid;
    uint32_t flags;     /* enum sprof_sample_flags */
    uint16_t nframes;
    uint16_t ncand;
    uint32_t fp0_off;   /* offset from sp of the first frame record, SPROF_FPOFF_UNKNOWN if none */
    uint64_t time_ns;   /* CLOCK_MONOTONIC */
    uint64_t weight_ns; /* thread CPU ns (wall ns in wall mode) since this thread's previous sample */
    uint64_t pc, sp, fp; /* registers at the interrupt (fp = rbp on x86-64) */
};

/* Format 2.0: a stack written once, referred to by the samples that have
 * it. Its index is its position among the STACK records since the file's
 * start or the last STACK_RESET. A STACK record is a sprof_rec_hdr and
 * unsigned LEB128 varints (zz = sprof_zigzag), zero-padded to 8 bytes:
 *   parent        index + 1 of the stack whose outer part this one keeps; 0 = none
 *   keep_frames   the parent's outermost frames this stack ends with
 *   keep_cands    the parent's outermost candidates this stack ends with
 *   nframes       frames encoded here (the innermost ones)
 *   ncand         candidates encoded here (the innermost ones)
 *   fp0_off + 1   (32-bit wrapping: SPROF_FPOFF_UNKNOWN is 0)
 *   zz(sp - the parent's sp, or 0)
 *   zz(pc - the parent's pc, or 0)
 *   zz(fp - sp)
 * then per new frame zz(ret - previous ret, the first from pc) and
 * zz(fpoff - previous fpoff, the first from 0); per new candidate
 * zz(off - previous off, the first from 0) and its value: an even varint
 * x is zz(value - previous even-coded value, the first from the last
 * ret or pc) << 1, an odd one zz(value - (sp + off)) << 1 | 1. The kept
 * frames and candidates are the parent's at the same absolute stack
 * addresses: their offsets are rebased from the parent's sp to this one's
 * (SPROF_FPOFF_UNKNOWN and SPROF_CAND_REBASE stay as they are). sp, pc and
 * fp are those of the first sample that had the stack: the bases of its
 * samples' pc and fp. docs/trace-format.md, "STACK". */
#define SPROF_STACK_FIELDS 9u

/* Format 2.0: `count` samples, each as seven unsigned LEB128 varints (zz =
 * zigzag of the 64-bit wrapping difference, sprof_zigzag):
 *   zz(tid - previous tid)       the first sample's previous tid is 0
 *   flags                        enum sprof_sample_flags
 *   stack                        index of a STACK record before this one
 *   zz(time - previous time)     the first sample's previous time is time_ns
 *   zz(weight - weight_ns)
 *   zz(pc - the stack's pc)
 *   zz(fp - the stack's fp)
 * then zero padding to a multiple of 8 bytes. */
struct sprof_rec_samples {
    struct sprof_rec_hdr h;
    uint32_t count;
    uint32_t reserved; /* 0 */
    uint64_t time_ns;   /* base of the first time delta */
    uint64_t weight_ns; /* base of every weight delta (the period) */
};
#define SPROF_SAMPLES_ENTRY_MAX 70u /* seven varints of at most 10 bytes */

static inline uint64_t sprof_zigzag(uint64_t now, uint64_t base)
{
    uint64_t d = now - base;
    return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t sprof_unzigzag(uint64_t z, uint64_t base)
{
    return base + ((z >> 1) ^ (uint64_t)-(int64_t)(z & 1));
}

/* Writes v as an unsigned LEB128 varint at p (at most 10 bytes); returns
 * the bytes written. */
static inline unsigned sprof_varint_put(uint8_t *p, uint64_t v)
{
    unsigned n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads a varint from [*p, end): 0 and *p moved past it, or -1 when it
 * runs past end or over 10 bytes / 64 bits. */
static inline int sprof_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift == 63 && b > 1) return -1;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

struct sprof_rec_stats {
    struct sprof_rec_hdr h;
    uint64_t samples_written;
    uint64_t samples_dropped;   /* buffer full */
    uint64_t samples_truncated; /* depth cap */
    uint64_t signals_lost;      /* timer expirations that produced no sample (overruns, ring loss, the pacer's forgiven draws) */
    uint64_t cpu_ns_total;      /* CPU time of all profiled threads so far */
    uint64_t achieved_millihz;  /* delivered samples per CPU second x 1000 */
    uint64_t threads_seen;
    /* Format 1.1: absent in older files (their STATS is 64 bytes); a reader
     * zero-fills what is missing and treats 0 as "not recorded". */
    uint64_t user_cpu_ns;     /* profiled threads' user-mode CPU, the kernel's own per-thread accounting */
    uint64_t system_cpu_ns;   /* profiled threads' kernel-mode CPU on their own behalf */
    uint64_t weight_ns_total; /* sum of the written samples' weights (the CPU time they stand for) */
    uint64_t kernel_weight_ns; /* of which KERNEL samples */
    uint32_t kernel_sampling; /* enum sprof_kernel_sampling */
    uint32_t kernel_hz;       /* TICK: the most kernel samples per kernel CPU second (CONFIG_HZ); else 0 */
    /* Format 1.2 */
    uint64_t own_cpu_ns;      /* CPU of sprof's own threads (writer, sampler) and of its final drain:
                               * what profiling cost beyond the per-sample work inside the program's threads */
    /* Format 1.3: what went wrong while recording (absent/0 in older files) */
    uint32_t problems;        /* enum sprof_problem bits */
    uint32_t write_errno;     /* PROBLEM_WRITE_FAILED: errno of the write that failed (ENOSPC, EDQUOT, EFBIG...) */
    /* Format 1.4: recording control */
    uint64_t paused_cpu_ns;   /* CPU the profiled threads ran while recording was paused (SPROF_START=paused,
                               * the toggle signal, SPROF_DELAY / SPROF_DURATION); not in cpu_ns_total */
    /* Format 2.3 */
    uint64_t clock_excess_ns; /* perf_event: task-clock time taken out of the samples' weights because the
                               * threads' CPU clocks did not count it (hypervisor steal, interrupts) */
    /* Format 2.4: perf_event threads whose stacks no copy holds (docs/runtime.md) */
    uint64_t walked_samples;  /* samples whose stack is the handler's live walk, not the kernel's copy */
    uint64_t unwalked_samples; /* samples of such threads still cut: no walk matched them */
    uint32_t walked_threads;  /* threads signalled at each perf overflow so that their handler walks */
    /* Format 2.6 (was reserved, 0) */
    uint32_t phase_kicks;     /* perf_event: times a thread's sampling phase was drawn afresh (saturates) */
};
#define SPROF_REC_STATS_V1_SIZE 64u /* STATS before format 1.1 */
#define SPROF_REC_STATS_V11_SIZE 104u /* STATS of format 1.1 */
#define SPROF_REC_STATS_V12_SIZE 112u /* STATS of format 1.2 */
#define SPROF_REC_STATS_V13_SIZE 120u /* STATS of format 1.3 */
#define SPROF_REC_STATS_V14_SIZE 128u /* STATS of formats 1.4 to 2.2 */
#define SPROF_REC_STATS_V23_SIZE 136u /* STATS of format 2.3 */

/* STATS.problems (format 1.3): what kept the trace from being complete. */
enum sprof_problem {
    SPROF_PROBLEM_WRITE_FAILED = 1u << 0,   /* a write to the trace failed (write_errno: ENOSPC = disk full,
                                             * EDQUOT, EFBIG = RLIMIT_FSIZE...): records after it are lost */
    SPROF_PROBLEM_SIGNAL_TAKEN = 1u << 1,   /* the program installed its own handler for sprof's profiling
                                             * signal: sampling by signal stopped there */
    SPROF_PROBLEM_SIGNAL_BLOCKED = 1u << 2, /* a thread blocked sprof's profiling signal: its samples stayed
                                             * pending (not taken while blocked) */
};

/* Format 1.3: END carries why the trace ended. An 8-byte END (older
 * writers) is a clean close with the reason not recorded. */
enum sprof_end_reason {
    SPROF_END_NOT_RECORDED = 0,
    SPROF_END_EXIT = 1,         /* exit() / return from main (the runtime's destructor) */
    SPROF_END_UNDERSCORE_EXIT = 2, /* _exit / _Exit */
    SPROF_END_EXEC = 3,         /* the process exec()ed another image */
    SPROF_END_FATAL_SIGNAL = 4, /* a fatal signal (END.signal) sprof saw before the default action ran */
    SPROF_END_WRITE_FAILED = 5, /* writing failed (STATS.write_errno): the runtime cut the file back to
                                 * a whole record to fit STATS and END; sampling went on unrecorded */
    SPROF_END_ROTATED = 6,      /* format 1.4: SPROF_ROTATE closed this file; the next one continues */
};

struct sprof_rec_end {
    struct sprof_rec_hdr h;
    uint32_t reason; /* enum sprof_end_reason */
    uint32_t signal; /* FATAL_SIGNAL: the signal number; else 0 */
};

#endif
