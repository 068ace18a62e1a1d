/* The timeline page: one self-contained HTML file (no network) with a lane
 * per thread over time, each sample drawn where its CPU ran (the weight up
 * to its time) and coloured by cost class: user, runtime, gc (any collector
 * frame on the stack), native, kernel; collector and kernel spans as
 * markers above each lane; selecting a time range draws that range's flame
 * graph. Needs the profile's timeline (traces). Data: JSON in a
 * <script type="application/json"> element, read by timeline_js.c. */
#include "sprof/export.h"

#include <stdlib.h>
#include <string.h>

#include "sprof/caveats.h"
#include "sprof/json_out.h"
#include "sprof/out_file.h"
#include "sprof/trace_format.h"
#include "sprof/view_methods.h"
#include "timeline_internal.h"

static const char page_head[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>sprof timeline</title>\n<style>\n"
    "body{font:13px sans-serif;margin:12px;color:#222}\n"
    "#lanes .lane{display:flex;align-items:center;margin:6px 0}\n"
    ".lname{width:180px;overflow:hidden;white-space:nowrap;font-family:monospace}\n"
    "canvas{border:1px solid #ccc;cursor:crosshair}\n"
    ".key{margin-right:14px;padding-left:4px}\n"
    "#flame{position:relative;height:420px;width:1200px;margin-left:180px;overflow:auto}\n"
    ".fg{position:absolute;height:16px;font:11px monospace;overflow:hidden;white-space:nowrap;"
    "border-radius:2px;padding-left:2px;box-sizing:border-box}\n"
    ".fg.hit{outline:2px solid #c0f}\n"
    "#caveat{color:#b00}\n"
    "</style></head><body>\n"
    "<h2 id=\"title\"></h2><div id=\"caveat\"></div><div id=\"legend\"></div>\n"
    "<p><button id=\"zoom\">zoom to selection</button> <button id=\"reset\">reset</button> "
    "search: <input id=\"search\" placeholder=\"regex\"> <span id=\"axis\"></span></p>\n"
    "<div id=\"lanes\"></div><p id=\"range\"></p><div id=\"flame\"></div>\n";

/* The class a sample is drawn in: off-CPU (wall mode, the thread waited),
 * else its stack's (sprof_pstack_time_class). */
#define CLASS_OFFCPU SPROF_COST_COUNT
static int time_class(const sprof_profile *p, const sprof_timeline_sample *e)
{
    if (e->flags & SPROF_SAMPLE_OFFCPU)
        return CLASS_OFFCPU;
    return sprof_pstack_time_class(p, &p->stacks[e->stack]);
}

static int write_data(FILE *out, const sprof_profile *p, const sprof_methods *m)
{
    char name[1024], warn[256];
    const char *base = p->binary_path && *p->binary_path ? strrchr(p->binary_path, '/') : NULL;
    snprintf(name, sizeof name, "%s", base ? base + 1 : p->binary_path && *p->binary_path ? p->binary_path : "sprof");
    sprof_caveats cv;
    sprof_caveats_of(p, &cv);
    if (!sprof_caveats_short(&cv, warn, sizeof warn))
        warn[0] = '\0';
    fputs("<script type=\"application/json\" id=\"data\">{\"name\":", out);
    sprof_json_string(out, name);
    fputs(",\"caveat\":", out);
    sprof_json_string(out, warn);
    fprintf(out, ",\"unit\":\"%s\",\"period\":%llu,\"classes\":[\"user\",\"runtime\",\"gc\",\"native\",\"kernel\",\"off-CPU\"]",
            p->mode == SPROF_MODE_WALL ? "wall time" : "CPU time",
            (unsigned long long)(p->hz ? 1000000000ull / p->hz : 1000000ull));
    fputs(",\n\"methods\":[", out);
    for (size_t i = 0; i < m->nmethods; i++) {
        fputs(i ? ",[" : "[", out);
        sprof_json_string(out, m->methods[i].name);
        fprintf(out, ",%u]", (unsigned)(m->methods[i].cost < SPROF_COST_COUNT ? m->methods[i].cost : SPROF_COST_NATIVE));
    }
    fputs("],\n\"stacks\":[", out);
    for (size_t i = 0; i < p->nstacks; i++) {
        const sprof_pstack *s = &p->stacks[i];
        fputs(i ? ",[" : "[", out);
        for (uint32_t j = 0; j < s->nframes; j++)
            fprintf(out, j ? ",%u" : "%u", m->of_frame[s->frames[j]]);
        fputc(']', out);
    }
    uint64_t origin = p->timeline_origin_ns, end = 0;
    fputs("],\n\"threads\":[", out);
    /* one pass per thread over the timeline: threads are few in a page a
     * person reads (a trace of thousands of threads gives thousands of lanes) */
    for (size_t k = 0; k < p->nthreads; k++) {
        uint32_t tid = p->threads[k].tid;
        fprintf(out, "%s{\"tid\":%u,\"name\":", k ? ",\n" : "", tid);
        sprof_json_string(out, p->threads[k].name);
        const char *keys[] = { "t", "w", "s", "c" };
        for (int f = 0; f < 4; f++) {
            fprintf(out, ",\"%s\":[", keys[f]);
            size_t n = 0;
            for (size_t i = 0; i < p->ntimeline; i++) {
                const sprof_timeline_sample *e = &p->timeline[i];
                if (e->tid != tid)
                    continue;
                uint64_t t = e->time_ns > origin ? e->time_ns - origin : 0;
                if (t > end)
                    end = t;
                uint64_t v = f == 0 ? t : f == 1 ? e->weight_ns : f == 2 ? e->stack : (uint64_t)time_class(p, e);
                fprintf(out, n++ ? ",%llu" : "%llu", (unsigned long long)v);
            }
            fputc(']', out);
        }
        fputc('}', out);
    }
    fprintf(out, "],\n\"end\":%llu}</script>\n", (unsigned long long)(end + 1));
    return ferror(out) ? -1 : 0;
}

int sprof_write_timeline(const sprof_profile *p, FILE *out, char *err, size_t errlen)
{
    if (!p->ntimeline || !p->nthreads) {
        snprintf(err, errlen, "no samples in time (the timeline needs traces, not folded or perf-script input)");
        return -1;
    }
    sprof_methods m;
    if (sprof_methods_build(&m, p, err, errlen) != 0)
        return -1;
    fputs(page_head, out);
    int rc = write_data(out, p, &m);
    fputs("<script>\n", out);
    fputs(sprof_timeline_js, out);
    fputs("</script>\n</body></html>\n", out);
    sprof_methods_free(&m);
    if (rc != 0 || ferror(out)) {
        snprintf(err, errlen, "write error");
        return -1;
    }
    return 0;
}

int sprof_export_timeline(const sprof_profile *p, const char *path, char *err, size_t errlen)
{
    sprof_out_file f;
    if (sprof_out_open(&f, path, err, errlen) != 0)
        return -1;
    char why[256];
    if (sprof_write_timeline(p, f.fp, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", path, why);
        sprof_out_abort(&f);
        return -1;
    }
    return sprof_out_commit(&f, err, errlen);
}
