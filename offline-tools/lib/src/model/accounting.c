/* The accounting warnings (see sprof/accounting.h): a profile must not pass
 * for the whole of the program's CPU when its samples stand for less of it,
 * came at a lower rate than asked, or hide kernel time in user frames. */
#include "sprof/accounting.h"

#include <math.h>
#include <stdio.h>

#include "sprof/trace_format.h"
#include "sprof/trace_reader.h"

uint64_t sprof_accounting_cpu_ns(const sprof_trace_accounting *a)
{
    uint64_t split = a->user_cpu_ns + a->system_cpu_ns;
    if (split >= a->user_cpu_ns && split > 0) /* recorded and no overflow from a hostile file */
        return split;
    return a->cpu_ns_total;
}

uint64_t sprof_accounting_weight_ns(const sprof_trace_accounting *a)
{
    return a->weight_ns_total ? a->weight_ns_total : a->read_weight_ns;
}

static double secs(uint64_t ns)
{
    return (double)ns / 1e9;
}

/* The CPU a correct recording may still leave out of every sample: each
 * thread's time after its last sample, up to one sampling period. */
static double expected_tail_ns(const sprof_trace_accounting *a)
{
    double threads = a->threads_seen ? (double)a->threads_seen : 1.0;
    return a->hz ? threads * 1e9 / (double)a->hz : 0.0;
}

static int coverage(const sprof_trace_accounting *a, char *buf, size_t buflen)
{
    uint64_t cpu = sprof_accounting_cpu_ns(a), weight = sprof_accounting_weight_ns(a);
    /* wall-mode weights are wall time: not comparable with CPU */
    if (a->mode != SPROF_MODE_CPU || !a->have_stats || cpu == 0 || weight >= cpu)
        return 0;
    double share = (double)weight / (double)cpu;
    if (share >= SPROF_WARN_MIN_COVERAGE || (double)(cpu - weight) <= expected_tail_ns(a))
        return 0;
    const char *fix;
    if (a->samples_dropped)
        fix = "samples were dropped because the runtime's buffer was full: rerun at a lower SPROF_HZ";
    else if (a->signals_lost)
        fix = "timer expirations were lost: the machine was overloaded; rerun at a lower SPROF_HZ "
              "or on a less loaded machine";
    else
        fix = "the runtime did not see that time (threads it could not sample?); check `sprof-trace info`";
    snprintf(buf, buflen,
             "%s: the samples stand for %.1f%% of the profiled threads' CPU (%.3f s of %.3f s; "
             "%llu dropped, %llu signals lost): %.3f s is in no sample, so every figure is a share of "
             "the sampled part only; %s",
             a->path, 100.0 * share, secs(weight), secs(cpu), (unsigned long long)a->samples_dropped,
             (unsigned long long)a->signals_lost, secs(cpu - weight), fix);
    return 1;
}

/* Kernel time went unsampled and is a visible share of the threads' CPU. */
static int kernel_time_unsampled(const sprof_trace_accounting *a)
{
    uint64_t cpu = sprof_accounting_cpu_ns(a);
    return a->mode == SPROF_MODE_CPU && a->have_stats && a->kernel_sampling == SPROF_KSAMPLE_NONE && cpu > 0 &&
           (double)a->system_cpu_ns > SPROF_WARN_MAX_UNSAMPLED_SYS * (double)cpu;
}

static int rate(const sprof_trace_accounting *a, char *buf, size_t buflen)
{
    if (a->mode != SPROF_MODE_CPU || !a->have_stats || a->hz == 0 || a->cpu_ns_total == 0)
        return 0;
    double asked = (double)a->hz, got = (double)a->achieved_millihz / 1000.0;
    /* The tick kernel sampler takes kernel-mode samples at most at the
     * kernel's tick rate (each weighted by the kernel time it stands for):
     * what was asked of it is min(hz, tick) per kernel CPU second. */
    uint64_t cpu = sprof_accounting_cpu_ns(a);
    if (a->kernel_sampling == SPROF_KSAMPLE_TICK && a->kernel_hz && a->kernel_hz < a->hz && cpu &&
        a->system_cpu_ns <= cpu) {
        double sys = (double)a->system_cpu_ns / (double)cpu;
        asked = asked * (1.0 - sys) + (double)a->kernel_hz * sys;
    }
    if (got >= SPROF_WARN_MIN_RATE * asked)
        return 0;
    /* a short run is short of samples by its threads' last periods alone */
    double missing = (asked - got) * secs(a->cpu_ns_total);
    double threads = a->threads_seen ? (double)a->threads_seen : 1.0;
    if (missing <= threads)
        return 0;
    const char *fix;
    if (a->mechanism == SPROF_MECH_POSIX_TIMER || a->mechanism == SPROF_MECH_ITIMER)
        fix = "this timer fires only on the kernel tick; use the default mechanism (unset SPROF_TIMER) "
              "or a lower SPROF_HZ";
    else if (kernel_time_unsampled(a))
        fix = "user-mode-only sampling skips the periods that end in the kernel (see the kernel-time "
              "warning); rerun with kernel sampling on";
    else if (a->signals_lost)
        fix = "the sampler could not keep up (the lost signals: timer overruns, or draws the cpuclock pacer "
              "forgave after it was kept off the CPU): the machine was overloaded; rerun at a lower SPROF_HZ "
              "or on a less loaded machine";
    else
        fix = "the machine was overloaded; rerun at a lower SPROF_HZ or on a less loaded machine";
    snprintf(buf, buflen,
             "%s: %.1f samples per CPU second were delivered of the %u asked (%.1f%%, mechanism %s, "
             "%llu signals lost): fewer samples make every figure noisier (their weights keep the shares "
             "right); %s",
             a->path, got, (unsigned)(asked + 0.5), 100.0 * got / asked, sprof_mechanism_name(a->mechanism),
             (unsigned long long)a->signals_lost, fix);
    return 1;
}

static int kernel_unsampled(const sprof_trace_accounting *a, char *buf, size_t buflen)
{
    if (!kernel_time_unsampled(a))
        return 0;
    uint64_t cpu = sprof_accounting_cpu_ns(a);
    snprintf(buf, buflen,
             "%s: kernel time is not sampled: it is charged to the next user-mode sample "
             "(%.3f s system CPU, %.1f%% of the profiled threads' CPU): the code after system calls "
             "and page faults looks more expensive than it is, and no [syscall] frames show where the "
             "kernel time went; rerun with kernel sampling on (not SPROF_KERNEL=off; perf_event needs "
             "perf_event_paranoid <= 1 or CAP_PERFMON, else the tick fallback is used)",
             a->path, secs(a->system_cpu_ns), 100.0 * (double)a->system_cpu_ns / (double)cpu);
    return 1;
}

/* Kernel time drawn by the tick sampler only: at most the kernel's tick
 * rate, each sample standing for a whole tick, so kernel shares are
 * noisier than user ones by sqrt(hz / tick). Said when it is a visible
 * share; the cpuclock fallback's local pacing draws it at the asked rate. */
static int kernel_tick(const sprof_trace_accounting *a, char *buf, size_t buflen)
{
    uint64_t cpu = sprof_accounting_cpu_ns(a);
    if (a->mode != SPROF_MODE_CPU || !a->have_stats || a->kernel_sampling != SPROF_KSAMPLE_TICK || !a->kernel_hz ||
        a->kernel_hz >= a->hz || cpu == 0 || a->system_cpu_ns > cpu ||
        (double)a->system_cpu_ns <= SPROF_WARN_MAX_TICK_SYS * (double)cpu)
        return 0;
    double share = (double)a->system_cpu_ns / (double)cpu;
    double n = (double)a->kernel_hz * secs(cpu);
    snprintf(buf, buflen,
             "%s: kernel time (%.1f%% of the profiled threads' CPU) was drawn at the kernel's tick, %u per "
             "kernel CPU second, not the %u asked: its shares are noisier than the user ones (about %.1f pp "
             "for the kernel's whole share, 1 sigma); %s",
             a->path, 100.0 * share, a->kernel_hz, a->hz, n > 0 ? 100.0 * sqrt(share * (1.0 - share) / n) : 0.0,
             sprof_kernel_tick_remedy(a->mechanism));
    return 1;
}

int sprof_accounting_warning(const sprof_trace_accounting *a, enum sprof_accounting_warning which,
                             char *buf, size_t buflen)
{
    if (!a || !buf || buflen == 0)
        return 0;
    switch (which) {
    case SPROF_WARN_COVERAGE: return coverage(a, buf, buflen);
    case SPROF_WARN_RATE: return rate(a, buf, buflen);
    case SPROF_WARN_KERNEL_UNSAMPLED: return kernel_unsampled(a, buf, buflen);
    case SPROF_WARN_KERNEL_TICK: return kernel_tick(a, buf, buflen);
    default: return 0;
    }
}

size_t sprof_accounting_print(FILE *out, const char *tool, const sprof_profile *p)
{
    size_t n = 0;
    char line[1536];
    if (p->jit_note[0]) { /* a JIT's perf map there but not used, or partly */
        fprintf(out, "%s: warning: %s\n", tool, p->jit_note);
        n++;
    }
    for (size_t i = 0; i < p->ntraces; i++)
        for (int w = 0; w < SPROF_WARN_COUNT; w++)
            if (sprof_accounting_warning(&p->traces[i], (enum sprof_accounting_warning)w, line, sizeof line)) {
                fprintf(out, "%s: warning: %s\n", tool, line);
                n++;
            }
    return n;
}
