/* Printing top rows: an aligned text table (with the source text of each
 * line in lines mode, like pprof -list) or JSON for tools. */
#include "sprof/top.h"

#include <string.h>

#include "sprof/json_out.h"

static const enum sprof_cost class_order[SPROF_COST_COUNT] = {
    SPROF_COST_GC, SPROF_COST_RUNTIME, SPROF_COST_USER, SPROF_COST_NATIVE, SPROF_COST_KERNEL,
};

/* Printable copy of untrusted text for a terminal: control characters
 * (escape sequences included) become spaces, leading blanks are dropped,
 * at most `max` bytes. */
static void print_clean(FILE *out, const char *s, size_t max)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        unsigned char c = (unsigned char)*s;
        putc(c < 0x20 || c == 0x7f ? ' ' : c, out);
    }
    if (*s)
        fputs("...", out);
}

static void location(char *buf, size_t len, const sprof_top_row *r)
{
    if (!r->file[0])
        snprintf(buf, len, "-");
    else if (r->line)
        snprintf(buf, len, "%s:%u", r->file, r->line);
    else
        snprintf(buf, len, "%s", r->file);
}

/* How far the row's Ruby name can be trusted, as a marker after it. */
static const char *trust_mark(const sprof_top_row *r)
{
    switch (sprof_frame_trust(r->name_flags)) {
    case SPROF_TRUST_GUESSED:
        return " [guessed]";
    case SPROF_TRUST_FROM_C:
        return " [from C]";
    default:
        return "";
    }
}

static const char *trust_word(const sprof_top_row *r)
{
    switch (sprof_frame_trust(r->name_flags)) {
    case SPROF_TRUST_GUESSED:
        return "guessed";
    case SPROF_TRUST_FROM_C:
        return "from_c";
    default:
        return "exact";
    }
}

static size_t shown_rows(const sprof_top *t, const sprof_top_options *o)
{
    return o->nrows && o->nrows < t->nrows ? o->nrows : t->nrows;
}

int sprof_top_write_text(const sprof_top *t, const sprof_top_options *o, FILE *out)
{
    char a[32], b[32], loc[512];
    int marked = 0, folded = 0;
    fprintf(out, "Total: %s %s", sprof_format_weight(t->profile_total, t->weight_cpu, a, sizeof a),
            t->weight_cpu ? "CPU" : "samples");
    if (o->focus || o->ignore)
        fprintf(out, ", selected by focus/ignore: %s (%.2f%%)",
                sprof_format_weight(t->selected, t->weight_cpu, b, sizeof b),
                sprof_percent(t->selected, t->profile_total));
    fputs("\nBy class:", out);
    for (int k = 0; k < SPROF_COST_COUNT; k++)
        fprintf(out, "  %s %.2f%%", sprof_cost_name(class_order[k]),
                sprof_percent(t->class_self[class_order[k]], t->total));
    fputc('\n', out);
    char text[1024];
    for (int w = 0; o->caveats && w < SPROF_CAVEAT_COUNT; w++)
        if (sprof_caveat_text(o->caveats, (enum sprof_caveat)w, text, sizeof text))
            fprintf(out, "Warning: %s\n", text);
    if (t->lines && t->unlocated)
        fprintf(out, "Self time not on a %s line (leaf in runtime/native code): %s (%.2f%%)\n",
                o->all_files ? "source" : ".rb", sprof_format_weight(t->unlocated, t->weight_cpu, a, sizeof a),
                sprof_percent(t->unlocated, t->total));
    size_t n = shown_rows(t, o);
    if (n < t->nrows)
        fprintf(out, "Showing top %zu of %zu %s, sorted by %s\n", n, t->nrows, t->lines ? "lines" : "methods",
                o->by_cum ? "cum" : "self");
    sprof_source_cache *src = t->lines ? sprof_source_cache_new(o->source_dir) : NULL;
    if (t->lines)
        fprintf(out, "%10s %7s %10s %7s  %-28s %-32s %s\n", "self", "self%", "cum", "cum%", "location", "method",
                "source");
    else
        fprintf(out, "%10s %7s %10s %7s  %-40s %s\n", "self", "self%", "cum", "cum%", "method", "location");
    for (size_t i = 0; i < n; i++) {
        const sprof_top_row *r = &t->rows[i];
        location(loc, sizeof loc, r);
        fprintf(out, "%10s %6.2f%% %10s %6.2f%%  ", sprof_format_weight(r->self, t->weight_cpu, a, sizeof a),
                sprof_percent(r->self, t->total), sprof_format_weight(r->cum, t->weight_cpu, b, sizeof b),
                sprof_percent(r->cum, t->total));
        if (t->lines) {
            fputs(loc, out);
            fprintf(out, "%*s ", (int)(strlen(loc) < 28 ? 28 - strlen(loc) : 0), "");
            print_clean(out, r->name, 200);
            fprintf(out, "%*s ", (int)(strlen(r->name) < 32 ? 32 - strlen(r->name) : 0), "");
            const char *text = sprof_source_line(src, r->file, r->line);
            if (text)
                print_clean(out, text, 120);
        } else {
            const char *mark = trust_mark(r);
            size_t w = strlen(r->name) + strlen(mark);
            print_clean(out, r->name, 200);
            fputs(mark, out);
            fprintf(out, "%*s ", (int)(w < 40 ? 40 - w : 0), "");
            fputs(loc, out);
            marked |= *mark != 0;
            folded |= (r->name_flags & SPROF_FRAME_FOLDED) != 0;
        }
        fputc('\n', out);
    }
    if (marked)
        fputs("[from C]: Ruby name decoded from the C name (no row in Spinel's map); [guessed]: the"
              " enclosing method was guessed (no .rb source to read); see docs/ruby-names.md\n",
              out);
    if (folded)
        fputs("(+N folded: ...): the compiler merged identical methods into one function (identical"
              " code folding); its time is theirs together\n",
              out);
    sprof_source_cache_free(src);
    return ferror(out) ? -1 : 0;
}

int sprof_top_write_json(const sprof_top *t, const sprof_top_options *o, FILE *out)
{
    fprintf(out, "{\"unit\":\"%s\",\"total\":%llu,\"profile_total\":%llu,\"selected\":%llu,\"view\":\"%s\",\"classes\":{",
            t->weight_cpu ? "nanoseconds" : "samples", (unsigned long long)t->total,
            (unsigned long long)t->profile_total, (unsigned long long)t->selected, t->lines ? "lines" : "methods");
    for (int k = 0; k < SPROF_COST_COUNT; k++)
        fprintf(out, "%s\"%s\":{\"self\":%llu,\"pct\":%.4f}", k ? "," : "", sprof_cost_name(class_order[k]),
                (unsigned long long)t->class_self[class_order[k]],
                sprof_percent(t->class_self[class_order[k]], t->total));
    fputs("}", out);
    if (t->lines)
        fprintf(out, ",\"unlocated\":%llu", (unsigned long long)t->unlocated);
    static const sprof_caveats none;
    const sprof_caveats *cv = o->caveats ? o->caveats : &none;
    fprintf(out, ",\"incomplete_samples\":%llu,\"approx_name_samples\":%llu,\"anon_code_samples\":%llu,\"warnings\":[",
            (unsigned long long)cv->incomplete, (unsigned long long)cv->approx_names,
            (unsigned long long)cv->anon_code);
    char text[1024];
    int nw = 0;
    for (int w = 0; w < SPROF_CAVEAT_COUNT; w++)
        if (sprof_caveat_text(cv, (enum sprof_caveat)w, text, sizeof text)) {
            if (nw++)
                fputc(',', out);
            sprof_json_string(out, text);
        }
    fputc(']', out);
    fprintf(out, ",\"rows_total\":%zu,\"rows\":[", t->nrows);
    sprof_source_cache *src = t->lines ? sprof_source_cache_new(o->source_dir) : NULL;
    size_t n = shown_rows(t, o);
    for (size_t i = 0; i < n; i++) {
        const sprof_top_row *r = &t->rows[i];
        fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
        sprof_json_string(out, r->name);
        fputs(",\"file\":", out);
        sprof_json_string(out, r->file);
        fprintf(out, ",\"line\":%u,\"self\":%llu,\"self_pct\":%.4f,\"cum\":%llu,\"cum_pct\":%.4f,\"class\":\"%s\"",
                r->line, (unsigned long long)r->self, sprof_percent(r->self, t->total), (unsigned long long)r->cum,
                sprof_percent(r->cum, t->total), sprof_cost_name((enum sprof_cost)r->cost));
        if (!t->lines)
            fprintf(out, ",\"name_trust\":\"%s\",\"folded\":%s", trust_word(r),
                    (r->name_flags & SPROF_FRAME_FOLDED) ? "true" : "false");
        if (t->lines) {
            const char *text = sprof_source_line(src, r->file, r->line);
            fputs(",\"source\":", out);
            if (text)
                sprof_json_string(out, text);
            else
                fputs("null", out);
        }
        fputc('}', out);
    }
    fputs("]}\n", out);
    sprof_source_cache_free(src);
    return ferror(out) ? -1 : 0;
}
