/* The one line on stderr when a trace ends (docs/runtime.md, "The exit
 * line"): where the trace is, samples, delivered rate, mechanism, size, and
 * whatever went wrong. It can be printed from a fatal-signal handler or
 * _exit, so it is built without stdio or malloc and written with one
 * write(2). Also the writer's periodic check for a blocked signal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

struct line {
    char buf[1024];
    size_t len;
};

static void put(struct line *l, const char *s)
{
    while (*s && l->len < sizeof l->buf - 1) l->buf[l->len++] = *s++;
}

static void put_u64(struct line *l, uint64_t v)
{
    char d[24];
    int n = 0;
    do { d[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n && l->len < sizeof l->buf - 1) l->buf[l->len++] = d[--n];
}

/* v / unit with one decimal */
static void put_tenths(struct line *l, uint64_t v, uint64_t unit)
{
    uint64_t tenths = (v * 10 + unit / 2) / unit;
    put_u64(l, tenths / 10);
    char dot[3] = {'.', (char)('0' + tenths % 10), 0};
    put(l, dot);
}

static void put_size(struct line *l, uint64_t bytes)
{
    if (bytes < 10 * 1024) {
        put_u64(l, bytes);
        put(l, " bytes");
    } else if (bytes < 10 * 1024 * 1024) {
        put_tenths(l, bytes, 1024);
        put(l, " KiB");
    } else {
        put_tenths(l, bytes, 1024 * 1024);
        put(l, " MiB");
    }
}

static const char *mechanism_name(int mech)
{
    switch (mech) {
    case SPROF_MECH_PERF_EVENT: return "perf_event";
    case SPROF_MECH_CPUCLOCK_PACED: return "cpuclock";
    case SPROF_MECH_POSIX_TIMER: return "posix_timer";
    case SPROF_MECH_ITIMER: return "itimer";
    case SPROF_MECH_WALL: return "wall";
    case SPROF_MECH_WALL_PERF: return "wall_perf";
    default: return "none";
    }
}

static void put_write_failure(struct line *l)
{
    put(l, "; WRITE FAILED: ");
    switch (g_sprof.write_errno) {
    case ENOSPC: put(l, "disk full (ENOSPC)"); break;
    case EDQUOT: put(l, "disk quota exceeded (EDQUOT)"); break;
    case EFBIG: put(l, "file size limit reached (EFBIG, ulimit -f)"); break;
    default:
        put(l, "errno ");
        put_u64(l, g_sprof.write_errno);
    }
    if (g_sprof.file_bytes == 0) {
        put(l, ", nothing recorded: the file is empty");
    } else {
        put(l, ", the trace ends after ");
        put_size(l, g_sprof.file_bytes);
        put(l, "; later samples are lost");
    }
}

/* Why a run has no samples, when no problem above explains it. */
static void put_no_samples(struct line *l, const struct sprof_rec_stats *st, uint32_t problems)
{
    put(l, "; NO SAMPLES: ");
    if (problems & (SPROF_PROBLEM_SIGNAL_TAKEN | SPROF_PROBLEM_SIGNAL_BLOCKED)) {
        put(l, "see the signal above");
    } else if (g_sprof.mech == SPROF_MECH_NONE) {
        put(l, "no sampling mechanism could start");
    } else if (st->paused_cpu_ns && st->cpu_ns_total < g_sprof.period_ns) {
        put(l, "recording was paused (SPROF_START, the toggle signal, SPROF_DELAY)");
    } else if (st->cpu_ns_total < g_sprof.period_ns && !sprof_is_wall()) {
        put(l, "the program ran ");
        put_tenths(l, st->cpu_ns_total, 1000000);
        put(l, " ms of CPU, less than one sampling period (");
        put_tenths(l, g_sprof.period_ns, 1000000);
        put(l, " ms)");
    } else if (st->cpu_ns_total < 2 * g_sprof.period_ns && !sprof_is_wall()) {
        /* the first draw comes a whole period in (the pacer's at random
         * within the second): likely, not certain */
        put(l, "the program ran ");
        put_tenths(l, st->cpu_ns_total, 1000000);
        put(l, " ms of CPU, less than two sampling periods (");
        put_tenths(l, g_sprof.period_ns, 1000000);
        put(l, " ms): too short to be sure of a sample (raise SPROF_HZ)");
    } else {
        put(l, "the sampler delivered none (see sprof-trace info)");
    }
}

/* stderr as the program had it when profiling started */
static struct stat stderr_at_start;
static int stderr_known;
static int exits_unseen; /* no exit line will come (exit_paths.c) */

void sprof_exit_report_prepare(void)
{
    stderr_known = fstat(2, &stderr_at_start) == 0;
    exits_unseen = sprof_exits_unseen();
}

/* Is descriptor 2 still that stderr? A program that closed it may have
 * reused the number for a file of its own, which the line must not touch. */
static int stderr_unchanged(void)
{
    struct stat now;
    return stderr_known && fstat(2, &now) == 0 && now.st_dev == stderr_at_start.st_dev &&
           now.st_ino == stderr_at_start.st_ino && now.st_rdev == stderr_at_start.st_rdev;
}

static void put_problems(struct line *l, uint32_t problems)
{
    if (problems & SPROF_PROBLEM_WRITE_FAILED) put_write_failure(l);
    if (problems & SPROF_PROBLEM_SIGNAL_TAKEN) {
        put(l, "; SIGNAL TAKEN: the program installed its own handler for sprof's signal ");
        put_u64(l, (uint64_t)g_sprof.sig);
        /* with perf_event the samples go on: only the tick kernel sampler,
         * or else the phase kicks (perf_phase.c), used it */
        if (!sprof_uses_perf()) put(l, ", sampling stopped there");
        else if (g_sprof.ksample == SPROF_KSAMPLE_TICK) put(l, ", kernel-time samples stopped there");
        else put(l, ", phase kicks stopped there");
    }
    if (problems & SPROF_PROBLEM_SIGNAL_BLOCKED) {
        put(l, "; SIGNAL BLOCKED: the program blocked sprof's signal ");
        put_u64(l, (uint64_t)g_sprof.sig);
        put(l, " in a thread, whose samples were not taken");
    }
}

static void emit(struct line *l)
{
    put(l, "\n");
    ssize_t w = write(2, l->buf, l->len);
    (void)w;
}

/* A program whose end sprof cannot see (Go): say so once at start, with
 * where the trace goes, since no exit line will come. */
void sprof_start_report(void)
{
    if (!exits_unseen || g_sprof.cfg.quiet || !stderr_unchanged()) return;
    struct line l;
    l.len = 0;
    put(&l, "sprof: profiling into ");
    put(&l, g_sprof.cfg.out_path);
    put(&l, " (");
    put(&l, mechanism_name(g_sprof.mech));
    put(&l, "); a Go program ends without running sprof's exit code: no exit line, no END record "
            "(sprof-trace info reads the trace)");
    emit(&l);
}

/* Problems noticed during the run (writer): named at once when no exit line will. */
void sprof_report_new_problems(uint32_t bits)
{
    if (!exits_unseen || !bits || g_sprof.cfg.quiet || !stderr_unchanged()) return;
    struct line l;
    l.len = 0;
    struct line what;
    what.len = 0;
    put_problems(&what, bits);
    what.buf[what.len] = 0;
    put(&l, "sprof: ");
    put(&l, g_sprof.cfg.out_path);
    put(&l, ": ");
    put(&l, what.buf + 2); /* after the "; " that joins problems in the exit line */
    emit(&l);
}

void sprof_exit_report(void)
{
    if (g_sprof.cfg.quiet || !stderr_unchanged()) return;
    const struct sprof_rec_stats *st = sprof_last_stats();
    uint32_t problems = atomic_load(&g_sprof.problems);
    struct line l;
    l.len = 0;
    put(&l, "sprof: ");
    put(&l, g_sprof.cfg.out_path);
    put(&l, ": ");
    put_u64(&l, st->samples_written);
    put(&l, " samples, ");
    put_tenths(&l, st->achieved_millihz, 1000);
    put(&l, sprof_is_wall() ? " Hz per wall second" : " Hz");
    put(&l, " of ");
    put_u64(&l, g_sprof.cfg.hz);
    put(&l, " asked (");
    put(&l, mechanism_name(g_sprof.mech));
    put(&l, "), ");
    put_size(&l, g_sprof.file_bytes);
    if (st->samples_dropped) {
        put(&l, "; ");
        put_u64(&l, st->samples_dropped);
        put(&l, " samples dropped (buffer full)");
    }
    put_problems(&l, problems);
    if (st->samples_written == 0) put_no_samples(&l, st, problems);
    emit(&l);
}

/* Bit sig-1 of the hex mask on status's line `key` (hex digit (sig-1)/4
 * counted from the right). 0 when not there. */
static int mask_has(const char *status, const char *key, int sig)
{
    const char *s = strstr(status, key);
    if (!s) return 0;
    s += strlen(key);
    while (*s == ' ' || *s == '\t') s++;
    const char *e = s;
    while ((*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'f')) e++;
    int digit = (sig - 1) / 4;
    if (e - s <= digit) return 0;
    char c = e[-1 - digit];
    int v = c <= '9' ? c - '0' : c - 'a' + 10;
    return (v >> ((sig - 1) % 4)) & 1;
}

/* Does thread tid hold sig pending and blocked? From its status's SigPnd
 * and SigBlk. A thread in sprof's handler blocks it too, but it is no
 * longer pending there. 0 when unknown. */
static int thread_blocks(uint32_t tid, int sig)
{
    struct line p;
    p.len = 0;
    put(&p, "/proc/self/task/");
    put_u64(&p, tid);
    put(&p, "/status");
    p.buf[p.len] = 0;
    int fd = open(p.buf, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[2048];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    return mask_has(buf, "SigPnd:", sig) && mask_has(buf, "SigBlk:", sig);
}

/* A signal the pacer sent and no handler took yet: a thread that blocks
 * the signal keeps it pending (one at most: the pacer waits for it), so
 * its CPU is never sampled. Said once the thread ran 2 ms with it so:
 * pthread_create blocks every signal for a few us. */
void sprof_check_blocked_signal(void)
{
    if (!g_sprof.sig || (atomic_load(&g_sprof.problems) & SPROF_PROBLEM_SIGNAL_BLOCKED)) return;
    for (int i = 0, hi = sprof_slots_hi(); i < hi; i++) {
        struct sprof_thread *t = &g_sprof.threads[i];
        if (atomic_load(&t->state) != SLOT_ACTIVE || !atomic_load(&t->pending)) continue;
        uint64_t cpu, sent = atomic_load_explicit(&t->pacer_sent_cpu_ns, memory_order_relaxed);
        if (sprof_clock_ns(t->cpuclock, &cpu) != 0 || cpu < sent + 2000000ull) continue;
        if (thread_blocks(t->tid, g_sprof.sig)) {
            atomic_fetch_or(&g_sprof.problems, SPROF_PROBLEM_SIGNAL_BLOCKED);
            return;
        }
    }
}
