/* The CI gate of sprof-diff: rules, their check against the table, the
 * one-line verdict and its JSON. */
#include "gate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/json_out.h"

int gate_add_rule(gate *g, const char *spec, int any_method)
{
    const char *num = spec;
    gate_rule r = { 0 };
    if (!any_method) {
        const char *colon = strrchr(spec, ':');
        if (!colon || colon == spec) {
            fprintf(stderr, "sprof-diff: --fail-if %s: expected METHOD:+PP (e.g. 'Foo#bar:+2')\n", spec);
            return -1;
        }
        r.method = spec;
        r.method_len = (size_t)(colon - spec);
        num = colon + 1;
    }
    char *end;
    errno = 0;
    double pp = strtod(num, &end);
    if (*end == '%') {
        r.unit = GATE_PCT;
        end++;
    } else if (*end == 's') {
        r.unit = GATE_SECONDS;
        end++;
    }
    double hi = r.unit == GATE_PP ? 100 : 1e9;
    if (*num != '+' || errno || end == num + 1 || *end || !(pp >= 0 && pp <= hi)) {
        fprintf(stderr,
                "sprof-diff: %s %s: expected +PP (a growth of the total share in percentage points, 0-100), "
                "+N%% (of the total CPU seconds per run) or +Ns (CPU seconds per run)\n",
                any_method ? "--fail-if-any" : "--fail-if", spec);
        return -1;
    }
    r.limit_pp = pp;
    if (r.unit != GATE_PP)
        g->cpu_rules++;
    gate_rule *rules = realloc(g->rules, (g->nrules + 1) * sizeof *rules);
    if (!rules) {
        fprintf(stderr, "sprof-diff: out of memory\n");
        return -1;
    }
    g->rules = rules;
    g->rules[g->nrules++] = r;
    return 0;
}

static int rule_matches(const gate_rule *r, const sprof_diff_row *row)
{
    return !r->method || (strlen(row->key) == r->method_len && memcmp(row->key, r->method, r->method_len) == 0);
}

int gate_check(gate *g, const sprof_diff_table *t)
{
    g->nhits = g->nmissing = 0;
    if (!g->nrules)
        return 0;
    g->hits = malloc((t->nrows + 1) * sizeof *g->hits);
    g->missing = malloc(g->nrules * sizeof *g->missing);
    if (!g->hits || !g->missing)
        return -1;
    int *row_hit = calloc(t->nrows + 1, sizeof *row_hit); /* a row is reported once, at its strictest rule */
    if (!row_hit)
        return -1;
    for (size_t k = 0; k < g->nrules; k++) {
        const gate_rule *r = &g->rules[k];
        int found = 0;
        for (size_t i = 0; i < t->nrows; i++) {
            const sprof_diff_row *row = &t->rows[i];
            if (!rule_matches(r, row))
                continue;
            found = 1;
            double change;
            int sig;
            if (r->unit == GATE_PP) {
                change = sprof_diff_total_pp(t, row);
                sig = row->total_sig;
            } else {
                double b = sprof_diff_cpu_s(t, row->run_total_ns[0], 0), a = sprof_diff_cpu_s(t, row->run_total_ns[1], 1);
                change = r->unit == GATE_SECONDS ? a - b : b > 0 ? 100.0 * (a - b) / b : (a > 0 ? INFINITY : 0);
                sig = row->cpu_total_sig;
            }
            if (!sig || !(change > r->limit_pp))
                continue;
            double q = r->unit == GATE_PP ? row->total_q : row->cpu_total_q;
            if (!row_hit[i]) {
                row_hit[i] = (int)g->nhits + 1;
                g->hits[g->nhits++] = (gate_hit){ row, change, r->limit_pp, r->unit, q };
            } else if (r->unit == g->hits[row_hit[i] - 1].unit && r->limit_pp < g->hits[row_hit[i] - 1].limit_pp) {
                g->hits[row_hit[i] - 1].limit_pp = r->limit_pp;
            }
        }
        if (!found && r->method)
            g->missing[g->nmissing++] = r->method;
    }
    free(row_hit);
    return 0;
}

static size_t method_len_of(const gate *g, const char *method)
{
    for (size_t k = 0; k < g->nrules; k++)
        if (g->rules[k].method == method)
            return g->rules[k].method_len;
    return strlen(method);
}

void gate_print_verdict(FILE *out, const gate *g)
{
    if (!g->nrules)
        return;
    if (g->nhits) {
        fprintf(out, "sprof-diff: gate: FAIL: %zu method%s grew significantly beyond the limit:", g->nhits,
                g->nhits == 1 ? "" : "s");
        static const char *const what[] = { "total", "total CPU", "total CPU" };
        static const char *const unit[] = { " pp", "%", " s" };
        for (size_t i = 0; i < g->nhits; i++) {
            const gate_hit *h = &g->hits[i];
            fprintf(out, "%s %s %s %+.*f%s > +%g%s (q %.2g)", i ? ";" : "", h->row->key, what[h->unit],
                    h->unit == GATE_SECONDS ? 3 : 2, h->change_pp, unit[h->unit], h->limit_pp, unit[h->unit], h->q);
        }
    } else {
        fprintf(out, "sprof-diff: gate: pass: no method's total share or CPU grew significantly beyond its limit");
    }
    for (size_t i = 0; i < g->nmissing; i++)
        fprintf(out, "%s%.*s not in either profile", i ? ", " : " (", (int)method_len_of(g, g->missing[i]),
                g->missing[i]);
    fputs(g->nmissing ? ")\n" : "\n", out);
}

void gate_write_json(FILE *out, const gate *g)
{
    if (!g->nrules)
        return;
    fprintf(out, "\"gate\":{\"tripped\":%s,\"exit\":%d,\"failures\":[", g->nhits ? "true" : "false",
            g->nhits ? SPROF_DIFF_EXIT_GATE : 0);
    for (size_t i = 0; i < g->nhits; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", out);
        sprof_json_string(out, g->hits[i].row->key);
        static const char *const unit[] = { "pp", "%", "s" };
        fprintf(out, ",\"change\":%.6g,\"limit\":%g,\"unit\":\"%s\",\"q\":%.6g", g->hits[i].change_pp,
                g->hits[i].limit_pp, unit[g->hits[i].unit], g->hits[i].q);
        if (g->hits[i].unit == GATE_PP) /* the names of format 1 of this object */
            fprintf(out, ",\"change_pp\":%.6g,\"limit_pp\":%g", g->hits[i].change_pp, g->hits[i].limit_pp);
        fputc('}', out);
    }
    fputs("],\"missing\":[", out);
    for (size_t i = 0; i < g->nmissing; i++) {
        char name[4096];
        snprintf(name, sizeof name, "%.*s", (int)method_len_of(g, g->missing[i]), g->missing[i]);
        if (i)
            fputc(',', out);
        sprof_json_string(out, name);
    }
    fputs("]},", out);
}

void gate_free(gate *g)
{
    free(g->rules);
    free(g->hits);
    free(g->missing);
    memset(g, 0, sizeof *g);
}
