/* The trace file and the writer thread. Everything that touches the file or
 * consumes a ring holds io_lock (an atomic flag, so the fatal-signal path can
 * try it without blocking). Records are appended to a buffer and written
 * whole with write(2); the buffer is flushed at the end of every drain pass
 * (at least every 100 ms), so a kill -9 loses at most one pass. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

/* the shortest interval between two reads of /proc/self/maps */
#define SPROF_MAPS_EVERY_NS 250000000ull /* and on demand: sprof_maps_cover */
#define SPROF_FLUSH_EVERY_NS 250000000ull
#define SPROF_FLUSH_BYTES (64u * 1024u)

#define OUT_BUF (1u << 20)
static uint8_t out_buf[OUT_BUF];
static uint32_t out_len;
static int write_failed;
static uint32_t end_reason = SPROF_END_EXIT, end_signal;
static struct sprof_rec_stats last_stats;
/* Where the current file's counts start: zero, or what the previous file
 * of a rotation had counted when it closed (STATS are per file). */
static struct stats_base {
    uint64_t cpu, paused, dropped, lost, own, ktick, threads;
} file_base;


void sprof_set_end_reason(uint32_t reason, uint32_t sig)
{
    end_reason = reason;
    end_signal = sig;
}

uint32_t sprof_end_reason(void) { return end_reason; }

const struct sprof_rec_stats *sprof_last_stats(void) { return &last_stats; }

static void fill_stats(struct sprof_rec_stats *s);

int sprof_io_trylock(void)
{
    int expect = 0;
    return atomic_compare_exchange_strong(&g_sprof.io_lock, &expect, 1);
}

/* Take io_lock, sleeping 200 us between tries; give up after max_waits
 * sleeps (< 0: never). 1 if taken. */
static int io_lock_waiting(int max_waits)
{
    for (int i = 0; !sprof_io_trylock(); i++) {
        if (max_waits >= 0 && i == max_waits) return 0;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    return 1;
}

void sprof_io_lock(void) { io_lock_waiting(-1); }

void sprof_io_unlock(void) { atomic_store(&g_sprof.io_lock, 0); }

/* Is the file at path a trace this very process (same pid) wrote? Before
 * exec: ours to move aside; a rotated file: ours to remove (rotate.c). */
int sprof_trace_written_by_us(const char *path)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat st;
    uint8_t b[28];
    int ours = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
               pread(fd, b, sizeof b, 0) == (ssize_t)sizeof b;
    close(fd);
    if (!ours || memcmp(b, SPROF_TRACE_MAGIC, 8) != 0) return 0;
    uint32_t type, pid;
    memcpy(&type, b + 16, 4);
    memcpy(&pid, b + 24, 4);
    return type == SPROF_REC_INFO && pid == (uint32_t)getpid();
}

/* Rename path to the first free <path>.pre-exec, <path>.pre-exec.2, ...
 * (each image of an exec chain keeps its trace), never replacing a file:
 * RENAME_NOREPLACE, or link + unlink where the filesystem lacks it.
 * 0 and the new name in `old`, or -1. */
static int move_aside(const char *path, char *old, size_t oldlen)
{
    for (int i = 1; i <= 64; i++) {
        if (i == 1) snprintf(old, oldlen, "%s.pre-exec", path);
        else snprintf(old, oldlen, "%s.pre-exec.%d", path, i);
        if (renameat2(AT_FDCWD, path, AT_FDCWD, old, RENAME_NOREPLACE) == 0) return 0;
        if (errno == EINVAL || errno == ENOSYS) {
            if (link(path, old) == 0) return unlink(path) == 0 ? 0 : -1;
        }
        if (errno != EEXIST) return -1;
    }
    return -1;
}

/* O_EXCL|O_NOFOLLOW, 0600. An existing file is replaced only with
 * SPROF_OVERWRITE=1, or moved to <path>.pre-exec when this same process
 * wrote it under its previous image (the same name across exec); a
 * wrapper ancestor's is moved aside, and a name held by an ancestor that
 * did work leaves this process unprofiled without a word (process_rule.c). */
static int open_trace_file(void)
{
    const char *path = g_sprof.cfg.out_path;
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
    int fd = open(path, flags, 0600);
    if (fd < 0 && errno == EEXIST && sprof_refuse_existing(path)) return -1; /* not a file of ours */
    int holder = SPROF_NAME_OTHER;
    pid_t holder_pid = 0;
    int holder_ended = 0;
    /* A name taken over (moved aside, or gone) can be taken by a sibling
     * between the look and the create: two programs a wrapper started
     * together both see the wrapper's trace, one renames it and creates its
     * own, and the other found the name gone and then taken. Look again,
     * at the sibling's file: the message names it. Without this, 2 runs in
     * 120 of tests/wrappers/pipeline_test.sh (3 at once) said "w.bin
     * exists" with no holder, once in a fresh-clone CI run. */
    for (int looks = 0; fd < 0 && errno == EEXIST && looks < 3; looks++) {
        holder = sprof_rule_name_held(path, &holder_pid, &holder_ended);
        if (holder == SPROF_NAME_ANCESTOR) return -1; /* a helper of a profiled program: routine */
        if (holder != SPROF_NAME_TAKEN_OVER) {
            errno = EEXIST;
            break;
        }
        fd = open(path, flags, 0600);
    }
    if (holder == SPROF_NAME_TAKEN_OVER) {
        /* taken over, or three looks lost to siblings: nothing more */
    } else if (fd < 0 && errno == EEXIST && g_sprof.cfg.overwrite) {
        if (unlink(path) == 0) fd = open(path, flags, 0600); /* a regular file or symlink of the user's */
    } else if (fd < 0 && errno == EEXIST && sprof_trace_written_by_us(path)) {
        char old[sizeof g_sprof.cfg.out_path + 24];
        if (move_aside(path, old, sizeof old) == 0) {
            sprof_warn("%s was written by this process before exec; kept as %s", path, old);
            fd = open(path, flags, 0600);
        }
        if (fd < 0) errno = EEXIST;
    }
    if (fd < 0) {
        if (errno == EEXIST)
            sprof_rule_say_held(path, holder_pid, holder_ended);
        else
            sprof_warn("cannot create %s: %s; running unprofiled", path,
                       SPROF_ERRNO_TEXT(errno));
    }
    return sprof_fd_adopt(fd, &g_sprof.fd, SPROF_FD_FILE);
}

/* A forked child creates its file at its writer's first flush, not at
 * fork: a child that exec()s right away leaves no file behind, and the
 * image it runs (same pid, same %p name) starts a clean trace of its own. */
static void ensure_open(void)
{
    if (!g_sprof.open_pending) return;
    g_sprof.open_pending = 0;
    int fd = open_trace_file();
    if (fd < 0) {
        write_failed = 1;
        atomic_store(&g_sprof.running, 0);
        return;
    }
    g_sprof.fd = fd;
}

/* The most a write may put at file offset `at` without passing
 * RLIMIT_FSIZE: the kernel would answer the write that crosses it with
 * SIGXFSZ, whose default action kills the program. */
static uint64_t room_under_fsize_limit(uint64_t at, uint64_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return want;
    if (at >= rl.rlim_cur) return 0;
    return rl.rlim_cur - at < want ? rl.rlim_cur - at : want;
}

/* Bytes ending a trace whose writes failed: a STATS naming the failure and
 * END(WRITE_FAILED). */
static uint32_t failure_tail(uint8_t *tail)
{
    struct sprof_rec_stats st;
    fill_stats(&st);
    struct sprof_rec_end end = {{SPROF_REC_END, sizeof end}, SPROF_END_WRITE_FAILED, 0};
    memcpy(tail, &st, sizeof st);
    memcpy(tail + sizeof st, &end, sizeof end);
    return (uint32_t)(sizeof st + sizeof end);
}

/* File offsets where recent flushes began: record boundaries before the
 * buffer being written, for end_after_write_failure. */
#define FLUSH_STARTS 8
static uint64_t flush_starts[FLUSH_STARTS];
static unsigned flush_count;

/* The last record boundary at or below target: a recent flush start, or a
 * record end inside the buffer being flushed (which starts at base). */
static uint64_t boundary_at_or_below(uint64_t base, uint64_t target)
{
    uint64_t b = 0;
    for (unsigned i = 0; i < FLUSH_STARTS && i < flush_count; i++)
        if (flush_starts[i] <= target && flush_starts[i] > b) b = flush_starts[i];
    uint32_t pos = base == 0 ? sizeof(struct sprof_trace_file_header) : 0;
    while (pos <= out_len && base + pos <= target) {
        b = base + pos;
        struct sprof_rec_hdr h;
        if (pos + sizeof h > out_len) break;
        memcpy(&h, out_buf + pos, sizeof h);
        if (h.size < sizeof h) break;
        pos += h.size;
    }
    return b;
}

/* A write failed (disk full, quota, file size limit) after `done` bytes of
 * this buffer, which starts at file offset `base`. So that readers learn
 * why the trace ends, cut the file back to a record boundary and put STATS
 * and END there: the last boundary where they end within what was written
 * (blocks the file has already: a full file system has room there) and
 * under the file size limit, then boundaries 4, 16 and 64 KiB further back
 * (truncating frees blocks for the tail). A 4 KiB trace on a full file
 * system ended without END when the tail was put after the last boundary,
 * past the written bytes. */
static void end_after_write_failure(uint64_t base, uint32_t done)
{
    uint8_t tail[sizeof(struct sprof_rec_stats) + sizeof(struct sprof_rec_end)];
    uint32_t tail_len = failure_tail(tail);
    uint64_t end = base + done, room_end = room_under_fsize_limit(0, end); /* min(end, the limit) */
    uint64_t fits = room_end > tail_len ? room_end - tail_len : 0; /* the tail ends at or before room_end */
    static const uint32_t back[] = {0, 4096, 16384, 65536};
    uint64_t tried = UINT64_MAX;
    for (size_t k = 0; k < sizeof back / sizeof back[0]; k++) {
        uint64_t b = boundary_at_or_below(base, fits >= back[k] ? fits - back[k] : 0);
        if (b < sizeof(struct sprof_trace_file_header) || b == tried) continue;
        tried = b;
        if (ftruncate(g_sprof.fd, (off_t)b) != 0) continue;
        if (pwrite(g_sprof.fd, tail, tail_len, (off_t)b) == (ssize_t)tail_len) {
            g_sprof.file_bytes = b + tail_len;
            return;
        }
        g_sprof.file_bytes = b;
    }
}

/* Writes the buffer as it is (an open SAMPLES batch stays open). */
static void out_write(void)
{
    ensure_open();
    if (out_len) sprof_fd_checked(&g_sprof.fd); /* still our file? else: forget it, stop */
    uint32_t off = 0;
    uint64_t base = g_sprof.file_bytes;
    if (out_len && !write_failed) flush_starts[flush_count++ % FLUSH_STARTS] = base;
    while (off < out_len && !write_failed && g_sprof.fd >= 0) {
        uint32_t want = (uint32_t)room_under_fsize_limit(base + off, out_len - off);
        ssize_t n = want ? write(g_sprof.fd, out_buf + off, want) : -1;
        if (!want) errno = EFBIG;
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            /* disk full or similar: keep the program running, stop writing,
             * and say so (exit line, STATS.problems, END) */
            write_failed = 1;
            g_sprof.write_errno = n < 0 ? (uint32_t)errno : ENOSPC;
            atomic_fetch_or(&g_sprof.problems, SPROF_PROBLEM_WRITE_FAILED);
            g_sprof.file_bytes = base + off;
            end_after_write_failure(base, off);
            break;
        }
        off += (uint32_t)n;
    }
    if (!write_failed) g_sprof.file_bytes = base + off;
    out_len = 0;
}

void sprof_out_flush(void)
{
    sprof_compact_close();
    out_write();
}

/* A record as it is: the buffer is written first when it has no room. */
void sprof_out_raw(const void *rec, uint32_t len)
{
    if (len > OUT_BUF) return;
    if (out_len + len > OUT_BUF) out_write();
    memcpy(out_buf + out_len, rec, len);
    out_len += len;
}

/* A SAMPLE goes into the file's stack table and SAMPLES batch (format 2.0,
 * stack_table.c); any other record closes the batch first, so records keep
 * their order. */
void sprof_out_append(const void *rec, uint32_t len)
{
    struct sprof_rec_hdr h;
    memcpy(&h, rec, sizeof h);
    if (len >= sizeof(struct sprof_rec_sample) && h.type == SPROF_REC_SAMPLE && h.size == len) {
        sprof_compact_add(rec);
        return;
    }
    sprof_compact_close();
    sprof_out_raw(rec, len);
}

static int rotating; /* sprof_writer_rotate is opening the next file */

int sprof_writer_open(int lazy)
{
    if (!rotating) memset(&file_base, 0, sizeof file_base);
    write_failed = 0;
    out_len = 0;
    sprof_compact_reset(); /* a new file knows no stacks */
    g_sprof.file_bytes = 0;
    g_sprof.write_errno = 0;
    flush_count = 0;
    end_reason = SPROF_END_EXIT;
    end_signal = 0;
    memset(&last_stats, 0, sizeof last_stats);
    g_sprof.fd = -1;
    g_sprof.open_pending = 0;
    if (lazy) {
        g_sprof.open_pending = 1;
    } else {
        int fd = open_trace_file();
        if (fd < 0) return -1;
        g_sprof.fd = fd;
    }
    if (!rotating) g_sprof.session = 1; /* a rotation: still the same session (read by other threads) */
    struct sprof_trace_file_header fh;
    memset(&fh, 0, sizeof fh);
    memcpy(fh.magic, SPROF_TRACE_MAGIC, 8);
    fh.version = SPROF_TRACE_VERSION;
    fh.header_size = sizeof fh;
    sprof_out_append(&fh, sizeof fh);
    return 0;
}

void sprof_emit_info(void)
{
    uint8_t rec[sizeof(struct sprof_rec_info) + 4096 + 8];
    struct sprof_rec_info *r = (struct sprof_rec_info *)rec;
    memset(rec, 0, sizeof rec);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) n = 0;
    exe[n] = 0;
    r->h.type = SPROF_REC_INFO;
    r->h.size = sprof_pad8((uint32_t)(sizeof *r + (size_t)n + 1));
    r->pid = (uint32_t)g_sprof.pid;
    r->mode = g_sprof.cfg.mode;
    r->mechanism = (uint32_t)g_sprof.mech;
    r->hz = g_sprof.cfg.hz;
    r->max_depth = g_sprof.cfg.max_depth;
#if defined(__x86_64__)
    r->arch = 62;
#elif defined(__aarch64__)
    r->arch = 183;
#endif
    r->start_monotonic_ns = g_sprof.start_mono_ns;
    r->start_realtime_ns = sprof_now_ns(CLOCK_REALTIME);
    memcpy(rec + sizeof *r, exe, (size_t)n);
    sprof_out_append(rec, r->h.size);
}

void sprof_emit_thread(uint32_t tid, uint32_t event, const char *name)
{
    uint8_t rec[sizeof(struct sprof_rec_thread) + 24];
    struct sprof_rec_thread *r = (struct sprof_rec_thread *)rec;
    memset(rec, 0, sizeof rec);
    size_t nl = strnlen(name, 15);
    r->h.type = SPROF_REC_THREAD;
    r->h.size = sprof_pad8((uint32_t)(sizeof *r + nl + 1));
    r->tid = tid;
    r->event = event;
    r->time_ns = sprof_now_ns(CLOCK_MONOTONIC);
    memcpy(rec + sizeof *r, name, nl);
    sprof_out_append(rec, r->h.size);
}

/* comm of thread `id` of ours (thread) or of process `id`, "" if unknown
 * (async-signal-safe: open/read/close) */
void sprof_read_comm(uint32_t id, int thread, char out[16])
{
    uint32_t tid = id;
    char path[48];
    strcpy(path, thread ? "/proc/self/task/" : "/proc/");
    size_t o = strlen(path);
    char digits[12];
    int nd = 0;
    do { digits[nd++] = (char)('0' + tid % 10); tid /= 10; } while (tid && nd < 11);
    while (nd) path[o++] = digits[--nd];
    memcpy(path + o, "/comm", 6);
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, out, 15);
    close(fd);
    if (n < 0) n = 0;
    out[n] = 0;
    char *nl = strchr(out, '\n');
    if (nl) *nl = 0;
}

/* thousandths of one period that weight_ns stands for, at most 1000 */
static uint64_t period_share_milli(uint64_t weight_ns)
{
    return weight_ns < g_sprof.period_ns ? weight_ns * 1000 / g_sprof.period_ns : 1000;
}

void sprof_count_sample(struct sprof_thread *t, const struct sprof_rec_sample *s)
{
    if (t) t->weight_written += s->weight_ns;
    if (s->flags & SPROF_SAMPLE_TRUNCATED) g_sprof.samples_truncated++;
    if (!(s->flags & SPROF_SAMPLE_THREAD_TAIL)) {
        g_sprof.samples_written++;
        /* The delivered rate counts draws at the asked resolution. A
         * PARTIAL sample holds part of a period (its other part is in a
         * kernel-tick sample, which counts one), the CPU of draws kept at
         * system-call returns, or (2.8) the time of a system call that
         * held the pacer's signal, every draw in which would have found
         * that stack: it counts its weight's share of a period, as readers
         * count it. Counting it whole read 117 % delivered for a program
         * in the kernel 70 % of its time under cpuclock; at most one, the
         * draws a system call held were neither counted nor lost. */
        int partial = (s->flags & SPROF_SAMPLE_PARTIAL) && g_sprof.period_ns;
        g_sprof.periods_milli += partial ? s->weight_ns * 1000 / g_sprof.period_ns : 1000;
    } else if (g_sprof.period_ns) {
        /* A thread's tail is the part of a period no draw could take (the
         * thread ended first): a period's share, as a perfect sampler would
         * have it; more than a period is draws missed, and not counted.
         * (3,200 threads of 100 us at 4 kHz: 59.6 % delivered without it.) */
        g_sprof.periods_milli += period_share_milli(s->weight_ns);
    }
    g_sprof.weight_written += s->weight_ns;
    if (s->flags & SPROF_SAMPLE_KERNEL) g_sprof.kernel_weight_written += s->weight_ns;
}

/* the slot whose ring sprof_ring_drain is emptying (NULL: the aux ring) */
static struct sprof_thread *draining;

/* perf_event's user samples with the tick's kernel samples beside them in
 * the thread's ring (perf_ktick.c) */
static int perf_with_tick(void)
{
    return g_sprof.ksample == SPROF_KSAMPLE_TICK && sprof_uses_perf();
}

static void append_sample(const void *rec, uint32_t len)
{
    const struct sprof_rec_sample *r = rec;
    if (draining && len >= sizeof *r && r->h.type == SPROF_REC_SAMPLE && (r->flags & SPROF_SAMPLE_ASSIST_ENTRY)) {
        sprof_perf_assist_take(draining, rec, len); /* a walk for a perf sample, not a sample */
        return;
    }
    if (draining && len >= sizeof *r && r->h.type == SPROF_REC_SAMPLE && (r->flags & SPROF_SAMPLE_KICK_ENTRY)) {
        sprof_perf_phase_take(draining, rec, len); /* a phase kick's walk: a sample once its count is placed */
        return;
    }
    if (len >= sizeof *r && r->h.type == SPROF_REC_SAMPLE) {
        sprof_maps_cover(r->pc);
        /* not in perf_event's user samples too (perf_ktick.c) */
        if (draining && (r->flags & SPROF_SAMPLE_KERNEL) && perf_with_tick())
            sprof_perf_ktick_kernel(draining, r->weight_ns);
    }
    sprof_count_sample(draining, rec);
    sprof_out_append(rec, len);
}

/* CPU of a thread that no sample stands for, charged to its start routine
 * as a one-frame THREAD_TAIL sample. */
static void emit_start_routine(struct sprof_thread *t, uint64_t w)
{
    struct sprof_rec_sample s;
    memset(&s, 0, sizeof s);
    s.h.type = SPROF_REC_SAMPLE;
    s.h.size = sizeof s;
    s.tid = t->tid;
    s.flags = SPROF_SAMPLE_THREAD_TAIL;
    s.fp0_off = SPROF_FPOFF_UNKNOWN;
    s.time_ns = sprof_now_ns(CLOCK_MONOTONIC);
    s.weight_ns = w;
    s.pc = t->start_pc;
    sprof_count_sample(t, &s);
    sprof_out_append(&s, sizeof s);
}

/* A thread ended: the CPU it ran after its last sample would be in no
 * sample (all of it, for a thread shorter than one period, or one that
 * ended before the writer opened its perf event). Charge it to the
 * thread's start routine, never more than the thread's CPU that no sample
 * stands for yet. */
static void emit_thread_tail(struct sprof_thread *t)
{
    if (!t->start_pc || g_sprof.cfg.mode != SPROF_MODE_CPU) return;
    uint64_t profiled = t->final_cpu_ns > t->cpu_start_ns ? t->final_cpu_ns - t->cpu_start_ns : 0;
    uint64_t paused = sprof_control_thread_paused(t); /* CPU no sample was to stand for */
    profiled = profiled > paused ? profiled - paused : 0;
    uint64_t unsampled = profiled > t->weight_written ? profiled - t->weight_written : 0;
    uint64_t tail = t->tail_cpu_ns;
    if (g_sprof.mech == SPROF_MECH_PERF_EVENT && (t->perf_fd < 0 || t->attach_unknown))
        tail = unsampled;
    else if (g_sprof.mech == SPROF_MECH_PERF_EVENT) /* the event's count since the last sample, in CPU time */
        tail = t->perf_final_count > t->perf_last_count
                   ? sprof_perf_clock_scale(t, t->perf_final_count - t->perf_last_count)
                   : 0;
    uint64_t w = tail < unsampled ? tail : unsampled;
    if (w) emit_start_routine(t, w);
}

/* THREAD start (first sight of a slot) or NAME (its name changed). */
static void announce_thread(struct sprof_thread *t, int active, uint64_t now)
{
    if (t->start_sent && !(active && now >= t->name_check_ns)) return;
    char name[16];
    sprof_read_comm(t->tid, 1, name);
    if (!name[0] && !active) memcpy(name, t->exit_name, sizeof name); /* gone before it was seen */
    if (!t->start_sent) {
        sprof_emit_thread(t->tid, SPROF_THREAD_START, name);
        memcpy(t->name, name, sizeof name);
        t->start_sent = 1;
    } else if (name[0] && strcmp(name, t->name) != 0) {
        sprof_emit_thread(t->tid, SPROF_THREAD_NAME, name);
        memcpy(t->name, name, sizeof name);
    }
    t->name_check_ns = now + 500000000ull;
}

/* The CPU a thread ran before its event was enabled: its CPU clock now
 * minus the event's count. 0 and attach_unknown set if the thread is gone. */
static uint64_t cpu_before_event(struct sprof_thread *t)
{
    uint64_t cpu;
    if (sprof_clock_ns(t->cpuclock, &cpu) != 0) {
        t->attach_unknown = 1;
        return 0;
    }
    uint64_t since_enable = sprof_perf_count(t);
    uint64_t ran = cpu > t->cpu_start_ns ? cpu - t->cpu_start_ns : 0;
    return ran > since_enable ? ran - since_enable : 0;
}

/* perf_event: open the events of the threads the program started (they
 * wait in ATTACH_PENDING), and make the tick sampler's timers, so that
 * neither is set up on the program's CPU. What a thread ran before its
 * event was enabled is charged to its start routine right away. A thread
 * that ends meanwhile does not wait: the writer stops the event it opened,
 * and the thread's whole unsampled CPU becomes its tail. io_lock is held. */
static void attach_pending_threads(void)
{
    if (!atomic_exchange(&g_sprof.attach_wanted, 0)) return;
    static int warned;
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE) continue;
        sprof_ktick_attach(t); /* the tick kernel sampler's timer, deferred the same way */
        int a = ATTACH_PENDING;
        if (!atomic_compare_exchange_strong(&t->attach, &a, ATTACH_BUSY)) continue;
        int ok = sprof_perf_thread_start(t) == 0;
        int err = errno;
        int paused = sprof_control_paused(); /* the resume enables it */
        if (ok && !paused) sprof_perf_thread_enable(t);
        a = ATTACH_BUSY;
        if (!atomic_compare_exchange_strong(&t->attach, &a, ATTACH_DONE)) { /* the thread ended */
            t->attach_unknown = 1;
            if (ok) {
                sprof_perf_thread_stop(t);
                t->perf_final_count = sprof_perf_count(t);
            }
            continue;
        }
        if (!ok) {
            t->attach_unknown = 1;
            if (!warned++)
                sprof_warn("thread %u: perf_event could not be opened (%s); its CPU is charged to its start routine",
                           t->tid, SPROF_ERRNO_TEXT(err));
            continue;
        }
        /* CPU before the event: none of it is charged when some of it may
         * have run while recording was paused */
        uint64_t before = paused || sprof_control_resumed_since(t->start_ns) ? 0 : cpu_before_event(t);
        if (before && g_sprof.cfg.mode == SPROF_MODE_CPU) {
            announce_thread(t, 1, now);
            emit_start_routine(t, before);
        }
    }
}

/* Raw (tick-charged) user and system CPU of the profiled threads since they
 * registered, scaled so they add up to the precise total `cpu` (as the
 * kernel's own getrusage does). */
static void profiled_user_sys(uint64_t cpu, uint64_t *user, uint64_t *sys)
{
    uint64_t u = atomic_load(&g_sprof.exited_user_ns), s = atomic_load(&g_sprof.exited_sys_ns);
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        int st = atomic_load(&t->state);
        uint64_t tu, ts;
        if (st == SLOT_EXITED) {
            tu = t->user_final_ns;
            ts = t->sys_final_ns;
        } else if (st != SLOT_ACTIVE || sprof_thread_user_sys(t->tid, &tu, &ts) != 0) {
            continue;
        }
        u += tu > t->user_start_ns ? tu - t->user_start_ns : 0;
        s += ts > t->sys_start_ns ? ts - t->sys_start_ns : 0;
    }
    if (u + s == 0) {
        *user = *sys = 0;
        return;
    }
    *sys = (uint64_t)((double)cpu * (double)s / (double)(u + s));
    *user = cpu - *sys;
}

uint64_t sprof_profiled_cpu_ns(void)
{
    uint64_t cpu = atomic_load(&g_sprof.exited_cpu_ns);
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        int st = atomic_load(&t->state);
        if (st == SLOT_EXITED) {
            cpu += t->final_cpu_ns - t->cpu_start_ns;
        } else if (st == SLOT_ACTIVE) {
            uint64_t now_cpu;
            if (sprof_clock_ns(t->cpuclock, &now_cpu) == 0 && now_cpu > t->cpu_start_ns)
                cpu += now_cpu - t->cpu_start_ns;
        }
    }
    return cpu;
}

/* The process-wide totals the per-file STATS are taken from. */
static void count_totals(struct stats_base *b)
{
    uint64_t dropped = g_sprof.dropped_released + atomic_load(&g_sprof.aux_dropped);
    uint64_t lost = g_sprof.lost_released + atomic_load(&g_sprof.unregistered_signals);
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        int st = atomic_load(&t->state);
        if (st != SLOT_ACTIVE && st != SLOT_EXITED) continue;
        dropped += atomic_load(&t->dropped);
        lost += atomic_load(&t->lost);
    }
    /* after the stop, the final drain's own CPU is not profiled time */
    uint64_t stopped = atomic_load(&g_sprof.stop_cpu_ns);
    b->cpu = stopped ? stopped : sprof_profiled_cpu_ns();
    b->paused = sprof_control_paused_cpu(b->cpu);
    b->dropped = dropped;
    b->lost = lost;
    b->own = atomic_load(&g_sprof.writer_cpu_ns) + atomic_load(&g_sprof.sampler_cpu_ns) + g_sprof.final_cpu_ns;
    b->ktick = atomic_load(&g_sprof.ktick_signals);
    b->threads = atomic_load(&g_sprof.threads_seen);
}

static uint64_t since(uint64_t now, uint64_t base) { return now > base ? now - base : 0; }

static void fill_stats(struct sprof_rec_stats *out)
{
    struct sprof_rec_stats s;
    memset(&s, 0, sizeof s);
    s.h.type = SPROF_REC_STATS;
    s.h.size = sizeof s;
    struct stats_base now;
    count_totals(&now);
    /* CPU run while recording was paused is no profiled time (format 1.4) */
    s.paused_cpu_ns = since(now.paused, file_base.paused);
    uint64_t cpu = since(since(now.cpu, file_base.cpu), s.paused_cpu_ns);
    s.samples_written = g_sprof.samples_written;
    s.samples_dropped = since(now.dropped, file_base.dropped);
    s.samples_truncated = g_sprof.samples_truncated;
    s.signals_lost = since(now.lost, file_base.lost);
    s.cpu_ns_total = cpu;
    if (sprof_is_wall()) {
        /* wall mode: samples per wall second, summed over threads */
        uint64_t wall = sprof_now_ns(CLOCK_MONOTONIC) - g_sprof.start_mono_ns;
        s.achieved_millihz = wall ? (uint64_t)((double)s.samples_written * 1e12 / (double)wall) : 0;
    } else {
        s.achieved_millihz = cpu ? (uint64_t)((double)g_sprof.periods_milli * 1e9 / (double)cpu) : 0;
    }
    /* a rotated file: the threads alive at its start and those started since */
    s.threads_seen = since(now.threads, file_base.threads);
    profiled_user_sys(cpu, &s.user_cpu_ns, &s.system_cpu_ns);
    s.weight_ns_total = g_sprof.weight_written;
    s.kernel_weight_ns = g_sprof.kernel_weight_written;
    s.kernel_sampling = g_sprof.ksample;
    /* the pacer's own landings sample kernel mode at the asked rate where
     * they are local: said when nearly all were (a real-time thread, or a
     * cpuset the pacer cannot move in, gets remote signals and the tick) */
    uint64_t landings = atomic_load(&g_sprof.pacer_landings), local = atomic_load(&g_sprof.pacer_local_landings);
    if (g_sprof.ksample == SPROF_KSAMPLE_TICK && g_sprof.mech == SPROF_MECH_CPUCLOCK_PACED &&
        atomic_load(&g_sprof.pacer_local_ok) && local * 10 >= landings * 9)
        s.kernel_sampling = SPROF_KSAMPLE_PACER;
    if (g_sprof.ksample == SPROF_KSAMPLE_TICK && cpu)
        s.kernel_hz = (uint32_t)((double)since(now.ktick, file_base.ktick) * 1e9 / (double)cpu + 0.5);
    s.own_cpu_ns = since(now.own, file_base.own);
    s.clock_excess_ns = g_sprof.clock_excess_ns;
    s.walked_samples = g_sprof.walked_samples;
    s.unwalked_samples = g_sprof.unwalked_samples;
    s.walked_threads = g_sprof.walked_threads;
    s.phase_kicks = g_sprof.phase_kicks < UINT32_MAX ? (uint32_t)g_sprof.phase_kicks : UINT32_MAX;
    s.problems = atomic_load(&g_sprof.problems);
    s.write_errno = g_sprof.write_errno;
    *out = s;
    last_stats = s;
}

static void emit_stats(void)
{
    struct sprof_rec_stats s;
    fill_stats(&s);
    sprof_out_append(&s, sizeof s);
}

/* One pass over every slot: START/NAME records, samples, EXIT + release.
 * Returns how full the fullest ring was, in 256ths of its capacity. */
uint32_t sprof_drain_all(void)
{
    uint32_t max_fill = 0, fill;
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        int st = atomic_load_explicit(&t->state, memory_order_acquire);
        if (st != SLOT_ACTIVE && st != SLOT_EXITED) continue;
        announce_thread(t, st == SLOT_ACTIVE, now);
        fill = 0;
        /* the ring first where perf samples depend on it: the walks they
         * join, the phase kicks between them (perf_phase.c), the kernel
         * time the tick recorded (perf_ktick.c) */
        if (t->ring.buf && (t->assist || t->kicks || perf_with_tick())) {
            draining = t;
            sprof_ring_drain(&t->ring, append_sample);
            draining = NULL;
        }
        if (sprof_uses_perf()) {
            fill = sprof_perf_fill_256(t);
            sprof_perf_drain(t, now);
        }
        if (t->ring.buf) {
            uint32_t f = sprof_ring_fill_256(&t->ring);
            if (f > fill) fill = f;
            draining = t;
            sprof_ring_drain(&t->ring, append_sample);
            draining = NULL;
            if (st == SLOT_ACTIVE) sprof_ring_populate_ahead(&t->ring);
        }
        if (fill > max_fill) max_fill = fill;
        if (st == SLOT_EXITED) {
            emit_thread_tail(t);
            sprof_emit_thread(t->tid, SPROF_THREAD_EXIT, t->name);
            sprof_thread_release(t);
        }
    }
    if (g_sprof.aux_ring.buf) {
        fill = sprof_ring_fill_256(&g_sprof.aux_ring);
        if (fill > max_fill) max_fill = fill;
        sprof_ring_drain(&g_sprof.aux_ring, append_sample);
    }
    return max_fill;
}

/* The first guess at the pass period, from a typical sample size; the
 * writer then adapts it to how full the rings actually get. */
static uint64_t writer_period_ns(void)
{
    /* keep each ring at most ~1/5 full between passes; 5..100 ms. A signal
     * ring is sized for 4 KiB samples (deep stacks), and so is the period:
     * sized for typical ~400-byte ones, the first passes of a deep program
     * came after its ring was full (6-8 % of the samples dropped at 10 kHz) */
    uint64_t per_sample = sprof_uses_perf() ? g_sprof.cfg.perf_stack + 300u : 4096;
    uint64_t ring = sprof_uses_perf() ? sprof_perf_data_pages() * 4096 : sprof_thread_ring_bytes();
    /* a fifth: adapt_period halves the period at a quarter, and a ring
     * filled to the guess, a quarter, was halved at once (36 passes a
     * second at 1 kHz instead of 18, each a wake-up and a write) */
    uint64_t ns = ring * 1000000000ull / 5 / (per_sample * g_sprof.cfg.hz);
    if (ns < 5000000ull) ns = 5000000ull;
    if (ns > 100000000ull) ns = 100000000ull;
    return ns;
}

/* The writer sleeps on a futex word that every wake-up request bumps, so a
 * stop wakes it at once (exit is not delayed by up to a period). Not a
 * pthread condition variable: its mutex would be shared with the program's
 * threads (see control/futex_sync.c). */
static _Atomic uint32_t wake_seq;

static void writer_sleep_until(uint64_t t)
{
    for (;;) {
        uint32_t seq = atomic_load(&wake_seq); /* before the checks: no wake-up is lost */
        if (atomic_load(&g_sprof.stopping) || atomic_load(&g_sprof.attach_wanted) ||
            atomic_load(&g_sprof.spares_wanted) || sprof_now_ns(CLOCK_MONOTONIC) >= t)
            return;
        if (!sprof_futex_wait(&wake_seq, seq, t)) return;
    }
}

/* A new thread waits for its perf event (attach_wanted is set). Before
 * the writer runs this wakes nobody; its first sleep sees the flag. */
void sprof_writer_wake(void)
{
    atomic_fetch_add(&wake_seq, 1);
    sprof_futex_wake(&wake_seq);
}

/* Until t the writer looks for new threads every ms by itself: a thread
 * that starts meanwhile need not wake it. A wake is dear (a futex wake of
 * a thread asleep on another CPU: ~50 us of the waker's CPU on a PVM
 * guest, where a bare thread start costs ~5 us); only the first thread of
 * a burst pays it. */
static void writer_polls_until(uint64_t t)
{
    uint64_t at = atomic_load(&g_sprof.attach_wake_ns);
    while (at < t && !atomic_compare_exchange_weak(&g_sprof.attach_wake_ns, &at, t)) {
    }
}

void sprof_writer_nudge(void)
{
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC), at = atomic_load(&g_sprof.attach_wake_ns);
    if (now >= at && atomic_compare_exchange_strong(&g_sprof.attach_wake_ns, &at, now + SPROF_ATTACH_POLL_NS))
        sprof_writer_wake();
}

/* Samples can be far larger than the first guess (deep stacks: ~3 KiB at
 * the 256-frame cap), and a full ring drops them: a pass that found a ring
 * over 1/4 full halves the period (down to 1 ms); one under 1/8 doubles it
 * back towards the first guess (under 1/16 before: one late pass at the
 * first guess's ~1/5 halved the period for good, 31 passes a second at
 * 1 kHz instead of 21). */
enum { WRITER_EARLY_NS = 50 * 1000 * 1000 }; /* the start, when the passes keep the first period */

static uint64_t adapt_period(uint64_t period, uint64_t base, uint32_t fill_256)
{
    if (fill_256 > 256 / 4 && period / 2 >= 1000000ull) return period / 2;
    if (fill_256 < 256 / 8 && period < base) return period * 2 < base ? period * 2 : base;
    return period;
}

static void *writer_main(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "sprof-writer");
    sprof_writer_place_reset();
    const uint64_t base_period = writer_period_ns();
    /* the first passes soon (the period then doubles towards the first
     * guess while the rings stay nearly empty): a thread whose samples need
     * a larger stack copy gets it early (perf_adapt.c) */
    const uint64_t first_period = base_period < 2000000ull ? base_period : 2000000ull;
    uint64_t period = first_period;
    uint64_t next = sprof_now_ns(CLOCK_MONOTONIC);
    /* ... and all of them soon while the program starts: a program that
     * recurses deep only after the first pass had its copies cut until the
     * next, the period doubled each time (passes at 2, 6, 14, 30 ms: 59
     * samples of a deep recursion cut in an ASan CI run, 18 in a plain one) */
    const uint64_t early_until = next + WRITER_EARLY_NS;
    uint64_t next_stats = next + 1000000000ull, next_maps = next + SPROF_MAPS_EVERY_NS;
    next += period;
    uint64_t attach_poll_until = 0; /* look for new threads every ms until then */
    uint64_t flushed = 0;            /* when the file was last written */
    uint32_t problems_written = 0;
    while (!atomic_load(&g_sprof.stopping)) {
        uint64_t wake_at = next, now = sprof_now_ns(CLOCK_MONOTONIC);
        if (attach_poll_until > now && now + SPROF_ATTACH_POLL_NS < wake_at) wake_at = now + SPROF_ATTACH_POLL_NS;
        writer_sleep_until(wake_at);
        if (atomic_load(&g_sprof.stopping)) break;
        now = sprof_now_ns(CLOCK_MONOTONIC);
        int spares = atomic_exchange(&g_sprof.spares_wanted, 0);
        if (atomic_load(&g_sprof.attach_wanted)) {
            sprof_io_lock();
            attach_pending_threads();
            sprof_io_unlock();
            attach_poll_until = now + 10 * SPROF_ATTACH_POLL_NS;
        }
        /* threads are starting: look again every ms while they do */
        if (spares) attach_poll_until = now + 10 * SPROF_ATTACH_POLL_NS;
        if (attach_poll_until > now) writer_polls_until(attach_poll_until);
        sprof_spare_stock();
        sprof_slots_prepare();
        if (atomic_exchange_explicit(&g_sprof.maps_loader_wanted, 0, memory_order_relaxed)) {
            sprof_io_lock();
            sprof_maps_loader(); /* a landing in ld.so: it may be loading a library */
            sprof_io_unlock();
        }
        if (now < next) continue; /* woken early, for an attach or ld.so only */
        next += period;
        if (next < now) next = now;
        sprof_io_lock();
        sprof_control_pass(now);
        sprof_rotate_pass(now);
        if (now >= next_maps) {
            /* /proc/self/maps again (libraries loaded or unloaded, code
             * mapped): every 250 ms, less often where reading it costs
             * more, so that it takes at most 0.1 % of a CPU; a sample in
             * code the table does not know has it read at once
             * (sprof_maps_cover). Not dl_iterate_phdr's load counters:
             * the loader's lock is a pthread mutex (see
             * sprof_own_thread_create). */
            uint64_t c0 = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
            sprof_maps_scan(1);
            uint64_t took = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID) - c0; /* CPU: waiting for one is no cost */
            next_maps = now + (took * 1000u > SPROF_MAPS_EVERY_NS ? took * 1000u : SPROF_MAPS_EVERY_NS);
        }
        period = adapt_period(period, base_period, sprof_drain_all());
        if (now < early_until && period > first_period) period = first_period;
        uint64_t hint = atomic_exchange(&g_sprof.writer_period_hint, 0);
        if (hint && hint < period) {
            period = hint; /* a larger stack copy (perf_adapt.c) */
            next = now + period;
        }
        /* beside the program only in its steady rhythm: while it must be
         * prompt (threads starting, its first passes, a ring filling up, a
         * stack copy to grow) it runs wherever it can run soonest */
        sprof_writer_place(attach_poll_until > now || period < base_period, now > wake_at ? now - wake_at : 0);
        /* a program that took the signal: stop sending it at once (one
         * sigaction call a pass); one that blocks it: say so */
        if (!sprof_signal_still_ours()) sprof_signal_silence();
        if (now >= next_stats) sprof_check_blocked_signal();
        /* a new problem goes into the trace in this pass: a program that
         * ends unseen (Go) leaves the trace without the final STATS */
        uint32_t problems = atomic_load(&g_sprof.problems);
        if (problems != problems_written) {
            sprof_report_new_problems(problems & ~problems_written);
            problems_written = problems;
            next_stats = now;
        }
        int stats = now >= next_stats;
        if (stats) {
            atomic_store(&g_sprof.writer_cpu_ns, sprof_now_ns(CLOCK_THREAD_CPUTIME_ID));
            emit_stats();
            next_stats = now + 1000000000ull;
        }
        /* The file is written every 250 ms, or once 64 KiB wait, not on
         * every pass: a write (with its checks that the descriptor and the
         * size limit are still as they were) cost ~30 us here, ~1 us of
         * each sample at 1 kHz. STATS (once a second, or a new problem)
         * and a size-rotated trace are written at once. A program that
         * ends without exit handlers (a raw exit_group) loses at most the
         * samples since. */
        if (stats || g_sprof.cfg.rotate_bytes || out_len >= SPROF_FLUSH_BYTES || now >= flushed + SPROF_FLUSH_EVERY_NS) {
            sprof_out_flush();
            flushed = now;
        }
        sprof_io_unlock();
    }
    atomic_store(&g_sprof.writer_cpu_ns, sprof_now_ns(CLOCK_THREAD_CPUTIME_ID));
    return NULL;
}

int sprof_writer_start(void)
{
    if (sprof_own_thread_create(&g_sprof.writer_tid, writer_main) != 0) return -1;
    g_sprof.writer_started = 1;
    return 0;
}

static void write_end(void)
{
    struct sprof_rec_end end = {{SPROF_REC_END, sizeof end}, end_reason, end_signal};
    sprof_out_append(&end, sizeof end);
    sprof_out_flush();
}

int sprof_writer_rotate(const char *next_path)
{
    sprof_drain_all();
    atomic_store(&g_sprof.writer_cpu_ns, sprof_now_ns(CLOCK_THREAD_CPUTIME_ID)); /* called by the writer */
    end_reason = SPROF_END_ROTATED;
    emit_stats();
    write_end();
    sprof_fd_close(&g_sprof.fd);
    /* the next file counts from here; the live threads are announced again */
    count_totals(&file_base);
    uint64_t live = 0;
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        int st = atomic_load(&t->state);
        if (st == SLOT_ACTIVE || st == SLOT_EXITED) {
            t->start_sent = 0;
            live++;
        }
    }
    file_base.threads = file_base.threads > live ? file_base.threads - live : 0;
    g_sprof.samples_written = g_sprof.samples_truncated = g_sprof.periods_milli = 0;
    g_sprof.weight_written = g_sprof.kernel_weight_written = g_sprof.clock_excess_ns = 0;
    g_sprof.walked_samples = g_sprof.unwalked_samples = 0;
    g_sprof.start_mono_ns = sprof_now_ns(CLOCK_MONOTONIC);
    snprintf(g_sprof.cfg.out_path, sizeof g_sprof.cfg.out_path, "%s", next_path);
    rotating = 1;
    int rc = sprof_writer_open(0);
    rotating = 0;
    if (rc != 0) { /* warned; record nothing more (fd stays -1: nothing is written) */
        atomic_store(&g_sprof.running, 0);
        return -1;
    }
    sprof_emit_info();
    sprof_maps_reset();
    sprof_maps_scan(1);
    sprof_drain_all(); /* THREAD starts (and what came meanwhile) */
    sprof_out_flush();
    return 0;
}

/* The end of a trace: drain, STATS, END, close. io_lock is held. The
 * normal stop releases it after; the fatal and _exit paths keep it held,
 * since the process is about to end and the writer thread must not touch
 * the closed fd meanwhile. */
static void finish_locked(void)
{
    uint64_t t0 = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID);
    sprof_drain_all();
    g_sprof.final_cpu_ns = sprof_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    if (!sprof_signal_still_ours()) sprof_signal_silence();
    sprof_check_blocked_signal();
    sprof_control_finish();
    emit_stats();
    write_end();
    int silent = g_sprof.fd < 0 || sprof_rule_at_finish(g_sprof.fd);
    sprof_fd_close(&g_sprof.fd);
    g_sprof.session = 0;
    if (!silent && end_reason != SPROF_END_EXEC) sprof_exit_report();
}

void sprof_writer_finish(void)
{
    if (g_sprof.writer_started) {
        atomic_store(&g_sprof.stopping, 1);
        sprof_writer_wake();
        pthread_join(g_sprof.writer_tid, NULL);
        g_sprof.writer_started = 0;
    }
    if (!g_sprof.session) return;
    sprof_io_lock();
    sprof_maps_scan(1); /* a library loaded since the writer's last read */
    finish_locked();
    sprof_io_unlock();
}

/* Fatal signal path: only if nobody holds the file, drain what is there. */
void sprof_fatal_flush(void)
{
    if (!g_sprof.session || !sprof_io_trylock()) return;
    finish_locked();
}

/* _exit path: the writer thread may be mid-pass; wait for it, but at most
 * 100 ms (the caller may be a signal handler that interrupted the holder). */
void sprof_exit_flush(void)
{
    if (!g_sprof.session || !io_lock_waiting(500)) return;
    finish_locked();
}
