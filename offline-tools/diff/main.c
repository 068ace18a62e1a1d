/* sprof-diff: compare two profiles (before, after) by Ruby frame names.
 * Default: a table of methods (or .rb lines) with the change of their
 * self and total shares and a significance mark; --folded, --json and a
 * differential flame graph (--svg) are other projections of the same
 * data. Everything is computed before anything is written, so an error
 * never leaves partial output. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "sprof/accounting.h"
#include "sprof/caveats.h"
#include "sprof/cli_load.h"
#include "sprof/diff.h"
#include "sprof/flamegraph.h"
#include "sprof/inputs.h"
#include "sprof/json_out.h"
#include "sprof/out_file.h"
#include "sprof/profile.h"
#include "sprof/tool.h"

typedef struct side {
    const char *label;     /* "before" / "after" */
    const char **files;
    size_t nfiles;
    sprof_profile prof;    /* all runs summed */
    sprof_profile *runs;   /* each run alone (one trace with the symmap, or one folded file); == &prof if one */
    size_t nruns;
    uint64_t samples;
    sprof_caveats caveats; /* incomplete stacks, guessed names (sprof/caveats.h) */
} side;

typedef struct options {
    int lines, sort_total, json, folded, normalize;
    int cpu; /* --weight=cpu: CPU seconds per run instead of shares */
    double min_pp, alpha, floor_pp;
    const char **fail_if;  /* --fail-if METHOD:+PP (borrowed argv strings) */
    size_t nfail_if;
    double fail_any_pp;    /* --fail-if-any +PP; NAN if not given */
    const char *svg, *output, *title;
    sprof_flame_options flame;
    sprof_cli_load cli; /* the input options every view shares (sprof/cli_load.h) */
} options;

static void usage(FILE *out)
{
    fputs("usage: sprof-diff [options] BEFORE AFTER\n"
          "       sprof-diff [options] -b BEFORE_FILE... -a AFTER_FILE...\n"
          "  each side: a folded file, or sprof trace(s) with their symmap (-b before.bin old.symmap);\n"
          "  several traces or folded files on a side are replicate runs (-b r1.bin r2.bin r3.bin app.symmap)\n"
          "  --self | --total     sort by the change of self (default) or total share\n"
          "  --lines              one row per .rb line instead of per method\n"
          "  --min PP             hide rows whose self and total change less than PP percentage points\n"
          "  --alpha Q            false discovery rate for the significance mark (default 0.05)\n"
          "  --floor PP           with one run on a side: smallest change that may be significant (default 10)\n"
          "  --fail-if 'METHOD:+PP'  exit 3 if METHOD's total share grew by more than PP points, significantly;\n"
          "                       +N% / +Ns: its total CPU seconds per run grew by more than N % / N s\n"
          "  --fail-if-any +PP    the same for any method (+PP, +N% or +Ns)\n"
          "  --json               the table as JSON\n"
          "  --folded             difffolded-compatible \"stack before after\" lines instead of the table\n"
          "  --normalize          with --folded: scale before's counts to after's total (difffolded.pl -n)\n"
          "  --svg FILE           also write a differential flame graph (after's shape; red grew, blue shrank)\n"
          "  --title T, --width PX, --minwidth W[%], --inverted   for --svg\n"
          "  -o FILE              write the table/folded/JSON output to FILE (atomically) instead of stdout\n"
          "  -h, --help, --version\n"
          "  the input options of every view (docs/views.md), applied to both sides:\n",
          out);
    /* --symmap is per side here: give each side's symmap among its files */
    fputs(strstr(sprof_cli_load_usage, "      --threads"), out);
    fputs("  --weight: auto and samples compare shares of sample counts; cpu shows each method's CPU seconds\n"
          "  per run (mean over a side's runs) and their change instead (cpu-mode traces; docs/diff.md)\n",
          out);
}

/* One error line, prefixed with the tool's name; the exit status. */
static int fail(const char *msg)
{
    fprintf(stderr, "sprof-diff: %s\n", msg);
    return SPROF_EXIT_FAILURE;
}

/* Load one side; refuse a trace without a symmap, a symmap without a
 * trace, and a side with no samples. */
static int load_side(side *s, const options *o, char *err, size_t errlen)
{
    sprof_inputs in;
    if (sprof_inputs_classify(&in, s->files, s->nfiles, NULL, err, errlen) != 0)
        return -1;
    int rc = 0;
    if (in.ntraces > 0 && !in.symmap) {
        snprintf(err, errlen, "%s: a trace needs its symmap to name Ruby frames (%s: -%c trace.bin app.symmap)",
                 in.traces[0], s->label, s->label[0]);
        rc = -1;
    } else if (in.symmap && in.ntraces == 0) {
        snprintf(err, errlen, "%s: a symmap without a trace on the %s side", in.symmap, s->label);
        rc = -1;
    } else {
        rc = sprof_inputs_load(&in, &s->prof, &o->cli.load, err, errlen);
    }
    sprof_inputs_free(&in);
    if (rc != 0)
        return -1;
    for (size_t i = 0; i < s->prof.nstacks; i++)
        s->samples += s->prof.stacks[i].samples;
    if (s->samples == 0 && s->prof.stats.truncated_files) {
        snprintf(err, errlen, "%s: no samples before the trace was cut short (%s side)", s->files[0], s->label);
        return -1;
    }
    if (s->samples == 0) {
        snprintf(err, errlen, "%s: no samples (%s side)", s->files[0], s->label);
        return -1;
    }
    return 0;
}

/* Load each run of a side alone: every trace (with the side's symmap) and
 * every text file is one run. One run: the summed profile is the run. */
static int load_runs(side *s, const options *o, char *err, size_t errlen)
{
    sprof_inputs in;
    if (sprof_inputs_classify(&in, s->files, s->nfiles, NULL, err, errlen) != 0)
        return -1;
    size_t n = in.ntraces + in.ntexts;
    int rc = 0;
    if (n <= 1) {
        s->runs = &s->prof;
        s->nruns = 1;
    } else if (!(s->runs = calloc(n, sizeof *s->runs))) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && n > 1 && i < n; i++) {
        sprof_inputs one = { .symmap = in.symmap };
        if (i < in.ntraces) {
            one.traces = &in.traces[i];
            one.ntraces = 1;
        } else {
            one.texts = &in.texts[i - in.ntraces];
            one.text_kinds = &in.text_kinds[i - in.ntraces];
            one.ntexts = 1;
        }
        sprof_profile_init(&s->runs[i]);
        s->nruns = i + 1;
        rc = sprof_inputs_load(&one, &s->runs[i], &o->cli.load, err, errlen);
        uint64_t n_samples = 0;
        for (size_t k = 0; rc == 0 && k < s->runs[i].nstacks; k++)
            n_samples += s->runs[i].stacks[k].samples;
        if (rc == 0 && n_samples == 0) { /* a run of share 0/0 would bias the runs test */
            snprintf(err, errlen, "%s: no samples (a run of the %s side)",
                     i < in.ntraces ? in.traces[i] : in.texts[i - in.ntraces], s->label);
            rc = -1;
        }
    }
    sprof_inputs_free(&in);
    return rc;
}

static void free_runs(side *s)
{
    if (s->runs != &s->prof) {
        for (size_t i = 0; i < s->nruns; i++)
            sprof_profile_free(&s->runs[i]);
        free(s->runs);
    }
}

/* ---- the table ---- */

typedef struct sort_ctx {
    const sprof_diff_table *t;
    int by_total, cpu;
} sort_ctx;
static sort_ctx g_sort;

static int row_significant(const sprof_diff_row *r, int total)
{
    if (g_sort.cpu)
        return total ? r->cpu_total_sig : r->cpu_self_sig;
    return total ? r->total_sig : r->self_sig;
}

/* A row's change in mean CPU seconds per run (after - before). */
static double cpu_change_s(const sprof_diff_table *t, const sprof_diff_row *r, int total)
{
    uint64_t *const *ns = total ? r->run_total_ns : r->run_self_ns;
    return sprof_diff_cpu_s(t, ns[1], 1) - sprof_diff_cpu_s(t, ns[0], 0);
}

static double cpu_self_s(const sprof_diff_table *t, const sprof_diff_row *r)
{
    return cpu_change_s(t, r, 0);
}

static double cpu_total_s(const sprof_diff_table *t, const sprof_diff_row *r)
{
    return cpu_change_s(t, r, 1);
}

static int by_change(const void *a, const void *b)
{
    const sprof_diff_row *x = *(const sprof_diff_row *const *)a, *y = *(const sprof_diff_row *const *)b;
    int sx = row_significant(x, g_sort.by_total);
    int sy = row_significant(y, g_sort.by_total);
    if (sx != sy)
        return sy - sx;
    double (*self_f)(const sprof_diff_table *, const sprof_diff_row *) = g_sort.cpu ? cpu_self_s : sprof_diff_self_pp;
    double (*total_f)(const sprof_diff_table *, const sprof_diff_row *) =
        g_sort.cpu ? cpu_total_s : sprof_diff_total_pp;
    double (*primary)(const sprof_diff_table *, const sprof_diff_row *) = g_sort.by_total ? total_f : self_f;
    double (*secondary)(const sprof_diff_table *, const sprof_diff_row *) = g_sort.by_total ? self_f : total_f;
    double px = fabs(primary(g_sort.t, x)), py = fabs(primary(g_sort.t, y));
    if (px != py)
        return px > py ? -1 : 1;
    px = fabs(secondary(g_sort.t, x));
    py = fabs(secondary(g_sort.t, y));
    if (px != py)
        return px > py ? -1 : 1;
    return strcmp(x->key, y->key);
}

static const char *mark(int sig, double q)
{
    if (!sig)
        return "";
    return q < 0.001 ? "***" : q < 0.01 ? "**" : "*";
}

static double share(uint64_t x, uint64_t n)
{
    return n ? 100.0 * (double)x / (double)n : 0;
}

static int hidden(const sprof_diff_table *t, const sprof_diff_row *r, double min_pp)
{
    return fabs(sprof_diff_self_pp(t, r)) < min_pp && fabs(sprof_diff_total_pp(t, r)) < min_pp;
}

static const char *cost_word(uint8_t c)
{
    return c < SPROF_COST_COUNT ? sprof_cost_name((enum sprof_cost)c) : "native";
}

static void print_files(FILE *out, const side *s)
{
    for (size_t i = 0; i < s->nfiles; i++)
        fprintf(out, "%s%s", i ? " " : "", s->files[i]);
}

static void write_table(FILE *out, const sprof_diff_table *t, sprof_diff_row **rows, size_t nrows,
                        const side *sides, const options *o)
{
    const char *what = o->lines ? "line" : "method";
    fputs("before: ", out);
    print_files(out, &sides[0]);
    fprintf(out, " (%zu run%s, %llu samples)\nafter:  ", sides[0].nruns, sides[0].nruns == 1 ? "" : "s",
            (unsigned long long)sides[0].samples);
    print_files(out, &sides[1]);
    fprintf(out, " (%zu run%s, %llu samples)\n", sides[1].nruns, sides[1].nruns == 1 ? "" : "s",
            (unsigned long long)sides[1].samples);
    char text[1024];
    for (int i = 0; i < 2; i++)
        for (int w = 0; w < SPROF_CAVEAT_COUNT; w++)
            if (sprof_caveat_text(&sides[i].caveats, (enum sprof_caveat)w, text, sizeof text))
                fprintf(out, "Warning: %s side: %s\n", sides[i].label, text);
    fputc('\n', out);
    fprintf(out, "%s   %s\n", "------------ self % ------------", "------------ total % -----------");
    fprintf(out, "%8s %8s %9s %-4s   %8s %8s %9s %-4s  %-7s  %s\n", "before", "after", "change", "sig", "before",
            "after", "change", "sig", "class", o->lines ? ".rb line (method)" : "method");
    size_t shown = 0;
    for (size_t i = 0; i < nrows; i++) {
        const sprof_diff_row *r = rows[i];
        if (hidden(t, r, o->min_pp))
            continue;
        shown++;
        fprintf(out, "%8.2f %8.2f %+9.2f %-4s   %8.2f %8.2f %+9.2f %-4s  %-7s  %s", share(r->self[0], t->n[0]),
                share(r->self[1], t->n[1]), sprof_diff_self_pp(t, r), mark(r->self_sig, r->self_q),
                share(r->total[0], t->n[0]), share(r->total[1], t->n[1]), sprof_diff_total_pp(t, r),
                mark(r->total_sig, r->total_q), cost_word(r->cost), r->key);
        if (o->lines && strcmp(r->method, r->key) != 0)
            fprintf(out, " (%s)", r->method);
        fputc('\n', out);
    }
    fprintf(out, "\n%zu %ss shown of %zu", shown, what, nrows);
    if (o->min_pp > 0)
        fprintf(out, " (changes under %.2f pp hidden)", o->min_pp);
    fprintf(out, "; sorted by the %s change, significant first. change = after %% - before %% in percentage "
                 "points.\n",
            o->sort_total ? "total" : "self");
    if (t->replicated)
        fprintf(out,
                "sig: Welch's t-test on the per-run shares (%zu vs %zu runs, each side's own variance), per %s, self "
                "and total separately; Benjamini-Hochberg false-discovery-rate correction across all %zu tests; "
                "* q < %g, ** q < 0.01, *** q < 0.001. No mark: the change is within run-to-run and sampling noise. "
                "Run-to-run variance of the shares: %.2f x the binomial (independent samples) one, median over the tested "
                "rows.\n",
                t->nruns[0], t->nruns[1], what, t->ntests, o->alpha, t->dispersion);
    else
        fprintf(out,
                "sig: one run on a side, so run-to-run variance is unknown: two-sided two-proportion z-test on "
                "sample counts, per %s, self and total separately, Benjamini-Hochberg correction across all %zu "
                "tests (* q < %g, ** q < 0.01, *** q < 0.001), and marked only if the change is at least %.2f pp "
                "(--floor). Give 2 or more runs a side (3 recommended) for a test of run-to-run noise.\n",
                what, t->ntests, o->alpha, t->test.floor_pp);
}

static double pct_change(double before, double after)
{
    return before > 0 ? 100.0 * (after - before) / before : NAN;
}

static void print_pct(FILE *out, double before, double after)
{
    double v = pct_change(before, after);
    if (before == 0 && after == 0)
        fprintf(out, " %7s", "-");
    else if (isnan(v))
        fprintf(out, " %7s", "new");
    else
        fprintf(out, " %+6.1f%%", v);
}

/* --weight=cpu: mean CPU seconds per run, self and total, and their change. */
static void write_cpu_table(FILE *out, const sprof_diff_table *t, sprof_diff_row **rows, size_t nrows,
                            const options *o)
{
    const char *what = o->lines ? "line" : "method";
    double all[2] = { sprof_diff_cpu_s(t, t->run_ns[0], 0), sprof_diff_cpu_s(t, t->run_ns[1], 1) };
    fprintf(out, "CPU per run: before %.3f s, after %.3f s (", all[0], all[1]);
    print_pct(out, all[0], all[1]);
    fputs(")\n\n", out);
    fprintf(out, "%s   %s\n", "------ self CPU s per run (mean) -------", "------ total CPU s per run (mean) ------");
    fprintf(out, "%9s %9s %9s %8s %-4s  %9s %9s %9s %8s %-4s  %-7s  %s\n", "before", "after", "change", "", "sig",
            "before", "after", "change", "", "sig", "class", o->lines ? ".rb line (method)" : "method");
    size_t shown = 0;
    for (size_t i = 0; i < nrows; i++) {
        const sprof_diff_row *r = rows[i];
        double sb = sprof_diff_cpu_s(t, r->run_self_ns[0], 0), sa = sprof_diff_cpu_s(t, r->run_self_ns[1], 1);
        double tb = sprof_diff_cpu_s(t, r->run_total_ns[0], 0), ta = sprof_diff_cpu_s(t, r->run_total_ns[1], 1);
        if (o->min_pp > 0 && all[0] > 0 && 100.0 * fabs(sa - sb) / all[0] < o->min_pp &&
            100.0 * fabs(ta - tb) / all[0] < o->min_pp)
            continue;
        shown++;
        fprintf(out, "%9.3f %9.3f %+9.3f", sb, sa, sa - sb);
        print_pct(out, sb, sa);
        fprintf(out, " %-4s  %9.3f %9.3f %+9.3f", mark(r->cpu_self_sig, r->cpu_self_q), tb, ta, ta - tb);
        print_pct(out, tb, ta);
        fprintf(out, " %-4s  %-7s  %s", mark(r->cpu_total_sig, r->cpu_total_q), cost_word(r->cost), r->key);
        if (o->lines && strcmp(r->method, r->key) != 0)
            fprintf(out, " (%s)", r->method);
        fputc('\n', out);
    }
    fprintf(out, "\n%zu %ss shown of %zu", shown, what, nrows);
    if (o->min_pp > 0)
        fprintf(out, " (changes under %.2f %% of the before side's CPU hidden)", o->min_pp);
    fprintf(out, "; sorted by the %s change, significant first. CPU s = the weights of the samples (thread CPU "
                 "time), mean over each side's runs; change in seconds and in %% of the before figure.\n",
            o->sort_total ? "total" : "self");
    if (t->replicated)
        fprintf(out,
                "sig: Welch's t-test on the per-run CPU seconds (%zu vs %zu runs, each side's own variance), per "
                "%s, self and total separately; Benjamini-Hochberg correction across all %zu of these tests; "
                "* q < %g, ** q < 0.01, *** q < 0.001. A busy machine moves every method's seconds (3-6 %% between "
                "runs is common): a small change of one method shows better in its share.\n",
                t->nruns[0], t->nruns[1], what, t->ncpu_tests, o->alpha);
    else
        fputs("sig: one run on a side: run-to-run variance of CPU time is unknown, so no change is marked. Give 2 "
              "or more runs a side (3 recommended).\n",
              out);
}

static void json_num(FILE *out, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", out);
    else
        fprintf(out, "%.6g", v);
}

static void json_measure(FILE *out, const sprof_diff_table *t, const uint64_t *x, uint64_t *const *runs, double pp,
                         double z, double p, double q, int sig)
{
    fprintf(out, "{\"before\":%llu,\"after\":%llu,", (unsigned long long)x[0], (unsigned long long)x[1]);
    for (int side = 0; t->replicated && side < 2; side++) { /* what the runs test saw */
        fputs(side ? "\"after_runs\":[" : "\"before_runs\":[", out);
        for (size_t i = 0; i < t->nruns[side]; i++)
            fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)runs[side][i]);
        fputs("],", out);
    }
    fputs("\"before_pct\":", out);
    json_num(out, share(x[0], t->n[0]));
    fputs(",\"after_pct\":", out);
    json_num(out, share(x[1], t->n[1]));
    fputs(",\"change_pp\":", out);
    json_num(out, pp);
    fputs(",\"z\":", out);
    json_num(out, z);
    fputs(",\"p\":", out);
    json_num(out, p);
    fputs(",\"q\":", out);
    json_num(out, q);
    fprintf(out, ",\"significant\":%s}", sig ? "true" : "false");
}

/* A row's CPU seconds: the mean per run of each side, every run, the change
 * and its test (null without replicates). */
static void json_cpu(FILE *out, const sprof_diff_table *t, uint64_t *const *ns, double st, double p, double q,
                     int sig)
{
    double b = sprof_diff_cpu_s(t, ns[0], 0), a = sprof_diff_cpu_s(t, ns[1], 1);
    fputs("{\"before_s\":", out);
    json_num(out, b);
    fputs(",\"after_s\":", out);
    json_num(out, a);
    for (int side = 0; side < 2; side++) {
        fputs(side ? ",\"after_runs_s\":[" : ",\"before_runs_s\":[", out);
        for (size_t i = 0; i < t->nruns[side]; i++) {
            if (i)
                fputc(',', out);
            json_num(out, (double)ns[side][i] / 1e9);
        }
        fputc(']', out);
    }
    fputs(",\"change_s\":", out);
    json_num(out, a - b);
    fputs(",\"change_pct\":", out);
    json_num(out, pct_change(b, a));
    fputs(",\"t\":", out);
    json_num(out, st);
    fputs(",\"p\":", out);
    json_num(out, p);
    fputs(",\"q\":", out);
    json_num(out, q);
    fprintf(out, ",\"significant\":%s}", sig ? "true" : "false");
}

static void json_files(FILE *out, const side *s, const uint64_t *run_n)
{
    fputs("{\"files\":[", out);
    for (size_t i = 0; i < s->nfiles; i++) {
        if (i)
            fputc(',', out);
        sprof_json_string(out, s->files[i]);
    }
    fprintf(out, "],\"runs\":%zu,\"samples\":%llu,\"run_samples\":[", s->nruns, (unsigned long long)s->samples);
    for (size_t i = 0; i < s->nruns; i++)
        fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)run_n[i]);
    fputs("]}", out);
}

static const char *test_name(const sprof_diff_table *t)
{
    return t->replicated ? "Welch t-test on per-run shares per row (each side's own variance, at least one sample's "
                           "worth), self and total separately; Benjamini-Hochberg adjusted q-values across all tests"
                         : "one run on a side (run-to-run variance unknown): two-sided pooled two-proportion z-test "
                           "on sample counts per row, self and total separately; Benjamini-Hochberg adjusted "
                           "q-values across all tests; significant only if the change is at least floor_pp";
}

static void write_json(FILE *out, const sprof_diff_table *t, sprof_diff_row **rows, size_t nrows,
                       const side *sides, const options *o, const gate *g)
{
    fputs("{\"before\":", out);
    json_files(out, &sides[0], t->run_n[0]);
    fputs(",\"after\":", out);
    json_files(out, &sides[1], t->run_n[1]);
    fputs(",\"warnings\":[", out);
    char text[1024];
    int nw = 0;
    for (int i = 0; i < 2; i++)
        for (int w = 0; w < SPROF_CAVEAT_COUNT; w++)
            if (sprof_caveat_text(&sides[i].caveats, (enum sprof_caveat)w, text, sizeof text)) {
                char line[1100];
                snprintf(line, sizeof line, "%s side: %s", sides[i].label, text);
                if (nw++)
                    fputc(',', out);
                sprof_json_string(out, line);
            }
    fprintf(out, "],\"incomplete_samples\":[%llu,%llu],\"approx_name_samples\":[%llu,%llu]",
            (unsigned long long)sides[0].caveats.incomplete, (unsigned long long)sides[1].caveats.incomplete,
            (unsigned long long)sides[0].caveats.approx_names, (unsigned long long)sides[1].caveats.approx_names);
    fprintf(out, ",\"anon_code_samples\":[%llu,%llu]", (unsigned long long)sides[0].caveats.anon_code,
            (unsigned long long)sides[1].caveats.anon_code);
    fprintf(out,
            ",\"by\":\"%s\",\"sort\":\"%s\",\"min_pp\":%g,\"alpha\":%g,\"floor_pp\":",
            o->lines ? "line" : "method", o->sort_total ? "total" : "self", o->min_pp, o->alpha);
    json_num(out, t->replicated ? NAN : t->test.floor_pp); /* null: the runs test needs no floor */
    fprintf(out, ",\"test\":\"%s\",\"tests\":%zu,\"dispersion\":", test_name(t), t->ntests);
    json_num(out, t->replicated ? t->dispersion : NAN); /* null: one run a side */
    fputc(',', out);
    if (t->cpu_known) {
        fputs("\"cpu_s_per_run\":[", out);
        json_num(out, sprof_diff_cpu_s(t, t->run_ns[0], 0));
        fputc(',', out);
        json_num(out, sprof_diff_cpu_s(t, t->run_ns[1], 1));
        fprintf(out, "],\"cpu_test\":\"%s\",\"cpu_tests\":%zu,",
                t->replicated ? "Welch t-test on per-run CPU seconds per row (each side's own variance, at least "
                                "one sample's weight), self and total separately; Benjamini-Hochberg adjusted "
                                "q-values across the CPU tests"
                              : "one run on a side: not tested",
                t->ncpu_tests);
    }
    gate_write_json(out, g);
    fputs("\"rows\":[", out);
    int first = 1;
    for (size_t i = 0; i < nrows; i++) {
        const sprof_diff_row *r = rows[i];
        if (hidden(t, r, o->min_pp))
            continue;
        fputs(first ? "\n{\"name\":" : ",\n{\"name\":", out);
        first = 0;
        sprof_json_string(out, r->key);
        fputs(",\"method\":", out);
        sprof_json_string(out, r->method);
        fprintf(out, ",\"class\":\"%s\",\"self\":", cost_word(r->cost));
        json_measure(out, t, r->self, r->run_self, sprof_diff_self_pp(t, r), r->self_z, r->self_p, r->self_q,
                     r->self_sig);
        fputs(",\"total\":", out);
        json_measure(out, t, r->total, r->run_total, sprof_diff_total_pp(t, r), r->total_z, r->total_p, r->total_q,
                     r->total_sig);
        if (t->cpu_known) {
            fputs(",\"self_cpu\":", out);
            json_cpu(out, t, r->run_self_ns, r->cpu_self_t, r->cpu_self_p, r->cpu_self_q, r->cpu_self_sig);
            fputs(",\"total_cpu\":", out);
            json_cpu(out, t, r->run_total_ns, r->cpu_total_t, r->cpu_total_p, r->cpu_total_q, r->cpu_total_sig);
        }
        fputc('}', out);
    }
    fputs("\n]}\n", out);
}

/* ---- arguments ---- */

static int parse_double(const char *opt, const char *s, double lo, double hi, double *v)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s || *end || !(d >= lo && d <= hi)) {
        fprintf(stderr, "sprof-diff: %s %s: expected a number between %g and %g\n", opt, s, lo, hi);
        return -1;
    }
    *v = d;
    return 0;
}

/* Value of an option given as "--opt=value" or "--opt value". */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "sprof-diff: %s needs a value\n", name);
        return NULL;
    }
    return argv[++*i];
}

static int is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* The shared view input options (sprof/cli_load.h) in this parser's style;
 * --symmap is left out: each side names its own symmap among its files. */
static const struct shared_opt {
    const char *name;
    int opt, has_value;
} shared_opts[] = {
    { "--threads", SPROF_OPT_THREADS, 0 }, { "--no-inline", SPROF_OPT_NO_INLINE, 0 },
    { "--force", SPROF_OPT_FORCE, 0 },     { "--from", SPROF_OPT_FROM, 1 },
    { "--to", SPROF_OPT_TO, 1 },           { "--tid", SPROF_OPT_TID, 1 },
    { "--weight", SPROF_OPT_WEIGHT, 1 },
};

/* 1 if argv[*i] is a shared option (applied, *i past its value), 0 if not,
 * -1 after printing what is wrong with it. */
static int shared_option(int argc, char **argv, int *i, options *o)
{
    for (size_t k = 0; k < sizeof shared_opts / sizeof shared_opts[0]; k++) {
        const struct shared_opt *s = &shared_opts[k];
        if (s->has_value ? !is_opt(argv[*i], s->name) : strcmp(argv[*i], s->name) != 0)
            continue;
        const char *v = s->has_value ? opt_value(argc, argv, i, s->name) : NULL;
        if (s->has_value && !v)
            return -1;
        if (sprof_cli_load_option(&o->cli, s->opt, v, "sprof-diff") != 0)
            return -1;
        return 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, options *o, gate *g, side *sides, const char **positional,
                      size_t *npos)
{
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int shared = shared_option(argc, argv, &i, o);
        if (shared < 0)
            return -1;
        if (shared > 0)
            continue;
        if (strcmp(a, "-b") == 0 || strcmp(a, "-a") == 0) {
            side *s = &sides[a[1] == 'a'];
            if (s->nfiles) {
                fprintf(stderr, "sprof-diff: %s given twice\n", a);
                return -1;
            }
            s->files = (const char **)argv + i + 1;
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                i++;
                s->nfiles++;
            }
            if (!s->nfiles) {
                fprintf(stderr, "sprof-diff: %s needs files (a folded file, or traces and their symmap)\n", a);
                return -1;
            }
        } else if (strcmp(a, "--self") == 0) {
            o->sort_total = 0;
        } else if (strcmp(a, "--total") == 0) {
            o->sort_total = 1;
        } else if (strcmp(a, "--lines") == 0) {
            o->lines = 1;
        } else if (strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(a, "--folded") == 0) {
            o->folded = 1;
        } else if (strcmp(a, "--normalize") == 0 || strcmp(a, "-n") == 0) {
            o->normalize = 1;
        } else if (strcmp(a, "--inverted") == 0) {
            o->flame.inverted = 1;
        } else if (is_opt(a, "--min")) {
            if (!(v = opt_value(argc, argv, &i, "--min")) || parse_double("--min", v, 0, 100, &o->min_pp))
                return -1;
        } else if (is_opt(a, "--alpha")) {
            if (!(v = opt_value(argc, argv, &i, "--alpha")) || parse_double("--alpha", v, 1e-12, 1, &o->alpha))
                return -1;
        } else if (is_opt(a, "--floor")) { /* issue 19: replicates and the CI gate */
            if (!(v = opt_value(argc, argv, &i, "--floor")) || parse_double("--floor", v, 0, 100, &o->floor_pp))
                return -1;
        } else if (is_opt(a, "--fail-if")) {
            if (!(v = opt_value(argc, argv, &i, "--fail-if")) || gate_add_rule(g, v, 0) != 0)
                return -1;
        } else if (is_opt(a, "--fail-if-any")) {
            if (!(v = opt_value(argc, argv, &i, "--fail-if-any")) || gate_add_rule(g, v, 1) != 0)
                return -1;
        } else if (is_opt(a, "--svg")) {
            if (!(o->svg = opt_value(argc, argv, &i, "--svg")))
                return -1;
        } else if (is_opt(a, "--title")) {
            if (!(o->title = opt_value(argc, argv, &i, "--title")))
                return -1;
        } else if (is_opt(a, "--width")) {
            double w;
            if (!(v = opt_value(argc, argv, &i, "--width")) || parse_double("--width", v, 100, 100000, &w))
                return -1;
            o->flame.width = (int)w;
        } else if (is_opt(a, "--minwidth")) {
            if (!(v = opt_value(argc, argv, &i, "--minwidth")))
                return -1;
            char *end;
            double m = strtod(v, &end);
            o->flame.minwidth_pct = *end == '%';
            if (end == v || m < 0 || m != m || (*end && strcmp(end, "%") != 0)) {
                fprintf(stderr, "sprof-diff: --minwidth %s: expected pixels or a percentage\n", v);
                return -1;
            }
            o->flame.minwidth = m;
        } else if (strcmp(a, "-o") == 0 || is_opt(a, "--output")) {
            if (!(o->output = opt_value(argc, argv, &i, a[1] == 'o' ? "-o" : "--output")))
                return -1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(SPROF_EXIT_OK);
        } else if (strcmp(a, "--version") == 0) {
            exit(sprof_tool_print_version("sprof-diff"));
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "sprof-diff: unknown option %s\n", a);
            usage(stderr);
            return -1;
        } else {
            positional[(*npos)++] = a;
        }
    }
    if (sides[0].nfiles || sides[1].nfiles) {
        if (*npos || !sides[0].nfiles || !sides[1].nfiles) {
            fprintf(stderr, "sprof-diff: give both sides as -b FILE... -a FILE... (and no other files)\n");
            return -1;
        }
    } else if (*npos == 2) {
        sides[0].files = positional;
        sides[0].nfiles = 1;
        sides[1].files = positional + 1;
        sides[1].nfiles = 1;
    } else {
        usage(stderr);
        return -1;
    }
    if (o->normalize && !o->folded) {
        fprintf(stderr, "sprof-diff: --normalize applies to --folded output\n");
        return -1;
    }
    if (o->folded && o->json) {
        fprintf(stderr, "sprof-diff: choose one of --folded and --json\n");
        return -1;
    }
    o->cpu = o->cli.weight && strcmp(o->cli.weight, "cpu") == 0;
    if (o->cpu && o->folded) {
        fprintf(stderr, "sprof-diff: --weight=cpu applies to the table and --json, not --folded\n");
        return -1;
    }
    return sprof_cli_load_check(&o->cli, "sprof-diff");
}

/* The main output (table, JSON or folded), rendered into memory. */
static int render_main(FILE *out, const sprof_diff_table *t, const side *sides, const options *o, const gate *g)
{
    if (o->folded) {
        static const sprof_fold_format names = { 0 };
        if (sides[0].nruns > 1 || sides[1].nruns > 1) /* the format has counts only */
            fprintf(stderr,
                    "sprof-diff: --folded: %zu and %zu runs summed per side; significance is not part of the "
                    "difffolded format (the table, --json and --svg test the runs)\n",
                    sides[0].nruns, sides[1].nruns);
        return sprof_diff_write_folded(&sides[0].prof, &sides[1].prof, o->normalize, &names, out);
    }
    sprof_diff_row **rows = malloc((t->nrows ? t->nrows : 1) * sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < t->nrows; i++)
        rows[i] = &t->rows[i];
    g_sort = (sort_ctx){ t, o->sort_total, o->cpu };
    qsort(rows, t->nrows, sizeof *rows, by_change);
    if (o->json)
        write_json(out, t, rows, t->nrows, sides, o, g);
    else if (o->cpu)
        write_cpu_table(out, t, rows, t->nrows, o);
    else
        write_table(out, t, rows, t->nrows, sides, o);
    free(rows);
    return ferror(out) ? -1 : 0;
}

static int write_svg(const char *path, const side *sides, options *o, char *err, size_t errlen)
{
    static const sprof_fold_format names = { 0 };
    sprof_flame_tree tree;
    /* One run a side: the floor as in the table. Replicates on both sides:
     * the table's runs test on each frame's per-run shares. */
    int replicated = sides[0].nruns >= 2 && sides[1].nruns >= 2;
    int built = replicated ? sprof_diff_flame_tree_runs(&tree, &sides[0].prof, &sides[1].prof, sides[0].runs,
                                                        sides[0].nruns, sides[1].runs, sides[1].nruns, &names)
                           : sprof_diff_flame_tree(&tree, &sides[0].prof, &sides[1].prof, &names, o->floor_pp);
    if (built != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    char subtitle[1024];
    int n = replicated
                ? snprintf(subtitle, sizeof subtitle,
                           "widths: after (%zu runs, %llu samples); colour: change of share vs before (%zu runs, %llu "
                           "samples), significant = Welch's t-test on the per-run shares of each frame, BH q < %g; pale = "
                           "within run-to-run noise",
                           sides[1].nruns, (unsigned long long)sides[1].samples, sides[0].nruns,
                           (unsigned long long)sides[0].samples, o->alpha)
                : snprintf(subtitle, sizeof subtitle,
                           "widths: after (%llu samples); colour: change of share vs before (%llu samples), BH q < %g "
                           "and change >= %g pp = significant (one run on a side: run-to-run variance unknown)%s",
                           (unsigned long long)sides[1].samples, (unsigned long long)sides[0].samples, o->alpha,
                           o->floor_pp, sides[0].nruns > 1 || sides[1].nruns > 1 ? "; runs summed" : "");
    for (int i = 0; i < 2 && n > 0 && (size_t)n < sizeof subtitle; i++) {
        char warn[256];
        if (sprof_caveats_short(&sides[i].caveats, warn, sizeof warn))
            n += snprintf(subtitle + n, sizeof subtitle - (size_t)n, " \u2014 %s %s", sides[i].label, warn);
    }
    o->flame.differential = 1;
    o->flame.alpha = o->alpha;
    o->flame.title = o->title;
    o->flame.subtitle = subtitle;
    sprof_out_file of;
    int rc = sprof_out_open(&of, path, err, errlen);
    if (rc == 0) {
        if (sprof_flame_write_svg(&tree, &o->flame, of.fp) != 0) {
            snprintf(err, errlen, "%s: write failed", path);
            sprof_out_abort(&of);
            rc = -1;
        } else {
            rc = sprof_out_commit(&of, err, errlen);
        }
    }
    sprof_flame_tree_free(&tree);
    return rc;
}

int main(int argc, char **argv)
{
    options o = { .alpha = 0.05, .floor_pp = SPROF_DIFF_DEFAULT_FLOOR_PP, .flame = { .minwidth = 0.1 } };
    gate g = { 0 };
    side sides[2] = { { .label = "before" }, { .label = "after" } };
    const char **positional = calloc((size_t)argc, sizeof *positional);
    size_t npos;
    if (!positional)
        return fail("out of memory");
    if (parse_args(argc, argv, &o, &g, sides, positional, &npos) != 0) {
        free(positional);
        sprof_cli_load_free(&o.cli);
        gate_free(&g);
        return SPROF_EXIT_USAGE;
    }
    char err[1024];
    int rc = 0;
    sprof_profile_init(&sides[0].prof);
    sprof_profile_init(&sides[1].prof);
    if (load_side(&sides[0], &o, err, sizeof err) != 0 || load_side(&sides[1], &o, err, sizeof err) != 0 ||
        load_runs(&sides[0], &o, err, sizeof err) != 0 || load_runs(&sides[1], &o, err, sizeof err) != 0)
        rc = fail(err);

    sprof_diff_table table = { 0 };
    const sprof_diff_test test = { .alpha = o.alpha, .floor_pp = o.floor_pp };
    if (rc == 0 && sprof_diff_table_build(&table, sides[0].runs, sides[0].nruns, sides[1].runs, sides[1].nruns,
                                          o.lines, &test, err, sizeof err) != 0)
        rc = fail(err);
    if (rc == 0 && (o.cpu || g.cpu_rules) && !table.cpu_known)
        rc = fail(o.cpu ? "--weight=cpu: CPU seconds need cpu-mode traces on both sides (folded files, perf script "
                          "and wall-mode traces carry no CPU weights)"
                        : "--fail-if with % or s: CPU changes need cpu-mode traces on both sides (folded files, "
                          "perf script and wall-mode traces carry no CPU weights)");
    if (rc == 0 && gate_check(&g, &table) != 0)
        rc = fail("out of memory");
    if (rc == 0 && o.lines && table.nrows == 0)
        rc = fail("--lines: neither side has .rb line information (traces with a symmap, or folded "
                  "files written with sprof-fold --lines)");

    /* Warnings only once nothing is refused: a refusal is one line. */
    for (int i = 0; rc == 0 && i < 2; i++)
        if (sides[i].prof.stats.truncated_files) /* a partial profile must not pass as a whole one */
            fprintf(stderr,
                    "sprof-diff: warning: %s side: %llu trace(s) cut short (no END record): it covers only the "
                    "data before the cut\n",
                    sides[i].label, (unsigned long long)sides[i].prof.stats.truncated_files);
    for (int i = 0; rc == 0 && i < 2; i++)
        sprof_accounting_print(stderr, "sprof-diff", &sides[i].prof);
    for (int i = 0; rc == 0 && i < 2; i++) {
        char label[32];
        snprintf(label, sizeof label, "%s side", sides[i].label);
        sprof_caveats_of(&sides[i].prof, &sides[i].caveats);
        sprof_caveats_print(stderr, "sprof-diff", label, &sides[i].caveats);
    }

    char *buf = NULL;
    size_t len = 0;
    if (rc == 0) {
        FILE *mem = open_memstream(&buf, &len);
        int r = mem ? render_main(mem, &table, sides, &o, &g) : -1;
        if (!mem || fclose(mem) != 0 || r != 0)
            rc = fail("out of memory");
    }
    if (rc == 0 && o.svg && write_svg(o.svg, sides, &o, err, sizeof err) != 0)
        rc = fail(err);
    if (rc == 0) {
        if (o.output && strcmp(o.output, "-") != 0) {
            sprof_out_file of;
            if (sprof_out_open(&of, o.output, err, sizeof err) != 0)
                rc = fail(err);
            else if (fwrite(buf, 1, len, of.fp) != len) {
                sprof_out_abort(&of);
                snprintf(err, sizeof err, "%s: write failed", o.output);
                rc = fail(err);
            } else if (sprof_out_commit(&of, err, sizeof err) != 0) {
                rc = fail(err);
            }
        } else if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
            rc = fail("cannot write to stdout");
        }
    }
    free(buf);
    if (rc == 0) { /* the verdict last, after the output it judges */
        gate_print_verdict(stderr, &g);
        if (g.nhits)
            rc = SPROF_DIFF_EXIT_GATE;
    }
    gate_free(&g);
    free_runs(&sides[0]);
    free_runs(&sides[1]);
    sprof_diff_table_free(&table);
    sprof_profile_free(&sides[0].prof);
    sprof_profile_free(&sides[1].prof);
    free(positional);
    sprof_cli_load_free(&o.cli);
    return rc;
}
