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
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sprof/accounting.h"
#include "sprof/caveats.h"
#include "sprof/cli_load.h"
#include "sprof/export.h"
#include "sprof/out_file.h"
#include "sprof/perf_script.h"
#include "sprof/profile.h"
#include "sprof/tool.h"

typedef struct fold_args {
    sprof_cli_load cli;        /* the shared input options (+ --perf-script, --alloc-report) */
    sprof_fold_format fmt;
    const char *out_path;
    const char *exporter;
    const char *pprof_path;      /* --pprof: also write gzipped profile.proto */
    const char *speedscope_path; /* --speedscope: also write speedscope JSON */
    char **inputs;
    size_t ninputs;
    sprof_perf_options text;   /* perf script / allocation report options */
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
            "      --weight=auto|samples|cpu  CPU nanoseconds when the inputs carry them (default\n"
            "                        auto), or sample counts\n"
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
            "      --jit             suffix frames of perf's JIT maps (/tmp/perf-PID.map) _[j]\n"
            "      --addrs           name unknown perf frames with their address\n"
            "      --strict          a malformed line in a text input is an error\n"
            "  exports (docs/views.md); with one of these, folded output is written only with -o:\n"
            "      --pprof PATH      gzipped pprof profile.proto\n"
            "      --speedscope PATH speedscope JSON (weights as --weight)\n"
            "  -h, --help, --version\n");
}

enum { OPT_C_NAMES = 256, OPT_LINES, OPT_CLASSES, OPT_PERF_SCRIPT, OPT_ALLOC_REPORT,
       OPT_PID, OPT_KERNEL, OPT_JIT, OPT_ADDRS, OPT_STRICT, OPT_PPROF, OPT_SPEEDSCOPE };

/* 0 ok, 1 help or version printed, -1 usage error (message printed). */
static int parse_args(fold_args *a, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        SPROF_CLI_LOAD_LONGOPTS, /* first, as before: getopt lists an ambiguous prefix's matches in table order */
        { "c-names", no_argument, NULL, OPT_C_NAMES },
        { "lines", no_argument, NULL, OPT_LINES },
        { "classes", no_argument, NULL, OPT_CLASSES },
        { "perf-script", required_argument, NULL, OPT_PERF_SCRIPT },
        { "alloc-report", required_argument, NULL, OPT_ALLOC_REPORT },
        { "pid", no_argument, NULL, OPT_PID },
        { "kernel", optional_argument, NULL, OPT_KERNEL },
        { "jit", no_argument, NULL, OPT_JIT },
        { "addrs", no_argument, NULL, OPT_ADDRS },
        { "strict", no_argument, NULL, OPT_STRICT },
        { "pprof", required_argument, NULL, OPT_PPROF },
        { "speedscope", required_argument, NULL, OPT_SPEEDSCOPE },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    a->exporter = "folded";
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out_path = optarg; break;
        case OPT_C_NAMES: a->fmt.c_names = 1; break;
        case OPT_LINES: a->fmt.lines = 1; break;
        case OPT_CLASSES: a->fmt.classes = 1; break;
        case OPT_PERF_SCRIPT: a->cli.perf_script = optarg; break;
        case OPT_ALLOC_REPORT: a->cli.alloc_report = optarg; break;
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
        case OPT_JIT: a->text.jit = 1; break;
        case OPT_ADDRS: a->text.addrs = 1; break;
        case OPT_STRICT: a->text.strict = 1; break;
        case OPT_PPROF: a->pprof_path = optarg; break;
        case OPT_SPEEDSCOPE: a->speedscope_path = optarg; break;
        case 'h': usage(stdout); return 1;
        case 'V': return sprof_tool_print_version("sprof-fold") == SPROF_EXIT_OK ? 1 : -1;
        default:
            if (sprof_cli_other_option(&a->cli, c, optarg, "sprof-fold", usage) != 0)
                return -1;
            break;
        }
    }
    if (sprof_cli_load_check(&a->cli, "sprof-fold") != 0)
        return -1;
    a->inputs = argv + optind;
    a->ninputs = (size_t)(argc - optind);
    a->cli.load.text = &a->text;
    if (a->ninputs == 0 && !a->cli.perf_script && !a->cli.alloc_report) {
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
    if (s->forced)
        fprintf(stderr, ", FORCED: %" PRIu64 " samples named through a symmap of another build", s->forced);
    fputc('\n', stderr);
}

int main(int argc, char **argv)
{
    fold_args a;
    memset(&a, 0, sizeof a);
    argv[0] = "sprof-fold"; /* getopt's own messages: "sprof-fold: ...", not the path it was run by */
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) {
        sprof_cli_load_free(&a.cli);
        return rc > 0 ? SPROF_EXIT_OK : SPROF_EXIT_USAGE;
    }
    char err[1024] = "";
    sprof_profile p;
    sprof_profile_init(&p);
    sprof_out_file out;
    memset(&out, 0, sizeof out);
    int ok = 0;
    const struct exporter *ex = NULL;
    for (size_t i = 0; i < sizeof exporters / sizeof exporters[0]; i++)
        if (strcmp(exporters[i].name, a.exporter) == 0)
            ex = &exporters[i];
    /* The destination first: one it cannot write is refused in one line,
     * before the inputs' warnings and the work (the temporary file beside
     * it is removed on any failure below) */
    int want_out = a.out_path || (!a.pprof_path && !a.speedscope_path);
    if (want_out && sprof_out_open(&out, a.out_path ? a.out_path : "-", err, sizeof err) != 0)
        goto done;
    /* Cut traces are not refused here: the stats line counts them. */
    sprof_cli_loaded found;
    /* speedscope's per-thread timelines and pprof's thread/time labels need every sample */
    a.cli.load.timeline = a.pprof_path || a.speedscope_path;
    if (sprof_cli_load_inputs(&a.cli, a.inputs, a.ninputs, &p, &found, err, sizeof err) != 0)
        goto done; /* a refusal is one line: no warning before it */
    if (found.no_symmap)
        sprof_cli_warn_no_symmap("sprof-fold");
    sprof_accounting_print(stderr, "sprof-fold", &p);
    sprof_caveats cv;
    sprof_caveats_of(&p, &cv);
    sprof_caveats_print(stderr, "sprof-fold", NULL, &cv);
    if (sprof_cli_parse_weight("sprof-fold", a.cli.weight, &p, &a.fmt.weight_cpu) != 0)
        goto done;
    sprof_export_options xo = { a.fmt.weight_cpu, NULL };
    if (a.pprof_path && sprof_export_pprof(&p, &xo, a.pprof_path, err, sizeof err) != 0)
        goto done;
    if (a.speedscope_path && sprof_export_speedscope(&p, &xo, a.speedscope_path, err, sizeof err) != 0)
        goto done;
    long distinct = (long)p.nstacks;
    if (want_out) {
        distinct = ex->fn(&p, out.fp, &a, err, sizeof err);
        if (distinct < 0)
            goto done;
        if (sprof_out_commit(&out, err, sizeof err) != 0)
            goto done;
    }
    print_stats(&p, (size_t)distinct);
    ok = 1;
done:
    if (!ok) {
        sprof_out_abort(&out); /* nothing left behind: no temporary file, no partial output */
        fprintf(stderr, "sprof-fold: %s\n", err[0] ? err : "failed");
    }
    sprof_profile_free(&p);
    sprof_cli_load_free(&a.cli);
    return ok ? SPROF_EXIT_OK : SPROF_EXIT_FAILURE;
}
