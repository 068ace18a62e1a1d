/* Internal state shared by the runtime stub's files. Nothing here is API.
 *
 * Threads: one slot per profiled thread in a fixed table (no allocation in
 * the signal handler). A slot owns a single-producer ring (the thread's own
 * signal handler writes; the writer thread reads) or, with perf_event, the
 * kernel's ring buffer for that thread's event. */
#ifndef SPROF_RT_INTERNAL_H
#define SPROF_RT_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "sprof/trace_format.h"

#define SPROF_EXPORT __attribute__((visibility("default")))
#define SPROF_HIDDEN __attribute__((visibility("hidden")))

#define SPROF_MAX_THREADS 1024
#define SPROF_ALTSTACK_BYTES (64u * 1024u) /* the runtime's alternate signal stack for a thread */
/* how often the writer looks for threads waiting for their perf event,
 * for a while after it opened one (registry.c, writer.c) */
#define SPROF_ATTACH_POLL_NS 1000000ull
#define SPROF_SITES 32 /* per thread: kernel-exit sites the cpuclock pacer's landings owe time to */
/* cpuclock + tick: at most this many consecutive system-call landings of a
 * thread ask the pacer to retry at once (signal_sampler.c, pacer_weight);
 * a thread whose retries all land at system calls again gets fewer, down
 * to one, so a system-call-bound thread costs at most ~2x the signals */
#define SPROF_PACER_RETRIES 4
/* cpuclock + tick: call paths per thread whose carried landings wait for a
 * tick user-mode landing under them (pacer_carry.c) */
#define SPROF_CARRIES 8
/* thread CPU after a pacer signal within which a tick is taken for that
 * signal's own handler, delivery and return (kernel_sampler.c,
 * signal_sampler.c) */
#define SPROF_OWN_SIGNAL_NS 30000ull
/* cpuclock: a pacer wake this much later than its timer's wakes usually are
 * (pacer_aim.c) did not stop the thread at the timer's interrupt
 * (sampler_thread.c): the aim learns nothing from it */
#define SPROF_PACER_LATE_NS 30000ull
/* cpuclock: the longest the pacer's signal is taken to need to reach a
 * thread running in user mode (tgkill's interrupt to its CPU; a few us in
 * a VM): a signal that waited longer at a system call's return found the
 * thread in that call (signal_sampler.c, pacer_call_span) */
#define SPROF_PACER_DELIVERY_NS 50000ull
/* ... and one whose thread ran less than the pacer slept, by more than this
 * (and 1/64 of the sleep), was stopped by something else */
#define SPROF_PACER_RAN_SLACK_NS 8000ull
/* pacer_faults when the pacer did not read them (a local signal: its
 * landing needs none unless it comes late and is taken as a remote one) */
#define SPROF_FAULTS_UNKNOWN UINT64_MAX
/* ... and after this many due draws in a row that it could not take so (a
 * real-time thread the pacer cannot preempt, a CPU so loaded that its wakes
 * are always late), it signals from where it is, as remote pacing does:
 * late samples rather than none */
#define SPROF_PACER_MAX_MISSES 16u
#define SPROF_RING_BYTES (256u * 1024u) /* per-thread sample ring at the lowest rates, power of two */
#define SPROF_CAND_WINDOW 2048u          /* bytes above sp always scanned for candidates */
#define SPROF_SCAN_MAX (96u * 1024u)     /* and up to the chain's outermost record, at most this far */
#define SPROF_MAX_CAND 1024u             /* candidates per sample */
#define SPROF_FIBER_WINDOW (64u * 1024u) /* walk limit when sp is off the thread stack */
#define SPROF_MAX_FRAME_STEP (1u << 20)  /* largest accepted distance between frame records */
#define SPROF_PERF_STACK_DEFAULT 4096u   /* user stack bytes the kernel copies per sample, at first */
#define SPROF_PERF_STACK_MAX 57344u      /* a perf record is at most 64 KiB, callchain and registers included */

/* SPROF_KERNEL: how kernel time is sampled */
enum sprof_kernel_choice {
    SPROF_KERNEL_AUTO = 0, /* perf_event kernel samples where allowed, else the tick sampler */
    SPROF_KERNEL_PERF = 1, /* perf_event kernel samples (refused: warn, use the tick sampler) */
    SPROF_KERNEL_TICK = 2, /* the tick sampler even where perf_event could sample the kernel */
    SPROF_KERNEL_OFF = 3,  /* not sampled: kernel time goes into the next user sample's weight */
};

/* sigev_value of the tick sampler's timer: tells its signals from the pacer's */
#define SPROF_KTICK_COOKIE 0x6b74636b

struct sprof_config {
    int enabled;
    char out_path[4096];
    int path_has_pid;  /* "%p" in SPROF_OUT */
    uint32_t hz;
    uint32_t mode;      /* enum sprof_mode */
    uint32_t max_depth;
    int forced_mech;    /* enum sprof_mechanism, 0 = choose */
    int overwrite;
    uint32_t perf_stack;  /* SPROF_PERF_STACK: bytes of user stack per perf_event sample */
    int perf_assist;      /* SPROF_PERF_ASSIST: signal a thread whose stacks no copy holds (perf_assist.c) */
    int perf_phase;       /* SPROF_PERF_PHASE: draw the samples' phase afresh every few periods (perf_phase.c) */
    int kernel;           /* SPROF_KERNEL: enum sprof_kernel_choice */
    int pacer_remote;     /* SPROF_PACER=remote: the cpuclock pacer signals from any CPU (before 2.1) */
    int writer_remote;    /* SPROF_WRITER=remote: the writer runs wherever the scheduler puts it (output/writer_place.c) */
    int quiet;            /* SPROF_QUIET=1: no line on stderr at exit */
    char pattern[4096]; /* SPROF_OUT before %p expansion (fork children re-expand) */
    /* recording control (record_control.c, docs/runtime.md "Start, stop, windows") */
    int start_paused;      /* SPROF_START=paused */
    int toggle_sig;        /* SPROF_TOGGLE_SIGNAL: 0 = none */
    uint64_t delay_ns;     /* SPROF_DELAY: record from this long after start */
    uint64_t duration_ns;  /* SPROF_DURATION: stop recording this long after it first began (0 = never) */
    uint64_t rotate_ns;    /* SPROF_ROTATE: close the trace and start the next file this often (0 = never) */
    uint64_t rotate_bytes; /* SPROF_ROTATE_SIZE: ... or once the file is this large (0 = no limit) */
    uint32_t rotate_keep;  /* SPROF_ROTATE_KEEP: keep the newest K files (0 = all) */
};

/* Byte ring, single producer / single consumer. Records are written whole
 * and contiguous; a record that would straddle the end is preceded by a pad
 * record (type 0) that fills the rest of the ring. */
struct sprof_ring {
    uint8_t *buf;
    uint32_t cap; /* power of two */
    _Atomic uint64_t head; /* producer */
    _Atomic uint64_t tail; /* consumer */
    uint32_t resident; /* consumer: bytes from buf made resident ahead of the producer */
};

enum sprof_slot_state {
    SLOT_FREE = 0,
    SLOT_CLAIMED = 1, /* being set up */
    SLOT_ACTIVE = 2,
    SLOT_EXITED = 3,  /* thread gone; writer drains, reports EXIT, frees */
};

/* perf_event: who opens a thread's event. The main thread opens its own;
 * a thread the program starts leaves it to the writer thread, so the
 * event, its ring and their set-up cost (~300 us, mostly mapping the ring)
 * are never the program's CPU (docs/runtime.md, "Thread start"). */
enum sprof_attach_state {
    ATTACH_INLINE = 0,    /* opened by the thread itself (or no perf event) */
    ATTACH_PENDING = 1,   /* the writer will open it */
    ATTACH_BUSY = 2,      /* the writer is opening it */
    ATTACH_DONE = 3,      /* the writer is done: perf_fd >= 0 if the open worked */
    ATTACH_GONE = 4,      /* the thread ended before the writer was done: the
                           * writer stops any event it opened; it never waits */
};

/* A slot starts on a cache line of its own: the fields a thread's handler
 * writes and those the pacer and the writer write for its neighbour never
 * share one. */
struct sprof_thread {
    _Alignas(64) _Atomic int state;
    uint32_t tid;
    uint64_t stack_lo, stack_hi; /* [lo, hi) of the thread's own stack */
    /* about the lowest address the thread's outermost frame record (main's,
     * its start routine's) can be at: where it registered, less 512 bytes */
    uint64_t root_floor;
    clockid_t cpuclock;
    uint64_t start_ns;

    /* signal mechanisms */
    struct sprof_ring ring;
    uint8_t *scratch; /* one record under construction (handler only) */
    uint32_t scratch_cap;
    uint64_t last_cpu_ns;        /* handler: thread CPU at previous sample */
    _Atomic uint64_t last_wall_ns; /* wall mode: time of previous sample */
    _Atomic int pending;         /* pacer sent a signal not yet handled */
    _Atomic uint64_t wait_ns;    /* wall_perf: runnable-but-waiting time, added to the next on-CPU sample */
    uint64_t look_cpu_ns;        /* wall_perf sampler: thread CPU at its previous look */
    uint64_t pacer_next_cpu_ns;  /* pacer: thread CPU at which the next signal is due */
    uint64_t pacer_stratum_ns;   /* pacer: start of the period that due point is drawn in */
    uint64_t pacer_look_cpu_ns;  /* pacer: the thread's CPU at its previous pass */
    uint64_t pacer_rate;         /* pacer: its CPU per pass, smoothed (which thread the pacer follows) */
    uint32_t pacer_misses;       /* pacer: due draws in a row it could not take locally */
    _Atomic uint64_t pacer_faults; /* pacer: the thread's page faults when it decided to signal */
    /* pacer -> handler: the signal in flight was sent from the thread's own
     * CPU, after a timer interrupt there stopped the thread (sampler_thread.c):
     * it lands exactly where the thread stopped */
    _Atomic int pacer_local;
    _Atomic uint64_t pacer_sent_cpu_ns; /* pacer: the thread's CPU when it sent that signal */
    /* handler -> pacer: CPU of system calls the signal waited in, recorded
     * where they were (signal_sampler.c, pacer_call_span): draws paid */
    _Atomic uint64_t pacer_span_ns;
    int local_landings; /* handler: the last pacer landing was such (kernel_sampler.c leaves system calls to them) */
    /* handler: the thread's previous pacer landing wrote a DRAW sample, the
     * one the next draw's DRAW_PREV names (trace format 2.9) */
    int draw_chain;
    /* handler, cpuclock + tick: kernel time the tick sampler recorded per
     * return pc, owed by the pacer's landings there (kernel_sampler.c) */
    struct sprof_site {
        uint64_t pc, owed_ns;
        uint32_t flags; /* what the tick found there: KERNEL, PAGE_FAULT */
    } sites[SPROF_SITES];
    uint64_t site_pool_ns;
    uint64_t pacer_carry_ns; /* handler: CPU of pacer signals that landed at a system-call return */
    uint64_t tick_recorded_ns; /* handler: kernel time the tick recorded since the pacer's last landing */
    /* handler: the same, per call path, for the tick sampler's next user-mode
     * landing under it (pacer_carry.c) */
    struct sprof_carry {
        uint64_t key, ns, root; /* root: the path's outermost return address */
        uint32_t depth, age, unknown;
    } carries[SPROF_CARRIES];
    int carries_live;
    uint64_t pacer_pc; /* handler: where the last pacer signal landed */
    uint32_t pacer_retries;  /* handler: consecutive such landings that asked for a retry */
    uint32_t pacer_retry_cap; /* handler: how many may (1..SPROF_PACER_RETRIES; 0: not set yet) */
    _Atomic int pacer_retry; /* handler -> pacer: signal this thread again now, not at its next due point */
    timer_t ptimer;
    void *altstack;
    size_t altstack_len;
    int ptimer_ok;

    /* tick kernel sampler (kernel_sampler.c); handler only but for the start values */
    timer_t ktimer;
    int ktimer_ok;
    _Atomic int ktick_deferred; /* its ktimer is the writer's to create (sprof_ktick_attach) */
    uint64_t k_last_user, k_last_sys; /* raw tick-charged utime / stime at the previous ktick */
    uint64_t k_last_cpu;              /* precise thread CPU at the previous ktick */
    uint64_t k_last_faults;
    /* set-up of a thread the program started (our pthread_create wrapper),
     * from its first instruction: it has no alternate signal stack yet, and
     * (from_zero) its clocks and fault count are taken to start at 0, as
     * they do, instead of read: system calls saved on every thread start */
    uint8_t fresh_thread, from_zero;
    volatile sig_atomic_t exiting; /* sprof_thread_unregister under way: the handler takes nothing */
    uint64_t user_start_ns, sys_start_ns; /* raw utime / stime when registered */
    uint64_t user_final_ns, sys_final_ns; /* ... at exit */
    uint64_t start_pc;          /* the thread's start routine (0: the main thread) */
    uint64_t tail_cpu_ns;       /* signal mechanisms: CPU after the last sample, set at exit */
    uint64_t perf_final_count;  /* perf_event: the event's count at exit */
    uint64_t weight_written;    /* writer: weights of this thread's samples written */
    uint64_t follow_mark;       /* writer: weight_written when it last chose a CPU (output/writer_place.c) */
    /* 1 + the CPU the thread was last seen on (its perf samples' CPU, the
     * cpuclock pacer's look), 0: not seen yet */
    _Atomic int seen_cpu1;
    /* the cpu_id of the thread's rseq area (glibc's, in its thread control
     * block; 0: none): the CPU it runs on, which the cpuclock pacer reads
     * instead of /proc's stat (sprof_thread_rseq_cpu); rseq_peek holds the
     * thread's end off while the pacer reads it */
    _Atomic uintptr_t rseq_cpu_addr;
    _Atomic int rseq_peek;

    /* perf_event mechanism */
    int perf_fd;
    void *perf_base;
    size_t perf_len;
    uint64_t perf_last_count;
    _Atomic uint64_t perf_period;    /* current sample_period (0 = the nominal one); the phase kicks' handler reads it */
    uint64_t perf_base_period;       /* what it is dithered around (0 = the nominal one; perf_period.c) */
    uint64_t perf_win_cpu, perf_win_n; /* CPU and samples since the last period adjustment */
    uint64_t perf_win_periods;       /* the periods those samples were taken at, summed */
    uint32_t perf_dither_n;          /* samples since the last new phase */
    int32_t perf_dither_pending;     /* the next change (ppm): the last one's opposite, 0 = draw */
    /* the stack copy, sized to what the thread's stacks need (perf_adapt.c) */
    uint32_t perf_stack;             /* bytes of stack the event copies per sample */
    uint32_t perf_reach;             /* writer: the most any sample needed since the last resize */
    uint32_t perf_cut_n, perf_fit_n; /* writer: samples cut by the copy / fully within it */
    uint32_t perf_off_n, perf_offcut_n; /* writer: samples off the thread's stack / those of them cut */
    uint32_t perf_resizes;
    _Atomic uint32_t perf_gen;       /* odd while the writer replaces the event (perf_adapt.c), then one more */
    /* perf_assist.c: a thread whose stacks no copy holds is also signalled
     * at each overflow, and its handler walks the live stack */
    _Atomic int assist_on;           /* the handler takes perf overflow signals (set by the writer) */
    struct sprof_perf_assist *assist; /* writer: the walks its handler made, not yet joined */
    uint64_t perf_count_base;        /* the counts of the thread's earlier events */
    /* perf_phase.c: a second event whose signal restarts the period */
    int phase_fd;                    /* -1: none (the samples stay on the event's grid) */
    uint64_t phase_rng;              /* the thread's own draws (its handler) */
    _Atomic int phase_on;            /* the handler arms the phase event again */
    _Atomic uint64_t phase_kicks;    /* kicks its handler took */
    uint64_t phase_kicks_seen;       /* writer: phase_kicks at its last look */
    uint64_t phase_quiet_ns;         /* writer: sampled CPU since the kicks last moved */
    uint8_t phase_live;              /* writer: the kicks land; the period is shortened for them */
    struct sprof_perf_kicks *kicks;  /* writer: the kicks' walks and counts, until a sample passes them */
    uint8_t phase_tried;             /* writer: the phase event was opened, or could not be */
    /* perf_ktick.c, with the tick kernel sampler (writer): the CPU the task
     * clock counted over the user samples, the kernel time the tick
     * recorded, the periods the samples were taken at; their scale */
    uint64_t ktick_advance_ns, ktick_kernel_ns, ktick_periods_ns, ktick_n;
    int64_t ktick_owed_ns;    /* the user CPU counted to date less the weights given */
    uint32_t ktick_scale_q16; /* 0: 1 */
    /* the event's task clock against the thread's CPU clock (perf_clock.c) */
    uint64_t clock_mark_mono, clock_mark_count, clock_mark_cpu; /* writer: the last look (0: none) */
    uint32_t cpu_per_count_q16;      /* thread CPU per task-clock ns since then, x 65536 (0: 1) */
    _Atomic int attach;              /* enum sprof_attach_state */
    int attach_unknown;              /* writer: CPU before the event is not known */

    /* counters (written by the producer, read by the writer) */
    _Atomic uint64_t dropped;
    _Atomic uint64_t truncated;
    _Atomic uint64_t written;
    _Atomic uint64_t lost;
    uint64_t final_cpu_ns; /* set at exit */
    uint64_t cpu_start_ns; /* thread CPU when it was registered */
    _Atomic uint64_t freed_epoch; /* 0: never freed; else sampler_epoch + 1 when it was freed */
    int start_sent;
    char name[16];
    char exit_name[16]; /* the thread's name when it ended (it may end before the writer reads /proc) */
    int stat_fd, syscall_fd; /* wall mode: /proc/self/task/TID/{stat,syscall}, sampler only */
    uint64_t name_check_ns;
    /* recording control (writer; resume_cpu_ns also the handler) */
    uint64_t pause_mark_cpu;       /* thread CPU when recording paused (0: not marked) */
    uint64_t paused_cpu_ns;        /* CPU the thread ran while recording was paused (ended pauses) */
    _Atomic uint64_t resume_cpu_ns; /* thread CPU at the last resume, not yet seen by its handler */
    _Atomic int timer_use; /* enum sprof_timer_use: the writer arms or disarms this thread's timers */
};

struct sprof_globals {
    struct sprof_config cfg;
    _Atomic int running;  /* sampling on */
    _Atomic int stopping; /* writer should finish */
    int mech;             /* enum sprof_mechanism running */
    int sig;              /* profiling signal (0 = none) */
    uint64_t sig_restorer; /* the signal-return trampoline its frames return to (perf_sampler.c) */
    uint64_t period_ns;
    int fd;               /* trace file (-1 until opened) */
    int session;          /* a trace is being recorded (its file may still be pending) */
    int open_pending;     /* forked child: create the file at the first flush */
    pid_t pid;
    pthread_t writer_tid, sampler_tid;
    int writer_started, sampler_started;
    _Atomic int io_lock;  /* owner of the file + ring consumers */
    /* SPROF_MAX_THREADS slots, zero-initialised memory of their own (1.8 MiB:
     * in g_sprof, whose initialiser is not all zeros, they were file-backed
     * .data, and every first write to a page copied it from the library) */
    struct sprof_thread *threads;
    _Atomic int slots_hi; /* slots at or above this index were never claimed */
    _Atomic uint32_t reg_lock; /* slot claims (never taken in a handler): sprof_lock */
    _Atomic uint64_t threads_seen;
    _Atomic int attach_wanted; /* a thread waits for the writer to open its perf event */
    _Atomic int spares_wanted; /* starting threads have taken the spare pool low (spare_pool.c) */
    _Atomic uint64_t writer_period_hint; /* a ring now fills faster: the writer's pass period at most this */
    _Atomic uint64_t attach_wake_ns; /* no thread wakes the writer for that before this time */
    _Atomic uint64_t exited_cpu_ns; /* CPU of threads already gone */
    _Atomic uint64_t unregistered_signals; /* signals that hit a thread with no slot */
    struct sprof_ring aux_ring; /* off-CPU samples written by the sampler thread */
    _Atomic uint64_t aux_dropped;
    /* writer-side totals (io_lock held) */
    uint64_t samples_written, samples_truncated, dropped_released, lost_released;
    uint64_t periods_milli; /* the delivered rate's count, in thousandths of a sample (sprof_count_sample) */
    uint64_t start_mono_ns;
    _Atomic uint64_t stop_cpu_ns; /* profiled CPU when sampling stopped (0 = still running) */
    _Atomic uint64_t stop_time_ns; /* CLOCK_MONOTONIC when sprof_stop began: later samples are sprof's own work */
    _Atomic uint64_t start_done_ns; /* CLOCK_MONOTONIC when the start finished: earlier samples are sprof's set-up */
    /* Slot reuse vs the sampler thread: the sampler reads a slot's fields
     * after seeing it ACTIVE, so a freed slot may only be claimed again once
     * the sampler pass that could have seen it has ended. The sampler bumps
     * the epoch after each pass; a slot remembers the epoch it was freed in. */
    _Atomic uint64_t sampler_epoch;
    _Atomic int pacer_local_ok; /* the cpuclock pacer signals from each thread's own CPU (sampler_thread.c) */
    _Atomic uint64_t pacer_landings, pacer_local_landings; /* handler: pacer signals taken, and of them local */
    _Atomic uint32_t pacer_kick; /* futex word: a handler asked the pacer for a retry (pacer_retry) */
    _Atomic int sampler_active;
    uint32_t sig_mech_flags;
    uint32_t ksample;    /* enum sprof_kernel_sampling running */
    _Atomic uint64_t ktick_signals;
    _Atomic int maps_loader_wanted; /* a handler's landing in ld.so: the writer reads the maps (sprof_maps_loader) */
    _Atomic uint64_t maps_loader_due_ns; /* ... not before then (monotonic; its rate limit) */
    _Atomic uint64_t exited_user_ns, exited_sys_ns; /* raw utime / stime of threads already gone */
    uint64_t weight_written, kernel_weight_written; /* writer: sums over the samples written */
    uint64_t clock_excess_ns; /* writer: perf_event task-clock time not in the threads' CPU (perf_clock.c) */
    uint64_t walked_samples, unwalked_samples; /* writer: perf samples joined to a handler's walk, or left cut */
    uint32_t walked_threads;  /* writer: threads whose perf overflows signal them (perf_assist.c) */
    uint64_t phase_kicks;     /* writer: phase kicks its threads took (perf_phase.c) */
    _Atomic uint64_t writer_cpu_ns, sampler_cpu_ns;  /* own threads' CPU, as each last read it */
    uint64_t final_cpu_ns;                           /* the final drain's CPU (io_lock held) */
    _Atomic uint32_t problems; /* enum sprof_problem bits seen so far (STATS.problems) */
    uint32_t write_errno;      /* SPROF_PROBLEM_WRITE_FAILED: errno of the failed write */
    uint64_t file_bytes;       /* bytes of the trace written (io_lock held) */
    _Atomic int paused;        /* recording paused (record_control.c): samples are neither taken nor charged */
};

extern struct sprof_globals g_sprof SPROF_HIDDEN;
extern __thread struct sprof_thread *sprof_self
    __attribute__((tls_model("initial-exec"))) SPROF_HIDDEN;

/* A thread's POSIX timers (ptimer, ktimer) are deleted by the thread (or
 * the stop at exit) while the writer may arm or disarm them (pause,
 * resume, a signal taken): a deleted timer's id can be reused by anyone's
 * new timer, so the writer claims them first and the deleter retires them. */
enum sprof_timer_use { TIMERS_FREE = 0, TIMERS_WRITER = 1, TIMERS_RETIRED = 2 };
static inline int sprof_timers_claim(struct sprof_thread *t)
{
    int free_ = TIMERS_FREE;
    return atomic_compare_exchange_strong(&t->timer_use, &free_, TIMERS_WRITER);
}
static inline void sprof_timers_release(struct sprof_thread *t) { atomic_store(&t->timer_use, TIMERS_FREE); }
/* Before deleting them: waits out a writer that holds them (one timer_settime). */
static inline void sprof_timers_retire(struct sprof_thread *t)
{
    for (;;) {
        int u = atomic_load(&t->timer_use);
        if (u == TIMERS_RETIRED) return;
        if (u == TIMERS_FREE && atomic_compare_exchange_strong(&t->timer_use, &u, TIMERS_RETIRED)) return;
        sched_yield();
    }
}

/* time */
static inline uint64_t sprof_now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* A clock that can fail (another thread's CPU clock: the thread may be
 * gone): 0 and *ns, or -1. */
static inline int sprof_clock_ns(clockid_t c, uint64_t *ns)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) return -1;
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return 0;
}
static inline uint32_t sprof_pad8(uint32_t n) { return (n + 7u) & ~7u; }

/* The arrays after a sample record's (or a stored stack's) fixed part, as
 * trace_format.h lays them out: ret[nframes], fpoff[nframes], cand_off[ncand],
 * cand_val[ncand], each 8-byte padded. */
struct sprof_rec_arrays {
    const uint64_t *ret;
    const uint32_t *fpoff;
    const uint32_t *coff;
    const uint64_t *cval;
};
static inline struct sprof_rec_arrays sprof_rec_arrays_of(const void *body, uint32_t nframes, uint32_t ncand)
{
    struct sprof_rec_arrays a;
    const uint8_t *p = (const uint8_t *)body;
    a.ret = (const uint64_t *)(const void *)p;
    p += 8u * (size_t)nframes;
    a.fpoff = (const uint32_t *)(const void *)p;
    p += sprof_pad8(4u * nframes);
    a.coff = (const uint32_t *)(const void *)p;
    p += sprof_pad8(4u * ncand);
    a.cval = (const uint64_t *)(const void *)p;
    return a;
}

/* A byte queue buf[*head, *tail) of cap bytes, whose entries are
 * entry_len(entry) long: room for `need` more at its end, by moving what
 * is left to the front and dropping the oldest entries if need be (the
 * writer's stores of handler walks: perf_assist.c, perf_phase.c). */
static inline void sprof_queue_make_room(uint8_t *buf, uint32_t cap, uint32_t *head, uint32_t *tail, uint32_t need,
                                         uint32_t (*entry_len)(const uint8_t *))
{
    if (*tail + need <= cap) return;
    while (*head < *tail && *tail - *head + need > cap) *head += entry_len(buf + *head);
    memmove(buf, buf + *head, *tail - *head);
    *tail -= *head;
    *head = 0;
}

/* x86-64's ucontext as the kernel writes it in a signal frame: uc_flags,
 * uc_link, uc_stack (40 bytes), then the general registers in
 * <sys/ucontext.h> order. At the signal trampoline (the handler has
 * returned) sp points at it. */
enum { SPROF_UC_GREGS = 40, SPROF_UC_RBP = 10, SPROF_UC_RBX = 11, SPROF_UC_RSP = 15, SPROF_UC_RIP = 16 };

/* bound for loops over the slot table */
static inline int sprof_slots_hi(void) { return atomic_load_explicit(&g_sprof.slots_hi, memory_order_acquire); }

static inline int sprof_uses_perf(void)
{
    return g_sprof.mech == SPROF_MECH_PERF_EVENT || g_sprof.mech == SPROF_MECH_WALL_PERF;
}
static inline int sprof_is_wall(void) { return g_sprof.mech == SPROF_MECH_WALL || g_sprof.mech == SPROF_MECH_WALL_PERF; }
/* Does each thread need the signal side (handler ring, scratch, alternate stack)? */
static inline int sprof_uses_signals(void) { return !sprof_uses_perf() || g_sprof.ksample == SPROF_KSAMPLE_TICK; }

/* config.c */
SPROF_HIDDEN int sprof_config_load(struct sprof_config *c);
SPROF_HIDDEN void sprof_expand_path(const char *pattern, pid_t pid, char *out, size_t outlen);
SPROF_HIDDEN void sprof_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* strerror/strsignal for messages, safe on sprof's own threads (config.c) */
SPROF_HIDDEN const char *sprof_errno_text(int err, char *buf, size_t len);
SPROF_HIDDEN const char *sprof_signal_text(int sig, char *buf, size_t len);
/* the same, into a buffer of the calling expression's own */
#define SPROF_ERRNO_TEXT(err) sprof_errno_text((err), (char[32]){0}, 32)
#define SPROF_SIGNAL_TEXT(sig) sprof_signal_text((sig), (char[32]){0}, 32)

/* ring.c */
SPROF_HIDDEN int sprof_ring_init(struct sprof_ring *r, uint32_t cap);
SPROF_HIDDEN void sprof_ring_free(struct sprof_ring *r);
/* Reserve len bytes (multiple of 8) contiguous; NULL if full. */
SPROF_HIDDEN void *sprof_ring_reserve(struct sprof_ring *r, uint32_t len);
SPROF_HIDDEN void sprof_ring_commit(struct sprof_ring *r, uint32_t len);
/* Consumer: call fn for each record; returns records consumed. */
SPROF_HIDDEN uint64_t sprof_ring_drain(struct sprof_ring *r, void (*fn)(const void *rec, uint32_t len));
/* Consumer: how full the ring is, in 256ths of its capacity. */
SPROF_HIDDEN uint32_t sprof_ring_fill_256(const struct sprof_ring *r);
/* Consumer: fault in the pages the producer writes next (its first pass). */
SPROF_HIDDEN void sprof_ring_populate_ahead(struct sprof_ring *r);

/* exec_table.c: executable ranges, lock-free for readers. STABLE: mapped
 * from a file when the runtime started (the program, its libraries, the
 * vDSO), there until exit. VOLATILE: mapped since (dlopen, a JIT) or
 * anonymous: dlclose or munmap may take it away before the table is read
 * again, so its bytes are read only through a system call that fails
 * instead of faulting (code_read, unwind_x86_64.c). */
enum { SPROF_EXEC_NONE = 0, SPROF_EXEC_STABLE = 1, SPROF_EXEC_VOLATILE = 2 };
SPROF_HIDDEN int sprof_exec_kind(uint64_t addr);
SPROF_HIDDEN int sprof_is_exec(uint64_t addr);
/* A walker's memo of sprof_is_exec answers per page, valid for one version
 * of the table (the unwinder asks about hundreds of words per sample, most
 * on a few pages). Lives in the walker's own scratch memory; no locks. */
#define SPROF_EXEC_CACHE_SLOTS 128u
#define SPROF_TOP_MEMO_CANDS 64u
#define SPROF_TOP_MEMO_REACH 65536u /* stack words this far below the memo's sp are kept as maybe-candidates */
/* The candidate window's words above a chain's outermost record (the start
 * code's frames, argv and the environment under main's record; the thread
 * start's frames under a thread's root): the same on most samples of a
 * thread, so scanned once and then compared word by word. Holds every word
 * that could be a candidate at any sp down to SPROF_TOP_MEMO_REACH below the
 * one it was built at: 8-aligned stack addresses (kind 1; a candidate only
 * if at or above the sample's sp) and code addresses (kind 2). */
struct sprof_top_memo {
    uint64_t top;      /* the outermost record's address; 0 = empty */
    uint64_t sp, stack_hi;
    uint32_t len, n;   /* bytes of the region held (from top + 16), entries */
    uint32_t off[SPROF_TOP_MEMO_CANDS]; /* from the region's start */
    uint8_t kind[SPROF_TOP_MEMO_CANDS];
    uint64_t val[SPROF_TOP_MEMO_CANDS];
    uint8_t bytes[SPROF_CAND_WINDOW];
};
#define SPROF_FRAMED_SLOTS 64u
struct sprof_exec_cache {
    uint64_t check;                            /* gen ^ SPROF_EXEC_CACHE_MAGIC when valid */
    uint64_t tag[SPROF_EXEC_CACHE_SLOTS];      /* (page << 2 | kind) + 1; 0 = empty */
    uint64_t framed[SPROF_FRAMED_SLOTS];       /* return addresses into frame-pointer code (0 = empty) */
    uint64_t root_rec, root_ret;               /* the thread's outermost record and its return address */
    struct sprof_top_memo top;                 /* the words above the outermost record (top_region) */
};
SPROF_HIDDEN int sprof_is_exec_cached(struct sprof_exec_cache *c, uint64_t addr);
SPROF_HIDDEN int sprof_exec_kind_cached(struct sprof_exec_cache *c, uint64_t addr);
/* Return addresses whose caller keeps a frame record: the stack between the
 * record holding ret and the next one held no code address when scanned
 * (a frameless caller always leaves its own return address there). Dropped
 * whenever the executable ranges change. */
SPROF_HIDDEN int sprof_framed_known(struct sprof_exec_cache *c, uint64_t ret);
SPROF_HIDDEN void sprof_framed_note(struct sprof_exec_cache *c, uint64_t ret);
/* The thread's outermost record (its address, its return address), once a
 * scan above it found no record; dropped with the other memos. */
SPROF_HIDDEN int sprof_root_known(struct sprof_exec_cache *c, uint64_t rec, uint64_t ret);
SPROF_HIDDEN void sprof_root_note(struct sprof_exec_cache *c, uint64_t rec, uint64_t ret);
/* The memo of the words above the outermost record (valid for the current
 * table generation; empty after a change of the executable ranges). */
SPROF_HIDDEN struct sprof_top_memo *sprof_top_memo_of(struct sprof_exec_cache *c);
SPROF_HIDDEN void sprof_exec_table_publish(const uint64_t *ranges, const uint8_t *kinds, uint32_t n);

/* maps.c */
SPROF_HIDDEN int sprof_maps_scan(int emit_records); /* updates exec table; emits new MAPPINGs; new ranges */
SPROF_HIDDEN void sprof_maps_reset(void);
SPROF_HIDDEN void sprof_maps_cover(uint64_t pc); /* the maps again if pc is in no known code */
SPROF_HIDDEN void sprof_maps_loader(void);        /* the maps again for a sample in ld.so (rate-limited) */

/* unwind_x86_64.c */
struct sprof_walk_mem {
    uint64_t lo, hi;       /* readable, in-range addresses */
    const uint8_t *copy;   /* NULL: read live memory; else bytes of [lo, hi) */
    int probe;             /* live fiber stack: verify each page before reading */
    uint64_t verified_hi;  /* probe: pages below this are known readable */
    uint64_t stack_hi;     /* top of the thread's own stack (candidates into the stack) */
    struct sprof_exec_cache *xc; /* set by the walk (in the walker's scratch) */
    uint64_t thr_lo, thr_hi;     /* off-stack samples: the thread's own stack (a signal frame's
                                  * saved rsp/rbp on an alternate stack point there) */
    uint64_t root_floor;         /* the thread's root_floor (0: unknown) */
};
/* Build a SAMPLE record body (after the caller filled tid/time/weight) into rec,
 * a buffer of cap >= sprof_scratch_size(max_depth) bytes. Returns the record
 * size, or 0 if it does not fit. */
SPROF_HIDDEN uint32_t sprof_walk(struct sprof_rec_sample *rec, uint32_t cap, uint64_t pc, uint64_t sp,
                                 uint64_t fp, struct sprof_walk_mem *m, uint32_t max_depth);
/* perf_sampler.c, at start: sprof's and the executable's code ranges */
SPROF_HIDDEN void sprof_perf_locate_code(void);
/* perf: kernel chain + stack dump → the same record shape */
SPROF_HIDDEN uint32_t sprof_build_from_dump(struct sprof_rec_sample *rec, uint32_t cap, uint64_t pc,
                                            uint64_t sp, uint64_t fp, const uint64_t *kchain,
                                            uint32_t nk, int kchain_full, const uint8_t *dump,
                                            uint64_t dump_len, uint64_t stack_hi, uint64_t thr_lo,
                                            uint64_t thr_hi, uint64_t root_floor, uint32_t max_depth);
SPROF_HIDDEN uint32_t sprof_max_record_size(uint32_t max_depth);
/* signal mechanisms: a sample on an alternate signal stack gets the interrupted stack too */
SPROF_HIDDEN uint32_t sprof_add_interrupted_stack(struct sprof_rec_sample *rec, uint32_t cap,
                                                  struct sprof_walk_mem *m, uint64_t thr_lo, uint64_t thr_hi,
                                                  uint32_t max_depth);
/* rbx as a SPROF_CAND_RBX word when pc is in the dynamic linker and rbx
 * points into [sp, stack_hi): returns the new size (rec->h.size if none) */
SPROF_HIDDEN uint32_t sprof_add_rbx(struct sprof_rec_sample *rec, uint32_t cap, uint64_t rbx, uint64_t stack_hi);
/* perf_sampler.c (sprof_perf_locate_code): pc in the dynamic linker's code? */
SPROF_HIDDEN int sprof_in_dynamic_linker(uint64_t pc);
/* does the sample's stack return into the signal-return trampoline? */
SPROF_HIDDEN int sprof_rec_has_sigframe(const struct sprof_rec_sample *rec);
SPROF_HIDDEN int sprof_in_sigreturn_call(uint64_t pc);
/* perf: the signal a stack copy's innermost signal frame is for (0: none found) */
SPROF_HIDDEN int sprof_dump_signal(uint64_t sp, uint64_t fp, const uint8_t *dump, uint64_t len, uint64_t restorer);
/* buffer size sprof_walk / sprof_build_from_dump need (record + work arrays) */
SPROF_HIDDEN uint32_t sprof_scratch_size(uint32_t max_depth);
SPROF_HIDDEN void sprof_regs_from_ucontext(void *uc, uint64_t *pc, uint64_t *sp, uint64_t *fp);
SPROF_HIDDEN uint64_t sprof_rbx_from_ucontext(void *uc);
SPROF_HIDDEN int sprof_interrupted_syscall(void *uc, uint64_t pc);
SPROF_HIDDEN uint64_t sprof_syscall_reg_from_ucontext(void *uc);
SPROF_HIDDEN void sprof_syscall_reg_clear(void *uc);

/* kernel_sampler.c */
SPROF_HIDDEN uint64_t sprof_own_faults(void); /* minor + major page faults of the calling thread */
SPROF_HIDDEN int sprof_thread_user_sys(uint32_t tid, uint64_t *user_ns, uint64_t *sys_ns); /* tid 0 = self */
SPROF_HIDDEN int sprof_decode_syscall_return(const uint8_t code[9], uint64_t pc, uint64_t rcx);
/* pc just after a system call the thread entered by? nr, -1 (number not
 * known), -2 (not one); live: read the code directly (signal handler) */
SPROF_HIDDEN int sprof_syscall_return(uint64_t pc, uint64_t rcx, int live);
/* the same, or pc within SPROF_SYSCALL_SKID_BYTES of the return address rcx
 * still holds: where a timer interrupt held across the call's way out is
 * taken, for perf_event's samples (kernel_sampler.c). Not for the pacer's
 * landings: its local ones read acc_stdio's methods 1.2-3.0 pp off by cpu
 * weight with it, 0.45-1.6 without (4 runs each), the CPU of user code
 * near the clock reads' returns going with the call's */
SPROF_HIDDEN int sprof_syscall_return_near(uint64_t pc, uint64_t rcx, int live);
SPROF_HIDDEN uint32_t sprof_syscall_flags(int nr); /* KERNEL|SYSCALL|number for nr >= -1; 0 for -2 */
SPROF_HIDDEN int sprof_ktick_thread_start(struct sprof_thread *t);
/* Writer: create the timer of a thread whose start deferred it. */
SPROF_HIDDEN void sprof_ktick_attach(struct sprof_thread *t);
SPROF_HIDDEN void sprof_ktick_thread_stop(struct sprof_thread *t);
SPROF_HIDDEN void sprof_site_owe(struct sprof_thread *t, uint64_t pc, uint64_t ns, uint32_t flags);
/* the kernel time owed at exactly pc (not the pool), at most `most`; *flags = what it was */
SPROF_HIDDEN uint64_t sprof_site_take_exact(struct sprof_thread *t, uint64_t pc, uint64_t most, uint32_t *flags);
SPROF_HIDDEN uint64_t sprof_site_take(struct sprof_thread *t, uint64_t pc, uint64_t most);
SPROF_HIDDEN uint32_t sprof_ktick_classify(struct sprof_thread *t, uint64_t pc, uint64_t rcx, uint64_t *weight,
                                           int *user_mode);
/* pacer_carry.c: a system-call landing's CPU kept under its call path (1), or
 * not (0: no usable chain); what a tick user-mode landing under kept paths
 * takes; every kept path's CPU as a sample of its own (the thread's end);
 * forget all */
SPROF_HIDDEN int sprof_carry_keep(struct sprof_thread *t, const struct sprof_rec_sample *rec, uint64_t ns);
SPROF_HIDDEN void sprof_carry_keep_stack(struct sprof_thread *t, uint64_t sp, uint64_t ns, uint64_t now_ns);
SPROF_HIDDEN uint64_t sprof_carry_claim(struct sprof_thread *t, const struct sprof_rec_sample *rec);
SPROF_HIDDEN void sprof_carry_flush_all(struct sprof_thread *t, uint64_t now_ns);
SPROF_HIDDEN uint32_t sprof_carry_area_size(uint32_t max_depth); /* past the walk's scratch */
SPROF_HIDDEN void sprof_carry_reset(struct sprof_thread *t);

/* registry.c */
SPROF_HIDDEN struct sprof_thread *sprof_thread_register(uint64_t start_pc);
SPROF_HIDDEN void sprof_thread_unregister(void);
SPROF_HIDDEN int sprof_thread_rseq_cpu(struct sprof_thread *t); /* -1: not known */
SPROF_HIDDEN void sprof_thread_release(struct sprof_thread *t); /* writer: after final drain */
SPROF_HIDDEN void sprof_slots_prepare(void); /* writer: fault in the slots the next threads will claim */
SPROF_HIDDEN void sprof_thread_release_perf(struct sprof_thread *t);

/* mechanisms */
SPROF_HIDDEN size_t sprof_perf_data_pages(void); /* per-thread ring size wanted */
SPROF_HIDDEN size_t sprof_perf_data_pages_for(uint32_t stack_bytes); /* ... for that stack copy */
SPROF_HIDDEN int sprof_perf_open_ring(pid_t tid, uint32_t stack_bytes, uint64_t period, int *fd, void **base,
                                      size_t *len);
/* perf_adapt.c: the per-thread stack copy follows what the samples need */
SPROF_HIDDEN void sprof_perf_note_reach(struct sprof_thread *t, const struct sprof_rec_sample *rec);
SPROF_HIDDEN void sprof_perf_adapt(struct sprof_thread *t);
/* perf_phase.c: the samples' phase drawn afresh every few periods */
SPROF_HIDDEN uint64_t sprof_perf_phase_mean_ns(void);
SPROF_HIDDEN uint64_t sprof_perf_phase_base(uint64_t base, uint64_t k);
SPROF_HIDDEN int sprof_perf_signal_owner(int fd, pid_t tid); /* signal tid at each overflow of fd */
SPROF_HIDDEN void sprof_perf_phase_begin(struct sprof_thread *t); /* writer */
SPROF_HIDDEN void sprof_perf_phase_disable(struct sprof_thread *t);
SPROF_HIDDEN void sprof_perf_phase_close(struct sprof_thread *t);
SPROF_HIDDEN int sprof_perf_phase_signal(struct sprof_thread *t, int fd, void *uc); /* signal handler */
/* a ring record that is a phase kick's walk, its weight_ns the sampling
 * event's count at the kick: never written out as it is */
#define SPROF_SAMPLE_KICK_ENTRY (1u << 29)
SPROF_HIDDEN void sprof_perf_phase_take(struct sprof_thread *t, const void *rec, uint32_t len); /* writer */
/* Writer, before a sample whose count is `count`: the kicks before it, as
 * records of the CPU each one's restart dropped (*rec in buf, *size), one
 * per call while it returns 1 */
SPROF_HIDDEN int sprof_perf_phase_next_kick(struct sprof_thread *t, uint64_t count, void *buf, uint32_t cap,
                                            uint32_t *size, uint64_t *dropped_ns);
SPROF_HIDDEN void sprof_perf_phase_free(struct sprof_thread *t);
/* Writer: the thread's last sample written, whose count was `count`; and
 * it again, if the count is still that (NULL: not kept) */
SPROF_HIDDEN void sprof_perf_phase_note_sample(struct sprof_thread *t, const void *rec, uint32_t len, uint64_t count);
SPROF_HIDDEN const void *sprof_perf_phase_last_sample(const struct sprof_thread *t, uint64_t count, uint32_t *len);
/* perf_ktick.c: the user samples' periods scaled to the CPU less the tick's kernel time (writer) */
SPROF_HIDDEN void sprof_perf_ktick_kernel(struct sprof_thread *t, uint64_t ns);
SPROF_HIDDEN uint64_t sprof_perf_ktick_weight(struct sprof_thread *t, uint64_t period_ns, uint64_t advance_ns);
/* perf_assist.c: the live stack for the samples a copy cannot hold */
#define SPROF_SAMPLE_ASSIST_ENTRY (1u << 30) /* a ring record that is a handler's walk, never written out */
SPROF_HIDDEN int sprof_perf_assist_ready(struct sprof_thread *t);        /* writer */
SPROF_HIDDEN int sprof_perf_assist_start(struct sprof_thread *t);        /* writer, after ready */
SPROF_HIDDEN void sprof_perf_assist_stop(struct sprof_thread *t);        /* writer */
SPROF_HIDDEN int sprof_perf_assist_proven(const struct sprof_thread *t); /* writer: its walks match */
SPROF_HIDDEN void sprof_perf_assist_signal(struct sprof_thread *t, int fd, void *uc); /* handler */
SPROF_HIDDEN void sprof_perf_assist_take(struct sprof_thread *t, const void *rec, uint32_t len); /* writer */
SPROF_HIDDEN int sprof_perf_assist_wait(struct sprof_thread *t, uint64_t sample_ns, uint64_t now_ns);
SPROF_HIDDEN uint32_t sprof_perf_assist_join(struct sprof_thread *t, struct sprof_rec_sample *rec, uint32_t cap,
                                             const uint8_t *dump, uint64_t dump_len);
SPROF_HIDDEN void sprof_perf_assist_free(struct sprof_thread *t);
/* the hash of the stack bytes above sp both sides compare (FNV-1a) */
SPROF_HIDDEN uint64_t sprof_perf_assist_hash(const uint8_t *p, uint32_t n);
/* The thread's stack where the signal interrupted it (uc), walked as the
 * cpuclock handler walks, into the thread's scratch record (tid, time set;
 * the interrupted rbx after the walk where rbx, as the offline unwinder
 * wants it): its size, 0 if none. Handler only. */
SPROF_HIDDEN uint32_t sprof_signal_walk_context(struct sprof_thread *t, void *uc, int rbx);
/* Writer: the scratch record and ring that walk needs, for a thread the
 * handler walks though its samples come from perf_event: 0, or -1 if they
 * cannot be had */
SPROF_HIDDEN int sprof_signal_walk_buffers(struct sprof_thread *t);
SPROF_HIDDEN int sprof_perf_probe(void);                /* can this process use perf_event? */
SPROF_HIDDEN int sprof_perf_probe_kernel(void); /* ... and sample kernel mode with it? */
SPROF_HIDDEN int sprof_perf_thread_start(struct sprof_thread *t);
SPROF_HIDDEN void sprof_perf_thread_enable(struct sprof_thread *t);
SPROF_HIDDEN void sprof_perf_thread_stop(struct sprof_thread *t);
SPROF_HIDDEN uint64_t sprof_perf_count(struct sprof_thread *t); /* the event's count now (0 if none) */
SPROF_HIDDEN uint64_t sprof_perf_drain(struct sprof_thread *t, uint64_t now_mono);
SPROF_HIDDEN uint64_t sprof_perf_drain_ring(struct sprof_thread *t); /* the records only */
/* The next value of a xorshift64 generator (state never 0). */
static inline uint64_t sprof_xorshift64(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}
/* perf_period.c: the sample period, adjusted to the rate delivered and dithered */
#define SPROF_PERF_DITHER_SAMPLES 1024u /* samples between two changes of a thread's period */
SPROF_HIDDEN void sprof_perf_period_note_part(struct sprof_thread *t, uint64_t task_clock_ns);
SPROF_HIDDEN void sprof_perf_period_note_lost(struct sprof_thread *t, uint64_t task_clock_ns);
SPROF_HIDDEN void sprof_perf_period_note(struct sprof_thread *t, uint64_t task_clock_ns); /* per sample */
SPROF_HIDDEN void sprof_perf_period_update(struct sprof_thread *t);                      /* per drain */
SPROF_HIDDEN int32_t sprof_perf_dither_next(int32_t *pending, uint64_t random); /* ppm */
SPROF_HIDDEN uint64_t sprof_perf_dithered(uint64_t base, int32_t ppm);
SPROF_HIDDEN uint64_t sprof_perf_restart_base(uint64_t base, uint64_t window);
static inline uint64_t sprof_perf_period_now(const struct sprof_thread *t)
{
    uint64_t p = atomic_load_explicit(&t->perf_period, memory_order_relaxed);
    return p ? p : g_sprof.period_ns;
}
/* perf_clock.c: the task clock's advance over the thread's CPU clock */
SPROF_HIDDEN void sprof_perf_clock_look(struct sprof_thread *t, uint64_t now_mono);
SPROF_HIDDEN uint64_t sprof_perf_clock_scale(const struct sprof_thread *t, uint64_t task_clock_ns);
static inline void sprof_perf_clock_forget(struct sprof_thread *t) { t->clock_mark_mono = 0; }
SPROF_HIDDEN uint32_t sprof_perf_fill_256(const struct sprof_thread *t); /* as sprof_ring_fill_256 */
SPROF_HIDDEN int sprof_signal_install(void);
SPROF_HIDDEN void sprof_signal_uninstall(void);
/* Before exec: drop any pending profiling signal and give the signal back
 * its original action (the new image must not inherit either). */
SPROF_HIDDEN void sprof_signal_release_for_exec(void);
SPROF_HIDDEN int sprof_signal_thread_start(struct sprof_thread *t);
SPROF_HIDDEN void sprof_signal_thread_stop(struct sprof_thread *t);
SPROF_HIDDEN int sprof_sampler_start(void); /* pacer thread (cpuclock, wall) */
SPROF_HIDDEN void sprof_sampler_stop(void);
/* cpuclock: the pacer looks at every thread now (async-signal-safe) */
SPROF_HIDDEN void sprof_pacer_kick(void);
SPROF_HIDDEN void sprof_fatal_install(void);
/* Is the profiling signal's action still our handler? If not, note
 * SPROF_PROBLEM_SIGNAL_TAKEN (once) and return 0. 1 when no signal is used. */
SPROF_HIDDEN int sprof_signal_still_ours(void);
/* The program took the signal: disarm every timer that sends it (writer). */
SPROF_HIDDEN void sprof_signal_silence(void);

/* writer.c */
SPROF_HIDDEN int sprof_writer_open(int lazy); /* lazy: create the file at the first flush */
SPROF_HIDDEN int sprof_writer_start(void);
/* writer_place.c: the writer runs on the CPU of the thread it drains most
 * (prompt: back to its first affinity, to run soonest; late_ns: how much
 * later than asked this pass's wake came); reset for a new writer */
SPROF_HIDDEN void sprof_writer_place(int prompt, uint64_t late_ns);
SPROF_HIDDEN void sprof_writer_place_reset(void);
/* sprof's own threads (the writer, the sampler): all signals blocked, and
 * glibc's single-thread mode kept for a program that has no thread of its
 * own (host/own_threads.c). So code that runs on them must never call
 * malloc/calloc/realloc/free (map memory instead), use a FILE, take a
 * pthread mutex the program's threads also take (sprof_lock instead), or
 * call dl_iterate_phdr/dlopen/dlsym (the loader's lock is such a mutex);
 * tests/runtime's own-threads test checks it. */
SPROF_HIDDEN int sprof_own_thread_create(pthread_t *th, void *(*fn)(void *));
/* control/futex_sync.c: a futex sleep (while *word == expected, until an
 * absolute CLOCK_MONOTONIC deadline, 0: none; 0 once the deadline passed,
 * else 1: look again), its wake, and the lock the program's threads and
 * sprof's share */
SPROF_HIDDEN int sprof_futex_wait(_Atomic uint32_t *word, uint32_t expected, uint64_t deadline_ns);
SPROF_HIDDEN void sprof_futex_wake(_Atomic uint32_t *word);
SPROF_HIDDEN void sprof_lock(_Atomic uint32_t *l);
SPROF_HIDDEN void sprof_unlock(_Atomic uint32_t *l);
/* ring.c: a thread's sample ring for the configured rate */
SPROF_HIDDEN uint32_t sprof_thread_ring_bytes(void);
/* spare_pool.c */
SPROF_HIDDEN void sprof_spare_give(uint8_t *ring, uint32_t ring_cap, void *alt, size_t alt_len);
SPROF_HIDDEN uint8_t *sprof_spare_take_ring(void);
SPROF_HIDDEN void *sprof_spare_take_alt(void);
SPROF_HIDDEN void *sprof_spare_take_scratch(void);
SPROF_HIDDEN void sprof_spare_stock(void); /* writer: map what starting threads will take */
SPROF_HIDDEN uint32_t sprof_thread_scratch_bytes(void); /* registry.c */
SPROF_HIDDEN void sprof_writer_wake(void);
/* a starting thread wants the writer (attach, spares): wakes it at most once a ms */
SPROF_HIDDEN void sprof_writer_nudge(void);
SPROF_HIDDEN void sprof_writer_finish(void); /* stop thread, drain, STATS, END, close */
SPROF_HIDDEN void sprof_out_append(const void *rec, uint32_t len);
SPROF_HIDDEN void sprof_out_raw(const void *rec, uint32_t len); /* as it is, not compacted */
/* stack_table.c: SAMPLE records as STACK + SAMPLES (format 2.0) */
SPROF_HIDDEN void sprof_compact_add(const struct sprof_rec_sample *s);
SPROF_HIDDEN void sprof_compact_close(void); /* the open SAMPLES batch into the buffer */
SPROF_HIDDEN void sprof_compact_reset(void); /* a new file: no stacks, no batch */
SPROF_HIDDEN void sprof_count_sample(struct sprof_thread *t, const struct sprof_rec_sample *s); /* totals; t may be NULL */
SPROF_HIDDEN void sprof_out_flush(void);
SPROF_HIDDEN void sprof_emit_info(void);
SPROF_HIDDEN void sprof_emit_thread(uint32_t tid, uint32_t event, const char *name);
SPROF_HIDDEN uint32_t sprof_drain_all(void); /* returns the fullest ring's fill, in 256ths */
SPROF_HIDDEN int sprof_io_trylock(void);
SPROF_HIDDEN void sprof_io_lock(void);
SPROF_HIDDEN void sprof_io_unlock(void);
SPROF_HIDDEN void sprof_fatal_flush(void);
SPROF_HIDDEN void sprof_exit_flush(void);
/* Why the trace is about to end (END.reason, enum sprof_end_reason; sig for FATAL_SIGNAL). */
SPROF_HIDDEN void sprof_set_end_reason(uint32_t reason, uint32_t sig);
SPROF_HIDDEN uint32_t sprof_end_reason(void);
/* The last STATS record built (by a pass or the finish), for the exit line. */
SPROF_HIDDEN const struct sprof_rec_stats *sprof_last_stats(void);
SPROF_HIDDEN uint64_t sprof_profiled_cpu_ns(void); /* CPU of profiled threads since registration */

/* record_control.c: start paused, toggle by signal, a time window */
SPROF_HIDDEN void sprof_control_config(struct sprof_config *c); /* SPROF_START, _TOGGLE_SIGNAL, _DELAY, _DURATION */
SPROF_HIDDEN void sprof_control_start(void);  /* before sampling starts: toggle handler, paused start */
SPROF_HIDDEN void sprof_control_pass(uint64_t now_mono); /* writer, io_lock held: toggles and the window */
SPROF_HIDDEN void sprof_control_finish(void); /* io_lock held: last word on the toggle signal */
static inline int sprof_control_paused(void) { return atomic_load_explicit(&g_sprof.paused, memory_order_relaxed); }
/* CPU of the profiled threads while paused, given their CPU now (STATS.paused_cpu_ns) */
SPROF_HIDDEN uint64_t sprof_control_paused_cpu(uint64_t cpu_now);
/* Was recording resumed after this CLOCK_MONOTONIC time (so CPU before it may be paused time)? */
SPROF_HIDDEN int sprof_control_resumed_since(uint64_t mono_ns);
/* A thread's CPU between start and final that was paused (its tail leaves it out). */
SPROF_HIDDEN uint64_t sprof_control_thread_paused(const struct sprof_thread *t);
/* Signal handler: the thread's first sample after a resume starts there. */
SPROF_HIDDEN void sprof_control_handler_resume(struct sprof_thread *t);

/* rotate.c: SPROF_ROTATE, a complete trace every N seconds (or bytes) */
SPROF_HIDDEN void sprof_rotate_config(struct sprof_config *c);
SPROF_HIDDEN void sprof_rotate_first_name(void); /* start: SPROF_OUT becomes the first file's name */
SPROF_HIDDEN void sprof_rotate_pass(uint64_t now_mono); /* writer, io_lock held */
/* writer.c: close this trace (STATS, END ROTATED) and go on in a new file
 * named next_path, which starts as a trace of its own (INFO, MAPPINGs,
 * THREAD starts of the live threads; STATS counted from here). 0 if open. */
SPROF_HIDDEN int sprof_writer_rotate(const char *next_path);
/* Is path a trace this very process (same pid) wrote? */
SPROF_HIDDEN int sprof_trace_written_by_us(const char *path);

/* file_rules.c: SPROF_OUT exists and is no regular file of this user: say so (1) */
SPROF_HIDDEN int sprof_refuse_existing(const char *path);

/* fd_guard.c: the runtime's own descriptors, apart from the program's */
enum sprof_fd_kind { SPROF_FD_FILE = 0, SPROF_FD_PERF = 1 };
/* The variable holding one of the runtime's numbers may be rewritten by
 * another thread (sprof_fd_move_away): read and write it with these. */
static inline int sprof_fd_load(const int *where) { return __atomic_load_n(where, __ATOMIC_ACQUIRE); }
static inline void sprof_fd_store(int *where, int fd) { __atomic_store_n(where, fd, __ATOMIC_RELEASE); }
SPROF_HIDDEN int sprof_fd_base(void); /* lowest number the runtime moves its descriptors to */
/* Move fd high (close-on-exec), record its identity, store the number in
 * *where (the runtime variable that holds it from now on); returns it. */
SPROF_HIDDEN int sprof_fd_adopt(int fd, int *where, int kind);
SPROF_HIDDEN int sprof_fd_ours(int fd); /* does fd still hold the file adopted under that number? */
SPROF_HIDDEN int sprof_fd_checked(int *where); /* *where if still ours, else forget it (sprof_fd_lost): -1 */
SPROF_HIDDEN void sprof_fd_lost(int *where); /* forget without touching; recording stops; one warning */
SPROF_HIDDEN void sprof_fd_lost_number(int fd);
SPROF_HIDDEN void sprof_fd_close(int *where); /* close if still ours; *where = -1 */
SPROF_HIDDEN void sprof_fd_close_all(void);  /* forked child: the parent's descriptors */
SPROF_HIDDEN int sprof_fd_is_owned_number(int fd); /* fast check for the interposed calls */
SPROF_HIDDEN int sprof_fd_move_away(int fd); /* the program takes this number: ours moves */
/* our numbers in [lo, hi], the `cap` smallest, sorted */
SPROF_HIDDEN int sprof_fd_list_in(unsigned lo, unsigned hi, int *out, int cap);

/* lifecycle (init.c) */
SPROF_HIDDEN void sprof_start(void);
SPROF_HIDDEN void sprof_stop(void);
/* Called by the exec wrappers (exec_interpose.c) in the process about to exec. */
SPROF_HIDDEN void sprof_before_exec(void);
/* Called by the _exit wrappers (exit_interpose.c); async-signal-safe. */
SPROF_HIDDEN void sprof_before_exit(void);
SPROF_HIDDEN void sprof_after_fork_child(void);

/* exit_report.c: the one line on stderr at exit (async-signal-safe) */
SPROF_HIDDEN void sprof_exit_report(void);
SPROF_HIDDEN void sprof_exit_report_prepare(void); /* at start: which file stderr is */
SPROF_HIDDEN void sprof_start_report(void);        /* after start: a line only for a Go program */
SPROF_HIDDEN void sprof_report_new_problems(uint32_t bits); /* writer: at once, for a Go program */
/* exit_paths.c: 1 if the program ends through a path sprof cannot see (Go) */
SPROF_HIDDEN int sprof_exits_unseen(void);
/* writer, once a second: threads that block the profiling signal */
SPROF_HIDDEN void sprof_check_blocked_signal(void);

/* process_rule.c: which process of a tree holds the trace's name (docs/runtime.md, "Wrappers") */
/* open path, the name exists: who holds it? A wrapper ancestor's trace is
 * moved aside, or the name went meanwhile (TAKEN_OVER: the name is free now); ANCESTOR: a live ancestor
 * that did work holds it (run unprofiled, silently); OTHER: anyone else */
enum sprof_name_holder { SPROF_NAME_OTHER = 0, SPROF_NAME_TAKEN_OVER = 1, SPROF_NAME_ANCESTOR = 2 };
SPROF_HIDDEN int sprof_rule_name_held(const char *path, pid_t *holder, int *ended);
/* why this process runs unprofiled: the name exists (holder 0: not a
 * trace), holds the trace of a process that ended, or another live
 * process writes it */
SPROF_HIDDEN void sprof_rule_say_held(const char *path, pid_t holder, int ended);
/* writer.c: the comm of thread `id` of this process (thread) or of process
 * `id`, "" if unknown; async-signal-safe */
SPROF_HIDDEN void sprof_read_comm(uint32_t id, int thread, char out[16]);
/* finish, before the descriptor closes: remove an empty trace left at exec
 * or by a wrapper whose name went to a descendant; 1 = stay silent at exit */
SPROF_HIDDEN int sprof_rule_at_finish(int fd);

#endif
