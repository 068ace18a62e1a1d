/* sprof-trace info: how a trace ended and what went wrong (see ending.h). */
#include "ending.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>

const char *ending_file_note(const sprof_trace *t)
{
    if (!sprof_trace_truncated(t)) return "";
    /* with its fatal-signal handlers and the exit, _exit and exec wrappers
     * sprof writes END on every ending it can see; what is left runs no
     * code of the process */
    return " (no END record: the process ended without running sprof's exit code: SIGKILL or the OOM "
           "killer, or a raw exit_group system call (Go programs leave so); data up to the cut)";
}

static const char *write_error_name(uint32_t e)
{
    switch (e) {
    case ENOSPC: return "disk full (ENOSPC)";
    case EDQUOT: return "disk quota exceeded (EDQUOT)";
    case EFBIG: return "file size limit reached (EFBIG, ulimit -f)";
    default: return NULL;
    }
}

static void print_end_reason(FILE *o, const sprof_trace *t)
{
    uint32_t sig = 0;
    uint32_t reason = sprof_trace_end_reason(t, &sig);
    fprintf(o, "ended:           ");
    if (sprof_trace_truncated(t)) {
        fprintf(o, "without END (see file:)\n");
        return;
    }
    switch (reason) {
    case SPROF_END_EXIT: fprintf(o, "exit (clean)\n"); break;
    case SPROF_END_UNDERSCORE_EXIT: fprintf(o, "_exit (clean)\n"); break;
    case SPROF_END_EXEC: fprintf(o, "exec of another image (clean)\n"); break;
    case SPROF_END_FATAL_SIGNAL:
        fprintf(o, "fatal signal %u (%s): the program was killed; data up to that moment\n", sig,
                sig < 65 && strsignal((int)sig) ? strsignal((int)sig) : "?");
        break;
    case SPROF_END_WRITE_FAILED: fprintf(o, "the trace could not be written further (see problems:)\n"); break;
    case SPROF_END_ROTATED: fprintf(o, "rotated (clean; SPROF_ROTATE: the next file continues)\n"); break;
    case SPROF_END_NOT_RECORDED: fprintf(o, "clean END (reason not recorded: a runtime before format 1.3)\n"); break;
    default: fprintf(o, "clean END (reason %u: from a newer runtime)\n", reason);
    }
}

/* Why a trace holds no sample, when no recorded problem says it. */
static void print_no_samples(FILE *o, const sprof_info_view *iv, const struct sprof_rec_stats *st)
{
    uint64_t period = iv->hz ? 1000000000ull / iv->hz : 0;
    if (iv->mechanism == SPROF_MECH_NONE)
        fprintf(o, "  NO SAMPLES: no sampling mechanism could start\n");
    else if (st && st->problems & (SPROF_PROBLEM_SIGNAL_TAKEN | SPROF_PROBLEM_SIGNAL_BLOCKED))
        fprintf(o, "  NO SAMPLES: the program took or blocked the profiling signal (above)\n");
    else if (st && st->paused_cpu_ns && st->cpu_ns_total < period) /* format 1.4 */
        fprintf(o, "  NO SAMPLES: recording was paused (%.3f s of CPU while paused)\n", (double)st->paused_cpu_ns / 1e9);
    else if (st && iv->mode == SPROF_MODE_CPU && st->cpu_ns_total < period)
        fprintf(o, "  NO SAMPLES: the program ran %.1f ms of CPU, less than one sampling period (%.1f ms at %u Hz)\n",
                (double)st->cpu_ns_total / 1e6, (double)period / 1e6, iv->hz);
    else if (st && iv->mode == SPROF_MODE_CPU && st->cpu_ns_total < 2 * period)
        /* the first sample comes a whole period in, the cpuclock pacer's at a
         * random point of the second period: likely, not certain */
        fprintf(o, "  NO SAMPLES: the program ran %.1f ms of CPU, less than two sampling periods (%.1f ms at %u Hz): "
                   "too short to be sure of a sample (raise SPROF_HZ)\n",
                (double)st->cpu_ns_total / 1e6, (double)period / 1e6, iv->hz);
    else
        fprintf(o, "  NO SAMPLES: cause not recorded\n");
}

void ending_print(FILE *o, const sprof_trace *t, const sprof_info_view *iv, const struct sprof_rec_stats *st,
                  uint64_t samples)
{
    print_end_reason(o, t);
    uint32_t p = st ? st->problems : 0;
    if (!p && samples) {
        fprintf(o, "problems:        none recorded\n");
        return;
    }
    fprintf(o, "problems:\n");
    if (p & SPROF_PROBLEM_WRITE_FAILED) {
        const char *what = write_error_name(st->write_errno);
        if (what)
            fprintf(o, "  WRITE FAILED: %s; the runtime cut the file back to whole records and ended it there, "
                       "later samples are lost\n", what);
        else
            fprintf(o, "  WRITE FAILED: %s (errno %u); later samples are lost\n", strerror((int)st->write_errno),
                    st->write_errno);
    }
    if ((p & SPROF_PROBLEM_SIGNAL_TAKEN) &&
        (iv->mechanism == SPROF_MECH_PERF_EVENT || iv->mechanism == SPROF_MECH_WALL_PERF))
        fprintf(o, "  SIGNAL TAKEN: the program installed its own handler for the tick kernel sampler's signal; "
                   "kernel-time samples stopped there (SPROF_KERNEL=off avoids the signal)\n");
    else if (p & SPROF_PROBLEM_SIGNAL_TAKEN)
        fprintf(o, "  SIGNAL TAKEN: the program installed its own handler for sprof's profiling signal; "
                   "sampling by signal stopped there (SPROF_TIMER=perf_event needs no signal)\n");
    if (p & SPROF_PROBLEM_SIGNAL_BLOCKED)
        fprintf(o, "  SIGNAL BLOCKED: a thread blocked sprof's profiling signal; its CPU was not sampled while "
                   "blocked\n");
    if (!samples) print_no_samples(o, iv, st);
}
