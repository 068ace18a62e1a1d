/* sprof-trace: print an sprof trace as text (dump) or summarise it (info). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "ending.h"
#include "sprof/tool.h"
#include "sprof/trace_reader.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: sprof-trace dump TRACE   every record as text\n"
               "       sprof-trace info TRACE   summary: mode, rate, samples, losses, threads\n"
               "       sprof-trace --help | --version\n");
}

static const char *thread_event(uint32_t e)
{
    return e == SPROF_THREAD_START ? "start" : e == SPROF_THREAD_NAME ? "name" : "exit";
}

static void print_flags(FILE *o, uint32_t f)
{
    static const char *names[] = {"truncated", "offcpu",  "fp_scanned", "chain_broken", "kernel_chain",
                                  "off_stack", "kernel", "syscall",    "page_fault",   "syscall_skid",
                                  "thread_tail", "kernel_tick", "partial", "stack_cut", "draw", "draw_prev"};
    int first = 1;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (f & (1u << i)) {
            fprintf(o, "%s%s", first ? "" : ",", names[i]);
            first = 0;
        }
    if (first) fputc('-', o);
    if ((f & SPROF_SAMPLE_KERNEL) && (f & SPROF_SAMPLE_SYSCALL)) {
        int nr = SPROF_SAMPLE_SYSCALL_NR(f);
        const char *name = sprof_syscall_name(nr);
        if (nr < 0) fputs(" syscall_nr=?", o);
        else fprintf(o, " syscall_nr=%d(%s)", nr, name ? name : "?");
    }
}

static void dump_record(FILE *o, uint64_t off, const sprof_trace_record *r)
{
    switch (r->type) {
    case SPROF_REC_INFO: {
        const sprof_info_view *v = &r->u.info;
        fprintf(o, "%" PRIu64 " INFO pid=%u mode=%s mechanism=%s hz=%u max_depth=%u arch=%u start_mono=%" PRIu64
                   " start_real=%" PRIu64 " exe=%s\n",
                off, v->pid, v->mode == SPROF_MODE_WALL ? "wall" : "cpu", sprof_mechanism_name(v->mechanism), v->hz,
                v->max_depth, v->arch, v->start_monotonic_ns, v->start_realtime_ns, v->exe_path);
        break;
    }
    case SPROF_REC_MAPPING: {
        const sprof_mapping_view *v = &r->u.mapping;
        fprintf(o, "%" PRIu64 " MAPPING 0x%" PRIx64 "-0x%" PRIx64 " off=0x%" PRIx64 " prot=%c%c%c build_id=", off,
                v->start, v->end, v->file_offset, v->prot & 1 ? 'r' : '-', v->prot & 2 ? 'w' : '-',
                v->prot & 4 ? 'x' : '-');
        for (uint32_t i = 0; i < v->build_id_len; i++) fprintf(o, "%02x", v->build_id[i]);
        if (!v->build_id_len) fputc('-', o);
        fprintf(o, " path=%s\n", v->path);
        break;
    }
    case SPROF_REC_THREAD: {
        const sprof_thread_view *v = &r->u.thread;
        fprintf(o, "%" PRIu64 " THREAD %s tid=%u time=%" PRIu64 " name=%s\n", off, thread_event(v->event), v->tid,
                v->time_ns, v->name);
        break;
    }
    case SPROF_REC_SAMPLE: {
        const sprof_sample_view *v = &r->u.sample;
        fprintf(o, "%" PRIu64 " SAMPLE tid=%u time=%" PRIu64 " weight=%" PRIu64 " flags=", off, v->tid, v->time_ns,
                v->weight_ns);
        print_flags(o, v->flags);
        fprintf(o, " pc=0x%" PRIx64 " sp=0x%" PRIx64 " fp=0x%" PRIx64 " fp0_off=", v->pc, v->sp, v->fp);
        if (v->fp0_off == SPROF_FPOFF_UNKNOWN) fputc('?', o);
        else fprintf(o, "%u", v->fp0_off);
        fprintf(o, " frames=%u:", v->nframes);
        for (uint32_t i = 0; i < v->nframes; i++) {
            uint64_t ret;
            uint32_t fo;
            memcpy(&ret, &v->ret[i], 8);
            memcpy(&fo, &v->fpoff[i], 4);
            if (fo == SPROF_FPOFF_UNKNOWN) fprintf(o, " 0x%" PRIx64 "@?", ret);
            else fprintf(o, " 0x%" PRIx64 "@%u", ret, fo);
        }
        fprintf(o, " cand=%u:", v->ncand);
        for (uint32_t i = 0; i < v->ncand; i++) {
            uint64_t val;
            uint32_t co;
            memcpy(&val, &v->cand_val[i], 8);
            memcpy(&co, &v->cand_off[i], 4);
            if (co == SPROF_CAND_REBASE) fprintf(o, " @0x%" PRIx64 ":", val); /* a second segment from there */
            else if (co == SPROF_CAND_RBX) fprintf(o, " rbx=0x%" PRIx64, val);
            else fprintf(o, " %u=0x%" PRIx64, co, val);
        }
        fputc('\n', o);
        break;
    }
    case SPROF_REC_STATS: {
        const struct sprof_rec_stats *s = &r->u.stats;
        fprintf(o, "%" PRIu64 " STATS written=%" PRIu64 " dropped=%" PRIu64 " truncated=%" PRIu64 " lost=%" PRIu64
                   " cpu_ns=%" PRIu64 " achieved_hz=%.3f threads=%" PRIu64 " user_ns=%" PRIu64 " system_ns=%" PRIu64
                   " weight_ns=%" PRIu64 " kernel_weight_ns=%" PRIu64 " kernel_sampling=%s kernel_hz=%u"
                     " own_cpu_ns=%" PRIu64 " problems=0x%x write_errno=%u paused_cpu_ns=%" PRIu64 " clock_excess_ns=%" PRIu64
                   " walked_threads=%u walked_samples=%" PRIu64 " unwalked_samples=%" PRIu64 " phase_kicks=%u\n",
                off, s->samples_written, s->samples_dropped, s->samples_truncated, s->signals_lost, s->cpu_ns_total,
                (double)s->achieved_millihz / 1000.0, s->threads_seen, s->user_cpu_ns, s->system_cpu_ns,
                s->weight_ns_total, s->kernel_weight_ns, sprof_kernel_sampling_name(s->kernel_sampling),
                s->kernel_hz, s->own_cpu_ns, s->problems, s->write_errno, s->paused_cpu_ns, s->clock_excess_ns,
                s->walked_threads, s->walked_samples, s->unwalked_samples, s->phase_kicks);
        break;
    }
    case SPROF_REC_END: fprintf(o, "%" PRIu64 " END\n", off); break; /* reason: sprof-trace info */
    default: break;
    }
}

/* Format 1.1: the threads' user/system CPU, how kernel time was sampled,
 * and how much of that CPU the samples stand for. */
static void print_cpu_accounting(FILE *o, const sprof_info_view *iv, const struct sprof_rec_stats *st,
                                 uint64_t weight_read, uint64_t kweight_read, uint64_t ksamples)
{
    uint64_t split = st->user_cpu_ns + st->system_cpu_ns;
    int recorded = split > 0 && split >= st->user_cpu_ns;
    /* fields of format 1.1 beside the split: it was recorded, as zero */
    int format_1_1 = st->kernel_sampling != SPROF_KSAMPLE_NONE || st->weight_ns_total || st->kernel_weight_ns;
    if (recorded)
        fprintf(o, "user / system:   %.3f s / %.3f s (profiled threads)\n", (double)st->user_cpu_ns / 1e9,
                (double)st->system_cpu_ns / 1e9);
    else if (format_1_1)
        fprintf(o, "user / system:   0.000 s / 0.000 s (the kernel's tick accounting, in whole ticks, charged none "
                   "to the %.1f ms of CPU the threads ran)\n", (double)st->cpu_ns_total / 1e6);
    else
        fprintf(o, "user / system:   not recorded (trace from a runtime before format 1.1)\n");
    switch (st->kernel_sampling) {
    case SPROF_KSAMPLE_PERF:
        fprintf(o, "kernel sampling: perf_event (kernel mode sampled at the asked rate)\n");
        break;
    case SPROF_KSAMPLE_TICK:
        fprintf(o, "kernel sampling: tick (at most %u samples per kernel CPU second; %s)\n", st->kernel_hz,
                sprof_kernel_tick_remedy(iv->mechanism));
        break;
    case SPROF_KSAMPLE_PACER:
        fprintf(o, "kernel sampling: pacer (kernel mode sampled at the asked rate, on the thread's own CPU)\n");
        break;
    case SPROF_KSAMPLE_NONE:
        fprintf(o, "kernel sampling: none (kernel time is in the next user-mode sample's weight)\n");
        break;
    default:
        fprintf(o, "kernel sampling: unknown (%u)\n", st->kernel_sampling);
        break;
    }
    uint64_t cpu = recorded ? split : st->cpu_ns_total;
    uint64_t weight = st->weight_ns_total ? st->weight_ns_total : weight_read;
    uint64_t kweight = st->kernel_weight_ns ? st->kernel_weight_ns : kweight_read;
    if (iv->mode == SPROF_MODE_WALL)
        fprintf(o, "weights cover:   - (wall mode: weights are wall time)\n");
    else if (cpu)
        fprintf(o, "weights cover:   %.1f%% of the threads' CPU (%.3f s of %.3f s %s)\n",
                100.0 * (double)weight / (double)cpu, (double)weight / 1e9, (double)cpu / 1e9,
                recorded ? "user + system" : "cpu_ns_total");
    else
        fprintf(o, "weights cover:   unknown (no CPU time recorded)\n");
    /* format 2.3: the task clock ran ahead of the threads' CPU clocks */
    if (st->clock_excess_ns && st->clock_excess_ns * 1000u >= weight) /* from 0.1 %: below, read noise */
        fprintf(o, "clock excess:    %.3f s of task clock not in the threads' CPU (hypervisor steal, interrupts): "
                   "taken out of the weights; the samples came at the task clock's pace\n",
                (double)st->clock_excess_ns / 1e9);
    fprintf(o, "kernel weight:   %.3f s in %" PRIu64 " kernel samples", (double)kweight / 1e9, ksamples);
    if (weight)
        fprintf(o, " (%.1f%% of the weight)", 100.0 * (double)kweight / (double)weight);
    fputc('\n', o);
    /* Format 1.2: what sprof's own threads cost, beside the program's CPU */
    if (st->own_cpu_ns && cpu)
        fprintf(o, "sprof's own CPU: %.3f s (%.1f%% of the profiled threads'; writer and sampler threads)\n",
                (double)st->own_cpu_ns / 1e9, 100.0 * (double)st->own_cpu_ns / (double)cpu);
    else if (st->own_cpu_ns)
        fprintf(o, "sprof's own CPU: %.3f s (writer and sampler threads)\n", (double)st->own_cpu_ns / 1e9);
    else
        fprintf(o, "sprof's own CPU: not recorded (trace from a runtime before format 1.2)\n");
    /* format 2.4: perf_event threads whose stacks no copy held */
    if (st->walked_threads)
        fprintf(o, "live walks:      %u thread(s) signalled at each perf_event sample (their stacks exceed what the "
                   "kernel copies): %" PRIu64 " samples from the handler's walk, %" PRIu64 " not matched (left cut)\n",
                st->walked_threads, st->walked_samples, st->unwalked_samples);
    /* format 2.6: perf_event's sampling phase, drawn afresh */
    if (st->phase_kicks && cpu)
        fprintf(o, "sampling phase:  drawn afresh %" PRIu32 "%s times (every %.2f ms of CPU on average), so that no "
                   "loop of the program stays in step with the period\n",
                st->phase_kicks, st->phase_kicks == UINT32_MAX ? "+" : "", (double)cpu / 1e6 / (double)st->phase_kicks);
}

struct thread_sum {
    uint32_t tid;
    uint64_t samples, weight_ns;
    char name[32];
};

/* tid -> index into the thread_sum array (kept in first-seen order for the
 * listing): a linear search per record made info quadratic in threads */
struct thread_slot {
    uint32_t tid;
    size_t index;
    UT_hash_handle hh;
};

static void free_slots(struct thread_slot **slots)
{
    struct thread_slot *e, *tmp;
    HASH_ITER(hh, *slots, e, tmp) {
        HASH_DEL(*slots, e);
        free(e);
    }
}

static int info(sprof_trace *t, FILE *o)
{
    char err[512];
    sprof_trace_record r;
    sprof_info_view iv;
    memset(&iv, 0, sizeof iv);
    int have_info = 0, have_stats = 0;
    struct sprof_rec_stats st;
    memset(&st, 0, sizeof st);
    uint64_t samples = 0, weight = 0, kweight = 0, ksamples = 0, offcpu = 0, trunc = 0, scanned = 0, mappings = 0, frames = 0, cands = 0;
    uint64_t partial = 0; /* records that count their weight's share of a period (trace_format.h) */
    uint64_t bytes = 0;
    struct thread_sum *th = NULL;
    struct thread_slot *slots = NULL;
    size_t nth = 0, cap = 0;
    char exe[4096] = "";
    int rc;
    for (;;) {
        uint64_t off = sprof_trace_offset(t);
        rc = sprof_trace_next(t, &r, err, sizeof err);
        if (rc <= 0) break;
        if (r.type == SPROF_REC_INFO && !have_info) {
            iv = r.u.info;
            snprintf(exe, sizeof exe, "%s", iv.exe_path);
            have_info = 1;
        } else if (r.type == SPROF_REC_STATS) {
            st = r.u.stats;
            have_stats = 1;
        } else if (r.type == SPROF_REC_MAPPING) {
            mappings++;
        } else if (r.type == SPROF_REC_SAMPLE || r.type == SPROF_REC_THREAD) {
            uint32_t tid = r.type == SPROF_REC_SAMPLE ? r.u.sample.tid : r.u.thread.tid;
            struct thread_slot *slot;
            HASH_FIND(hh, slots, &tid, sizeof tid, slot);
            if (!slot) {
                struct thread_sum *n = nth < cap ? th : realloc(th, (cap = cap ? cap * 2 : 16) * sizeof *th);
                slot = malloc(sizeof *slot);
                if (!n || !slot) {
                    free(n ? n : th);
                    free(slot);
                    free_slots(&slots);
                    fprintf(stderr, "sprof-trace: %s: out of memory\n", sprof_trace_name(t));
                    return 1;
                }
                th = n;
                memset(&th[nth], 0, sizeof th[nth]);
                th[nth].tid = tid;
                slot->tid = tid;
                slot->index = nth++;
                HASH_ADD(hh, slots, tid, sizeof slot->tid, slot);
            }
            size_t i = slot->index;
            if (r.type == SPROF_REC_THREAD) {
                if (r.u.thread.name[0]) snprintf(th[i].name, sizeof th[i].name, "%s", r.u.thread.name);
            } else {
                const sprof_sample_view *s = &r.u.sample;
                samples++;
                weight += s->weight_ns;
                th[i].samples++;
                th[i].weight_ns += s->weight_ns;
                if (s->flags & SPROF_SAMPLE_OFFCPU) offcpu++;
                if (s->flags & SPROF_SAMPLE_KERNEL) {
                    ksamples++;
                    kweight += s->weight_ns;
                }
                if (s->flags & SPROF_SAMPLE_TRUNCATED) trunc++;
                if (s->flags & SPROF_SAMPLE_FP_SCANNED) scanned++;
                if (s->flags & SPROF_SAMPLE_PARTIAL) partial++;
                frames += s->nframes;
                cands += s->ncand;
                bytes += sprof_trace_offset(t) - off;
            }
        }
    }
    free_slots(&slots);
    if (rc < 0) {
        fprintf(stderr, "sprof-trace: %s\n", err);
        free(th);
        return 1;
    }
    if (!have_info && sprof_trace_truncated(t)) {
        fprintf(stderr,
                "%s: the trace is cut short at byte %" PRIu64 ", before its INFO record: the program was stopped "
                "as sprof started (no samples to read); profile it again\n",
                sprof_trace_name(t), sprof_trace_offset(t));
        free(th);
        return 1;
    }
    if (!have_info) {
        fprintf(stderr, "sprof-trace: %s: no INFO record\n", sprof_trace_name(t));
        free(th);
        return 1;
    }
    double cpu_s = (double)st.cpu_ns_total / 1e9;
    fprintf(o, "file:            %s%s\n", sprof_trace_name(t), ending_file_note(t));
    fprintf(o, "executable:      %s (pid %u)\n", exe, iv.pid);
    fprintf(o, "mode:            %s\n", iv.mode == SPROF_MODE_WALL ? "wall" : "cpu");
    fprintf(o, "mechanism:       %s\n", sprof_mechanism_name(iv.mechanism));
    fprintf(o, "hz asked:        %u\n", iv.hz);
    fprintf(o, "samples:         %" PRIu64 " (%" PRIu64 " off-CPU, %" PRIu64 " fp-scanned", samples, offcpu, scanned);
    if (partial) fprintf(o, ", %" PRIu64 " partial: each counts its weight's share of a period", partial);
    fprintf(o, ")\n");
    fprintf(o, "sampled weight:  %.3f s\n", (double)weight / 1e9);
    if (have_stats) {
        fprintf(o, "CPU seconds:     %.3f (profiled threads)\n", cpu_s);
        /* format 1.4: CPU while recording was paused is in no figure here */
        if (st.paused_cpu_ns)
            fprintf(o, "paused:          %.3f s of CPU while recording was paused (not profiled, not counted)\n",
                    (double)st.paused_cpu_ns / 1e9);
        fprintf(o, "delivered rate:  %.1f Hz (%.1f%% of asked)%s\n", (double)st.achieved_millihz / 1000.0,
                iv.hz ? (double)st.achieved_millihz / 10.0 / iv.hz : 0.0,
                iv.mode == SPROF_MODE_WALL ? " per wall second, all threads" : " per CPU second");
        fprintf(o, "dropped:         %" PRIu64 " (buffer full)\n", st.samples_dropped);
        fprintf(o, "truncated:       %" PRIu64 " (depth cap %u)\n", st.samples_truncated, iv.max_depth);
        fprintf(o, "lost signals:    %" PRIu64, st.signals_lost);
        /* the cpuclock pacer's lost signals: the draws it forgave (it was
         * kept off the CPU for more than max(10 periods, 20 ms)), and the
         * kernel tick sampler's timer overruns */
        if (st.signals_lost && iv.mechanism == SPROF_MECH_CPUCLOCK_PACED && iv.hz && cpu_s > 0)
            fprintf(o, " (%.1f%% of the asked samples: draws the pacer forgave after it was kept off the CPU, or tick overruns)",
                    100.0 * (double)st.signals_lost / (cpu_s * iv.hz));
        fputc('\n', o);
        print_cpu_accounting(o, &iv, &st, weight, kweight, ksamples);
    } else {
        fprintf(o, "stats:           none recorded (killed before the first STATS record)\n");
        fprintf(o, "truncated:       %" PRIu64 " (depth cap %u)\n", trunc, iv.max_depth);
    }
    ending_print(o, t, &iv, have_stats ? &st : NULL, samples);
    fprintf(o, "mappings:        %" PRIu64 "\n", mappings);
    if (samples)
        fprintf(o, "per sample:      %.1f bytes, %.1f frames, %.1f candidates\n", (double)bytes / (double)samples,
                (double)frames / (double)samples, (double)cands / (double)samples);
    fprintf(o, "threads:         %zu\n", nth);
    for (size_t i = 0; i < nth; i++)
        fprintf(o, "  tid %-8u %-16s %8" PRIu64 " samples  %8.3f s  %5.1f%%\n", th[i].tid,
                th[i].name[0] ? th[i].name : "-", th[i].samples, (double)th[i].weight_ns / 1e9,
                weight ? 100.0 * (double)th[i].weight_ns / (double)weight : 0.0);
    free(th);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return SPROF_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return sprof_tool_print_version("sprof-trace");
    if (argc != 3 || (strcmp(argv[1], "dump") != 0 && strcmp(argv[1], "info") != 0)) {
        if (argc >= 2 && argv[1][0] == '-')
            fprintf(stderr, "sprof-trace: unknown option %s\n", argv[1]);
        usage(stderr);
        return SPROF_EXIT_USAGE;
    }
    char err[512];
    sprof_trace *t = sprof_trace_open(argv[2], err, sizeof err);
    if (!t) {
        fprintf(stderr, "sprof-trace: %s\n", err);
        return 1;
    }
    int rc = 0;
    if (!strcmp(argv[1], "info")) {
        rc = info(t, stdout);
    } else {
        sprof_trace_record r;
        for (;;) {
            uint64_t off = sprof_trace_offset(t);
            int n = sprof_trace_next(t, &r, err, sizeof err);
            if (n < 0) {
                /* stdout must not look complete: say so there too */
                printf("# ERROR: %s\n", err);
                fprintf(stderr, "sprof-trace: %s\n", err);
                rc = 1;
                break;
            }
            if (n == 0) break;
            dump_record(stdout, off, &r);
        }
        if (!rc && sprof_trace_truncated(t)) printf("# truncated: no END record (process killed?)\n");
    }
    sprof_trace_close(t);
    if (fflush(stdout) != 0) rc = 1;
    return rc;
}
