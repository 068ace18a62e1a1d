/* Shared input options of the view tools (see cli_load.h). */
#include "sprof/cli_load.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/accounting.h"
#include "sprof/caveats.h"
#include "sprof/inputs.h"
#include "sprof/view_methods.h"

const char sprof_cli_load_usage[] =
    "      --symmap PATH       the symmap to name the binary's frames with (else recognised by content)\n"
    "      --threads           root each stack at [thread NAME TID]\n"
    "      --no-inline         drop inlined frames (only real functions)\n"
    "      --from SEC, --to SEC  keep samples in this window (seconds since start)\n"
    "      --tid N[,N...]      keep only these threads\n"
    "      --force             accept traces and a symmap from different builds\n"
    "      --weight=auto|samples|cpu  CPU time when the inputs carry it (default auto), or samples\n";

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

static int parse_tids(sprof_cli_load *l, const char *s)
{
    const char *p = s;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (errno || end == p || v > UINT32_MAX || (*end && *end != ','))
            return -1;
        uint32_t *t = realloc(l->tids, (l->ntids + 1) * sizeof *t);
        if (!t)
            return -1;
        l->tids = t;
        l->tids[l->ntids++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    }
    return l->ntids ? 0 : -1;
}

int sprof_cli_load_option(sprof_cli_load *l, int opt, const char *arg, const char *tool)
{
    switch (opt) {
    case SPROF_OPT_SYMMAP: l->symmap = arg; return 0;
    case SPROF_OPT_THREADS: l->load.per_thread = 1; return 0;
    case SPROF_OPT_NO_INLINE: l->load.no_inline = 1; return 0;
    case SPROF_OPT_FORCE: l->load.force = 1; return 0;
    case SPROF_OPT_WEIGHT:
        if (strcmp(arg, "auto") != 0 && strcmp(arg, "samples") != 0 && strcmp(arg, "cpu") != 0) {
            fprintf(stderr, "%s: --weight must be auto, samples or cpu, not \"%s\"\n", tool, arg);
            return -1;
        }
        l->weight = arg;
        return 0;
    case SPROF_OPT_FROM:
    case SPROF_OPT_TO:
        if (parse_seconds(arg, opt == SPROF_OPT_FROM ? &l->load.from_ns : &l->load.to_ns) != 0) {
            fprintf(stderr, "%s: --%s wants seconds since the trace start (e.g. 1.5), not \"%s\"\n", tool,
                    opt == SPROF_OPT_FROM ? "from" : "to", arg);
            return -1;
        }
        return 0;
    case SPROF_OPT_TID:
        if (parse_tids(l, arg) != 0) {
            fprintf(stderr, "%s: --tid wants thread ids N[,N...], not \"%s\"\n", tool, arg);
            return -1;
        }
        return 0;
    default:
        fprintf(stderr, "%s: unknown option\n", tool);
        return -1;
    }
}

int sprof_cli_other_option(sprof_cli_load *l, int opt, const char *arg, const char *tool,
                           void (*usage)(FILE *))
{
    if (opt >= SPROF_OPT_LOAD_FIRST && opt <= SPROF_OPT_LOAD_LAST)
        return sprof_cli_load_option(l, opt, arg, tool);
    usage(stderr);
    return -1;
}

int sprof_cli_parse_count(const char *tool, const char *opt, const char *what, const char *arg,
                          size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || *end || arg[0] == '-') {
        fprintf(stderr, "%s: %s wants %s, not \"%s\"\n", tool, opt, what, arg);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

int sprof_cli_parse_weight(const char *tool, const char *weight, const sprof_profile *p, int *weight_cpu)
{
    if (!weight)
        weight = "auto";
    if (sprof_parse_weight(weight, p, weight_cpu) != 0) {
        fprintf(stderr, "%s: --weight must be auto, samples or cpu, not \"%s\"\n", tool, weight);
        return -1;
    }
    return 0;
}

int sprof_cli_load_check(sprof_cli_load *l, const char *tool)
{
    if (l->load.to_ns && l->load.to_ns <= l->load.from_ns) {
        fprintf(stderr, "%s: --to must be after --from\n", tool);
        return -1;
    }
    l->load.tids = l->tids;
    l->load.ntids = l->ntids;
    return 0;
}

int sprof_cli_load_inputs(sprof_cli_load *l, char *const *paths, size_t npaths, sprof_profile *p,
                          sprof_cli_loaded *found, char *err, size_t errlen)
{
    memset(found, 0, sizeof *found);
    sprof_inputs in;
    if (sprof_inputs_classify(&in, (const char *const *)paths, npaths, l->symmap, err, errlen) != 0)
        return -1;
    if ((l->perf_script && sprof_inputs_add_text(&in, l->perf_script, SPROF_INPUT_PERF_SCRIPT) != 0) ||
        (l->alloc_report && sprof_inputs_add_text(&in, l->alloc_report, SPROF_INPUT_ALLOC) != 0)) {
        snprintf(err, errlen, "out of memory");
        sprof_inputs_free(&in);
        return -1;
    }
    found->no_symmap = in.ntraces > 0 && !in.symmap;
    found->first_trace = in.ntraces ? in.traces[0] : NULL;
    found->ntraces = in.ntraces;
    int rc = sprof_inputs_load(&in, p, &l->load, err, errlen);
    sprof_inputs_free(&in);
    return rc;
}

void sprof_cli_warn_no_symmap(const char *tool)
{
    fprintf(stderr, "%s: no symmap given: frames of the program are named from its ELF symbols only\n", tool);
}

int sprof_cli_load_profile(sprof_cli_load *l, const char *tool, char *const *paths, size_t npaths,
                           sprof_profile *p)
{
    char err[1024] = "";
    if (sprof_cli_load_check(l, tool) != 0)
        return -1;
    sprof_cli_loaded found;
    if (sprof_cli_load_inputs(l, paths, npaths, p, &found, err, sizeof err) != 0) {
        /* a refusal is one line: no warnings before it */
        fprintf(stderr, "%s: %s\n", tool, err[0] ? err : "cannot load the inputs");
        return -1;
    }
    if (p->stats.truncated_files && p->nstacks == 0 && p->stats.filtered == 0) { /* nothing before the cut: refuse */
        fprintf(stderr, "%s: %s: cut short before its first sample (no END record)\n", tool,
                p->stats.truncated_files == 1 && found.ntraces == 1 ? found.first_trace : "input traces");
        return -1;
    }
    if (p->stats.truncated_files) /* a partial profile must never pass as a whole one */
        fprintf(stderr, "%s: warning: %" PRIu64 " trace(s) cut short (no END record): the profile covers "
                "only the data before the cut\n", tool, p->stats.truncated_files);
    if (l->quiet)
        return 0;
    if (found.no_symmap)
        sprof_cli_warn_no_symmap(tool);
    sprof_accounting_print(stderr, tool, p);
    sprof_caveats cv;
    sprof_caveats_of(p, &cv);
    sprof_caveats_print(stderr, tool, NULL, &cv);
    return 0;
}

int sprof_cli_load_operands(sprof_cli_load *l, const char *tool, char *const *paths, size_t npaths,
                            void (*usage)(FILE *), sprof_profile *p)
{
    if (npaths == 0) {
        usage(stderr);
        return -1;
    }
    return sprof_cli_load_profile(l, tool, paths, npaths, p);
}

int sprof_cli_check_usage(sprof_cli_load *l, const char *tool, size_t noperands, void (*usage)(FILE *))
{
    if (noperands == 0) {
        usage(stderr);
        return -1;
    }
    return sprof_cli_load_check(l, tool);
}

void sprof_cli_load_free(sprof_cli_load *l)
{
    free(l->tids);
    memset(l, 0, sizeof *l);
}
