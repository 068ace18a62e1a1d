/* Incomplete stacks and guessed names: figures and sentences shared by
 * every view (sprof/caveats.h). */
#include "sprof/caveats.h"

#include <inttypes.h>
#include <string.h>

void sprof_caveats_of(const sprof_profile *p, sprof_caveats *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        c->samples += s->samples;
        int approx = 0, anon = 0;
        for (uint32_t j = 0; j < s->nframes; j++) {
            uint32_t f = s->frames[j];
            if (f < p->nframes) {
                approx |= (p->frames[f].flags & SPROF_FRAME_NAME_APPROX) != 0;
                anon |= (p->frames[f].flags & SPROF_PFRAME_ANON_CODE) != 0;
            }
        }
        if (approx)
            c->approx_names += s->samples;
        if (anon)
            c->anon_code += s->samples;
    }
    /* counted by the trace loader as samples were kept; folded input has none */
    c->incomplete = p->stats.incomplete < c->samples ? p->stats.incomplete : c->samples;
    c->forced = p->stats.forced < c->samples ? p->stats.forced : c->samples;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "N of M samples (x%) <what>" in buf; 0 (buf "") when part is 0. */
static int sentence(char *buf, size_t buflen, uint64_t part, uint64_t whole, const char *what)
{
    if (!part)
        return 0;
    snprintf(buf, buflen, "%" PRIu64 " of %" PRIu64 " samples (%.1f%%) %s", part, whole, pct(part, whole), what);
    return 1;
}

int sprof_caveat_text(const sprof_caveats *c, enum sprof_caveat which, char *buf, size_t buflen)
{
    if (buflen)
        buf[0] = '\0';
    switch (which) {
    case SPROF_CAVEAT_INCOMPLETE:
        return sentence(buf, buflen, c->incomplete, c->samples,
                        "have an incomplete stack (it reaches neither main, a fiber nor a thread's start): their "
                        "callers are unknown, so the callers' cum figures are too low; the usual cause is code "
                        "without frame pointers or unwind information (build with -fno-omit-frame-pointer, keep "
                        ".eh_frame), or a stack deeper than the runtime records");
    case SPROF_CAVEAT_APPROX_NAMES:
        return sentence(buf, buflen, c->approx_names, c->samples,
                        "have a frame whose Ruby name is a guess (derived from the C name, not Spinel's symbol "
                        "map): a method may be shown under a wrong name; regenerate the symmap with "
                        "app.symbols.json beside the binary");
    case SPROF_CAVEAT_FORCED:
        return sentence(buf, buflen, c->forced, c->samples,
                        "were read with --force against a symmap of another build: their names and lines are "
                        "likely wrong; make the symmap from the binary that ran (sprof-symmap BINARY -o "
                        "BINARY.symmap)");
    case SPROF_CAVEAT_ANON_CODE:
        return sentence(buf, buflen, c->anon_code, c->samples,
                        "ran code in anonymous executable memory (code a JIT compiled: node, a JVM, LuaJIT) "
                        "whose names no perf map gave; it is shown as one [anonymous code] frame; make the JIT "
                        "write /tmp/perf-PID.map (node --perf-basic-prof, python3.12 -X perf, perf-map-agent) "
                        "and sprof names it");
    default:
        return 0;
    }
}

/* One "<sep>x% of samples <what>" part of the short form, at buf + *o. */
static void add_part(char *buf, size_t buflen, size_t *o, const char **sep, const char *what, uint64_t part,
                     uint64_t whole)
{
    if (!part || *o >= buflen)
        return;
    int n = snprintf(buf + *o, buflen - *o, "%s%.1f%% of samples %s", *sep, pct(part, whole), what);
    *o += n > 0 ? (size_t)n : 0;
    *sep = ", ";
}

int sprof_caveats_short(const sprof_caveats *c, char *buf, size_t buflen)
{
    if (!buflen)
        return 0;
    buf[0] = '\0';
    if (!c->incomplete && !c->approx_names && !c->forced && !c->anon_code)
        return 0;
    int n = snprintf(buf, buflen, "warning:%s", c->forced ? " FORCED:" : "");
    size_t o = n > 0 ? (size_t)n : 0;
    const char *sep = " ";
    add_part(buf, buflen, &o, &sep, "named through a symmap of another build", c->forced, c->samples);
    add_part(buf, buflen, &o, &sep, "have incomplete stacks", c->incomplete, c->samples);
    add_part(buf, buflen, &o, &sep, "have guessed Ruby names", c->approx_names, c->samples);
    add_part(buf, buflen, &o, &sep, "in unnamed JIT code", c->anon_code, c->samples);
    return 1;
}

size_t sprof_caveats_print(FILE *out, const char *tool, const char *label, const sprof_caveats *c)
{
    size_t printed = 0;
    char text[1024];
    for (int w = 0; w < SPROF_CAVEAT_COUNT; w++)
        if (sprof_caveat_text(c, (enum sprof_caveat)w, text, sizeof text)) {
            fprintf(out, "%s: warning: %s%s%s\n", tool, label ? label : "", label ? ": " : "", text);
            printed++;
        }
    return printed;
}
