/* sprof-fold: traces (+ the app's symmap) -> folded stacks.
 *
 *   sprof-fold [options] TRACE... SYMMAP [-o out.folded]
 *
 * Structure, so other inputs and outputs are small additive edits:
 *   - inputs are recognised by content in the library (sprof/inputs.h):
 *     traces, the symmap, folded text; a new input kind is a parser file
 *     in offline-tools/lib plus a case in inputs.c (and an option here only
 *     if it cannot be recognised by content);
 *   - outputs are the `exporters` table below: one row per format. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/inputs.h"
#include "sprof/export.h"
#include "sprof/out_file.h"
#include "sprof/perf_script.h"
#include "sprof/profile.h"

typedef struct fold_args {
    sprof_load_options load;
    sprof_fold_format fmt;
    const char *symmap;
    const char *out_path;
    const char *exporter;
    const char *pprof_path;      /* --pprof: also write gzipped profile.proto */
    const char *speedscope_path; /* --speedscope: also write speedscope JSON */
    uint32_t *tids;
    size_t ntids;
    const char **inputs;
    size_t ninputs;
    sprof_perf_options text;   /* perf script / allocation report options */
    const char *perf_script;   /* --perf-script FILE|- */
    const char *alloc_report;  /* --alloc-report FILE|- */
} fold_args;

/* ---- outputs ---- */

/* Writes the profile; returns the number of distinct stacks written, or -1 + err. */
typedef long (*export_fn)(const sprof_profile *p, FILE *out, const fold_args *a, char *err,
                          size_t errlen);

static long export_folded(const sprof_profile *p, FILE *out, const fold_args *a, char *err,
                          size_t errlen)
{
    int lines = sprof_profile_write_folded(p, out, &a->fmt);
    if (lines < 0)
        snprintf(err, errlen, "%s: write error", a->out_path ? a->out_path : "stdout");
    return lines;
}

static const struct exporter {
    const char *name;
    export_fn fn;
} exporters[] = {
    { "folded", export_folded },
};

/* ---- options ---- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sprof-fold [options] TRACE... SYMMAP [-o out.folded]\n"
            "  Folded stacks (root;...;leaf COUNT) from sprof traces, named through the\n"
            "  app's symmap (recognised by content; or --symmap PATH). Folded files given\n"
            "  as inputs are added as they are.\n"
            "  -o, --output PATH     write here (atomically) instead of stdout\n"
            "      --symmap PATH     the symmap to name the binary's frames with\n"
            "      --weight=samples|cpu  count samples (default) or CPU nanoseconds\n"
            "      --c-names         raw C function names instead of Ruby names\n"
            "      --lines           append the .rb line: Foo#bar:12\n"
            "      --threads         root each stack at [thread NAME TID]\n"
            "      --no-inline       drop inlined frames (only real functions)\n"
            "      --classes         suffix frames with their cost class (docs/folded.md)\n"
            "      --from SEC, --to SEC  keep samples in this window (seconds since start)\n"
            "      --tid N[,N...]    keep only these threads\n"
            "      --force           fold even if trace and symmap come from different builds\n"
            "  perf script and Spinel allocation reports (also recognised as inputs; docs/perf-script.md):\n"
            "      --perf-script FILE    `perf script` output (- = stdin)\n"
            "      --alloc-report FILE   Spinel allocation report (alloc;SITE;...;TYPE N)\n"
            "      --pid             root perf stacks at comm-PID (--threads: comm-PID/TID)\n"
            "      --kernel[=plain]  keep kernel frames, suffixed _[k] (plain: unsuffixed)\n"
            "      --addrs           name unknown perf frames with their address\n"
            "      --strict          a malformed line in a text input is an error\n"
            "  exports (docs/views.md); with one of these, folded output is written only with -o:\n"
            "      --pprof PATH      gzipped pprof profile.proto\n"
            "      --speedscope PATH speedscope JSON (weights as --weight)\n"
            "  -h, --help\n");
}

static int parse_seconds(const char *s, uint64_t *ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e9)
        return -1;
    *ns = (uint64_t)llround(v * 1e9);
    return 0;
}

static int parse_tids(fold_args *a, const char *s)
{
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (errno || end == p || v > UINT32_MAX || (*end && *end != ','))
            return -1;
        uint32_t *t = realloc(a->tids, (a->ntids + 1) * sizeof *t);
        if (!t)
            return -1;
        a->tids = t;
        a->tids[a->ntids++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    }
    return a->ntids ? 0 : -1;
}

enum { OPT_SYMMAP = 256, OPT_WEIGHT, OPT_C_NAMES, OPT_LINES, OPT_THREADS, OPT_NO_INLINE,
       OPT_CLASSES, OPT_FROM, OPT_TO, OPT_TID, OPT_FORCE, OPT_PERF_SCRIPT, OPT_ALLOC_REPORT,
       OPT_PID, OPT_KERNEL, OPT_ADDRS, OPT_STRICT, OPT_PPROF, OPT_SPEEDSCOPE };

/* 0 ok, 1 help printed, -1 error (message printed). */
static int parse_args(fold_args *a, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "symmap", required_argument, NULL, OPT_SYMMAP },
        { "weight", required_argument, NULL, OPT_WEIGHT },
        { "c-names", no_argument, NULL, OPT_C_NAMES },
        { "lines", no_argument, NULL, OPT_LINES },
        { "threads", no_argument, NULL, OPT_THREADS },
        { "no-inline", no_argument, NULL, OPT_NO_INLINE },
        { "classes", no_argument, NULL, OPT_CLASSES },
        { "from", required_argument, NULL, OPT_FROM },
        { "to", required_argument, NULL, OPT_TO },
        { "tid", required_argument, NULL, OPT_TID },
        { "force", no_argument, NULL, OPT_FORCE },
        { "perf-script", required_argument, NULL, OPT_PERF_SCRIPT },
        { "alloc-report", required_argument, NULL, OPT_ALLOC_REPORT },
        { "pid", no_argument, NULL, OPT_PID },
        { "kernel", optional_argument, NULL, OPT_KERNEL },
        { "addrs", no_argument, NULL, OPT_ADDRS },
        { "strict", no_argument, NULL, OPT_STRICT },
        { "pprof", required_argument, NULL, OPT_PPROF },
        { "speedscope", required_argument, NULL, OPT_SPEEDSCOPE },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    a->exporter = "folded";
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out_path = optarg; break;
        case OPT_SYMMAP: a->symmap = optarg; break;
        case OPT_WEIGHT:
            if (strcmp(optarg, "samples") == 0)
                a->fmt.weight_cpu = 0;
            else if (strcmp(optarg, "cpu") == 0)
                a->fmt.weight_cpu = 1;
            else {
                fprintf(stderr, "sprof-fold: --weight must be samples or cpu, not \"%s\"\n", optarg);
                return -1;
            }
            break;
        case OPT_C_NAMES: a->fmt.c_names = 1; break;
        case OPT_LINES: a->fmt.lines = 1; break;
        case OPT_THREADS: a->load.per_thread = 1; break;
        case OPT_NO_INLINE: a->load.no_inline = 1; break;
        case OPT_CLASSES: a->fmt.classes = 1; break;
        case OPT_FROM:
        case OPT_TO:
            if (parse_seconds(optarg, c == OPT_FROM ? &a->load.from_ns : &a->load.to_ns) != 0) {
                fprintf(stderr, "sprof-fold: --%s wants seconds since the trace start (e.g. 1.5), not \"%s\"\n",
                        c == OPT_FROM ? "from" : "to", optarg);
                return -1;
            }
            break;
        case OPT_TID:
            if (parse_tids(a, optarg) != 0) {
                fprintf(stderr, "sprof-fold: --tid wants thread ids N[,N...], not \"%s\"\n", optarg);
                return -1;
            }
            break;
        case OPT_FORCE: a->load.force = 1; break;
        case OPT_PERF_SCRIPT: a->perf_script = optarg; break;
        case OPT_ALLOC_REPORT: a->alloc_report = optarg; break;
        case OPT_PID: a->text.pid = 1; break;
        case OPT_KERNEL:
            if (!optarg)
                a->text.kernel = SPROF_PERF_KERNEL_ANNOTATE;
            else if (strcmp(optarg, "plain") == 0)
                a->text.kernel = SPROF_PERF_KERNEL_PLAIN;
            else {
                fprintf(stderr, "sprof-fold: --kernel takes no value or =plain, not \"%s\"\n", optarg);
                return -1;
            }
            break;
        case OPT_ADDRS: a->text.addrs = 1; break;
        case OPT_STRICT: a->text.strict = 1; break;
        case OPT_PPROF: a->pprof_path = optarg; break;
        case OPT_SPEEDSCOPE: a->speedscope_path = optarg; break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return -1;
        }
    }
    if (a->load.to_ns && a->load.to_ns <= a->load.from_ns) {
        fprintf(stderr, "sprof-fold: --to must be after --from\n");
        return -1;
    }
    a->load.tids = a->tids;
    a->load.ntids = a->ntids;
    a->inputs = (const char **)(argv + optind);
    a->ninputs = (size_t)(argc - optind);
    a->load.text = &a->text;
    if (a->ninputs == 0 && !a->perf_script && !a->alloc_report) {
        usage(stderr);
        return -1;
    }
    return 0;
}

static void print_stats(const sprof_profile *p, size_t distinct)
{
    const sprof_profile_stats *s = &p->stats;
    double complete = s->samples ? 100.0 * (double)(s->samples - s->incomplete) / (double)s->samples : 100.0;
    fprintf(stderr,
            "sprof-fold: %" PRIu64 " samples, %zu distinct stacks, %" PRIu64 " dropped, %" PRIu64
            " truncated, %" PRIu64 " unresolved PCs, %.1f%% complete",
            s->samples, distinct, s->dropped, s->truncated, s->unresolved_pcs, complete);
    if (s->filtered)
        fprintf(stderr, ", %" PRIu64 " filtered out", s->filtered);
    if (s->truncated_files)
        fprintf(stderr, ", %" PRIu64 " trace(s) cut short (no END record)", s->truncated_files);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    fold_args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) {
        free(a.tids);
        return rc > 0 ? 0 : 1;
    }
    char err[1024] = "";
    sprof_inputs in;
    sprof_profile p;
    sprof_profile_init(&p);
    sprof_out_file out;
    memset(&out, 0, sizeof out);
    int ok = 0;
    const struct exporter *ex = NULL;
    for (size_t i = 0; i < sizeof exporters / sizeof exporters[0]; i++)
        if (strcmp(exporters[i].name, a.exporter) == 0)
            ex = &exporters[i];
    if (sprof_inputs_classify(&in, a.inputs, a.ninputs, a.symmap, err, sizeof err) != 0)
        goto done;
    if ((a.perf_script && sprof_inputs_add_text(&in, a.perf_script, SPROF_INPUT_PERF_SCRIPT) != 0) ||
        (a.alloc_report && sprof_inputs_add_text(&in, a.alloc_report, SPROF_INPUT_ALLOC) != 0)) {
        snprintf(err, sizeof err, "out of memory");
        sprof_inputs_free(&in);
        goto done;
    }
    int no_symmap = in.ntraces > 0 && !in.symmap;
    if (sprof_inputs_load(&in, &p, &a.load, err, sizeof err) != 0) {
        sprof_inputs_free(&in); /* a refusal is one line: no warning before it */
        goto done;
    }
    sprof_inputs_free(&in);
    if (no_symmap)
        fprintf(stderr, "sprof-fold: no symmap given: frames of the program are named from its ELF symbols only\n");
    sprof_export_options xo = { a.fmt.weight_cpu, NULL };
    if (a.pprof_path && sprof_export_pprof(&p, &xo, a.pprof_path, err, sizeof err) != 0)
        goto done;
    if (a.speedscope_path && sprof_export_speedscope(&p, &xo, a.speedscope_path, err, sizeof err) != 0)
        goto done;
    long distinct = (long)p.nstacks;
    if (a.out_path || (!a.pprof_path && !a.speedscope_path)) {
        if (sprof_out_open(&out, a.out_path ? a.out_path : "-", err, sizeof err) != 0)
            goto done;
        distinct = ex->fn(&p, out.fp, &a, err, sizeof err);
        if (distinct < 0) {
            sprof_out_abort(&out);
            goto done;
        }
        if (sprof_out_commit(&out, err, sizeof err) != 0)
            goto done;
    }
    print_stats(&p, (size_t)distinct);
    ok = 1;
done:
    if (!ok)
        fprintf(stderr, "sprof-fold: %s\n", err[0] ? err : "failed");
    sprof_profile_free(&p);
    free(a.tids);
    return ok ? 0 : 1;
}
