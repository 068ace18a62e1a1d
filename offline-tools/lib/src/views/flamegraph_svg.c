/* Render a flame tree as a self-contained interactive SVG: one <g> per
 * frame (rect + truncated label + <title> tooltip), a legend, the
 * Reset Zoom / Search / ic controls and the script of flamegraph_js.c.
 * Layout follows flamegraph.pl's conventions: 16 px frames, 12 px
 * Verdana, 10 px side padding, root "all" at the bottom (top if inverted),
 * siblings in name order. */
#include "sprof/flamegraph.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph_internal.h"

enum {
    FRAME_H = 16,
    FONT_SIZE = 12,
    XPAD = 10,
    TOP_PAD = 68,    /* title, subtitle, legend */
    BOTTOM_PAD = 34, /* details line, "Matched:" */
};
#define FONT_WIDTH 0.59

typedef struct rgb {
    int r, g, b;
} rgb;

/* FNV-1a: a stable per-name variation so a frame keeps its colour between
 * runs and between graphs. */
static double name_variation(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return (double)(h >> 8) / (double)(1u << 24);
}

static int clamp255(double v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (int)lround(v);
}

/* Cost-class colours: GC red, runtime grey, user blue, native yellow,
 * kernel orange (flamegraph.pl's colour for its _[k] kernel frames). */
static rgb class_colour(int cost, double v)
{
    rgb c;
    switch (cost) {
    case SPROF_COST_GC:
        c = (rgb){ clamp255(215 + 40 * v), clamp255(50 + 80 * v), clamp255(40 + 60 * v) };
        break;
    case SPROF_COST_RUNTIME: {
        int g = clamp255(150 + 60 * v);
        c = (rgb){ g, g, clamp255(g + 8) };
        break;
    }
    case SPROF_COST_USER:
        c = (rgb){ clamp255(60 + 70 * v), clamp255(125 + 70 * v), clamp255(220 + 35 * v) };
        break;
    case SPROF_COST_KERNEL:
        c = (rgb){ clamp255(190 + 65 * v), clamp255(90 + 65 * v), 0 };
        break;
    default: /* native and anything unknown */
        c = (rgb){ clamp255(225 + 30 * v), clamp255(185 + 50 * v), clamp255(40 + 60 * v) };
        break;
    }
    return c;
}

static const char *class_label(int cost)
{
    switch (cost) {
    case SPROF_COST_GC: return "GC / allocator";
    case SPROF_COST_RUNTIME: return "Spinel runtime";
    case SPROF_COST_USER: return "Ruby (user)";
    case SPROF_COST_KERNEL: return "kernel";
    default: return "native";
    }
}

/* Share of a node in its profile, in percent. */
static double pct(uint64_t v, uint64_t total)
{
    return total ? 100.0 * (double)v / (double)total : 0.0;
}

static int significant(const sprof_flame_node *n, double alpha)
{
    return !isnan(n->qvalue) && n->qvalue < alpha;
}

/* Differential colour: red grew, blue shrank; intensity is the change in
 * share relative to the largest change drawn; changes that are not
 * significant are drawn at a quarter of that intensity. */
static rgb diff_colour(const sprof_flame_node *n, uint64_t total_after, uint64_t total_before,
                       double max_delta, double alpha)
{
    double d = pct(n->value, total_after) - pct(n->before, total_before);
    double i = max_delta > 0 ? fabs(d) / max_delta : 0;
    if (!significant(n, alpha))
        i *= 0.25;
    int fade = clamp255(255 - 215 * i);
    if (d > 0)
        return (rgb){ 255, fade, fade };
    if (d < 0)
        return (rgb){ fade, fade, 255 };
    return (rgb){ 250, 250, 250 };
}

static void fmt_count(char *buf, size_t len, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

static void write_tooltip(FILE *out, const sprof_flame_tree *t, const sprof_flame_node *n,
                          const sprof_flame_options *o)
{
    const char *unit = o->count_name ? o->count_name : "samples";
    char a[40], b[40];
    sprof_flame_xml_escape(out, n->name, SIZE_MAX);
    fmt_count(a, sizeof a, n->value);
    if (!o->differential) {
        fprintf(out, " (%s ", a);
        sprof_flame_xml_escape(out, unit, SIZE_MAX);
        fprintf(out, ", %.2f%%)", pct(n->value, t->nodes[0].value));
        return;
    }
    fmt_count(b, sizeof b, n->before);
    double pa = pct(n->value, t->nodes[0].value), pb = pct(n->before, t->nodes[0].before);
    fprintf(out, "&#10;before: %s (%.2f%%)&#10;after: %s (%.2f%%)&#10;change: %+.2f pp", b, pb, a, pa,
            pa - pb);
    if (isnan(n->qvalue))
        fputs(", not tested", out);
    else
        fprintf(out, ", q = %.2g, %s", n->qvalue,
                significant(n, o->alpha > 0 ? o->alpha : 0.05) ? "significant" : "within noise");
}

/* The label drawn inside a frame w px wide (flamegraph.pl's rule: whole
 * name if it fits, else cut with "..", nothing under 3 characters). */
static void write_label(FILE *out, const char *name, double w)
{
    double fit = floor((w - 3) / (FONT_SIZE * FONT_WIDTH));
    if (!(fit >= 3))
        return;
    long maxc = fit > 100000 ? 100000 : (long)fit;
    size_t len = sprof_flame_utf8_len(name);
    if ((long)len <= maxc) {
        sprof_flame_xml_escape(out, name, SIZE_MAX);
    } else {
        sprof_flame_xml_escape(out, name, (size_t)(maxc - 2));
        fputs("..", out);
    }
}

static void write_legend(FILE *out, const sprof_flame_options *o, int width)
{
    fputs("<g id=\"legend\">\n", out);
    double x = XPAD;
    if (!o->differential) {
        static const int order[] = { SPROF_COST_USER, SPROF_COST_RUNTIME, SPROF_COST_GC, SPROF_COST_NATIVE,
                                     SPROF_COST_KERNEL };
        for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
            rgb c = class_colour(order[i], 0.5);
            fprintf(out,
                    "<rect x=\"%.0f\" y=\"46\" width=\"14\" height=\"12\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>"
                    "<text x=\"%.0f\" y=\"56\">%s</text>\n",
                    x, c.r, c.g, c.b, x + 18, class_label(order[i]));
            x += 150;
        }
    } else {
        static const struct { rgb c; const char *label; } keys[] = {
            { { 255, 40, 40 }, "grew (significant)" },
            { { 255, 201, 201 }, "grew (within noise)" },
            { { 40, 40, 255 }, "shrank (significant)" },
            { { 201, 201, 255 }, "shrank (within noise)" },
        };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            fprintf(out,
                    "<rect x=\"%.0f\" y=\"46\" width=\"14\" height=\"12\" fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>"
                    "<text x=\"%.0f\" y=\"56\">%s</text>\n",
                    x, keys[i].c.r, keys[i].c.g, keys[i].c.b, x + 18, keys[i].label);
            x += 170;
        }
    }
    fprintf(out,
            "<rect x=\"%.0f\" y=\"46\" width=\"14\" height=\"12\" fill=\"rgb(230,0,230)\" rx=\"2\" ry=\"2\"/>"
            "<text x=\"%.0f\" y=\"56\">search match</text>\n",
            x, x + 18);
    (void)width;
    fputs("</g>\n", out);
}

int sprof_flame_write_svg(const sprof_flame_tree *t, const sprof_flame_options *o, FILE *out)
{
    int width = o->width > 0 ? o->width : 1200;
    if (width < 2 * XPAD + 10)
        width = 2 * XPAD + 10;
    double alpha = o->alpha > 0 ? o->alpha : 0.05;
    const sprof_flame_node *root = &t->nodes[0];
    uint64_t total = root->value;
    double plotw = width - 2.0 * XPAD;
    double scale = total ? plotw / (double)total : 0;

    /* Offsets (weight units) of every node: parents precede children in
     * the node array, so one forward pass places each node's children. */
    uint64_t *xoff = calloc(t->nnodes ? t->nnodes : 1, sizeof *xoff);
    unsigned char *visible = calloc(t->nnodes ? t->nnodes : 1, 1);
    if (!xoff || !visible) {
        free(xoff);
        free(visible);
        return -1;
    }
    uint32_t maxdepth = 0;
    double max_delta = 0;
    for (size_t i = 0; i < t->nnodes; i++) {
        const sprof_flame_node *n = &t->nodes[i];
        uint64_t x = xoff[i];
        for (uint32_t c = n->first_child; c != SPROF_FLAME_NONE; c = t->nodes[c].next_sibling) {
            xoff[c] = x;
            x += t->nodes[c].value;
        }
        if (n->value == 0 || (i > 0 && !visible[n->parent]))
            continue;
        double w = (double)n->value * scale;
        if (o->minwidth_pct ? pct(n->value, total) < o->minwidth : w < o->minwidth)
            continue;
        visible[i] = 1;
        if (n->depth > maxdepth)
            maxdepth = n->depth;
        if (o->differential) {
            double d = fabs(pct(n->value, total) - pct(n->before, root->before));
            if (d > max_delta)
                max_delta = d;
        }
    }

    int height = TOP_PAD + (int)(maxdepth + 1) * FRAME_H + BOTTOM_PAD;
    const char *title = o->title ? o->title : o->differential ? "Differential Flame Graph" : "Flame Graph";

    fprintf(out,
            "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<!-- Generated by sprof-flamegraph. Click a frame to zoom, Search (or Ctrl-F) to highlight "
            "frames by regular expression; URL options ?s=REGEX&i=1&z=N. -->\n",
            width, height, width, height);
    fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
          "<stop stop-color=\"#f4f4f4\" offset=\"5%\"/><stop stop-color=\"#dcdce6\" offset=\"95%\"/>"
          "</linearGradient></defs>\n"
          "<style type=\"text/css\">\n"
          "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
          "#title { text-anchor: middle; font-size: 17px; }\n"
          "#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
          "#search, #ignorecase, #unzoom { cursor: pointer; opacity: 0.6; }\n"
          "#search:hover, #ignorecase:hover, #unzoom:hover, #ignorecase.on { opacity: 1; }\n"
          "#matched { text-anchor: end; }\n"
          ".hide { display: none; }\n"
          "g.f { cursor: pointer; }\n"
          "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
          "g.parent { opacity: 0.5; }\n"
          "</style>\n",
          out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n", width, height);
    fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"22\">", width / 2.0);
    sprof_flame_xml_escape(out, title, SIZE_MAX);
    fputs("</text>\n", out);
    if (o->subtitle) {
        fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"38\">", width / 2.0);
        sprof_flame_xml_escape(out, o->subtitle, SIZE_MAX);
        fputs("</text>\n", out);
    }
    fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"22\">Reset Zoom</text>\n", XPAD);
    fprintf(out, "<text id=\"search\" x=\"%d\" y=\"22\">Search</text>\n", width - XPAD - 110);
    fprintf(out, "<text id=\"ignorecase\" x=\"%d\" y=\"22\">ic</text>\n", width - XPAD - 16);
    fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", XPAD, height - 14);
    fprintf(out, "<text id=\"matched\" class=\"hide\" x=\"%d\" y=\"%d\"></text>\n", width - XPAD, height - 14);
    write_legend(out, o, width);

    if (total == 0)
        fprintf(out, "<text id=\"empty\" x=\"%.1f\" y=\"%d\" style=\"text-anchor: middle\">no samples</text>\n",
                width / 2.0, TOP_PAD + FRAME_H - 4);
    fprintf(out,
            "<g id=\"frames\" data-total=\"%llu\" data-before-total=\"%llu\" data-xpad=\"%d\" "
            "data-plotw=\"%.2f\" data-fontsize=\"%d\">\n",
            (unsigned long long)total, (unsigned long long)root->before, XPAD, plotw, FONT_SIZE);
    for (size_t i = 0; i < t->nnodes; i++) {
        if (!visible[i])
            continue;
        const sprof_flame_node *n = &t->nodes[i];
        double x = XPAD + (double)xoff[i] * scale, w = (double)n->value * scale;
        int y = o->inverted ? TOP_PAD + (int)n->depth * FRAME_H
                            : height - BOTTOM_PAD - (int)(n->depth + 1) * FRAME_H;
        rgb c = o->differential ? diff_colour(n, total, root->before, max_delta, alpha)
                                : class_colour(n->cost, name_variation(n->name));
        fprintf(out, "<g class=\"f\" data-x=\"%llu\" data-v=\"%llu\" data-d=\"%u\"",
                (unsigned long long)xoff[i], (unsigned long long)n->value, n->depth);
        if (o->differential)
            fprintf(out, " data-b=\"%llu\"", (unsigned long long)n->before);
        fputs(" data-n=\"", out);
        sprof_flame_xml_escape(out, n->name, SIZE_MAX);
        fputs("\"><title>", out);
        write_tooltip(out, t, n, o);
        fprintf(out,
                "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
                "rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\">",
                x, y, w, FRAME_H - 1, c.r, c.g, c.b, x + 3, y + FRAME_H - 5);
        write_label(out, n->name, w);
        fputs("</text></g>\n", out);
    }
    fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
    fputs(sprof_flame_js, out);
    fputs("]]></script>\n</svg>\n", out);
    free(xoff);
    free(visible);
    fflush(out);
    return ferror(out) ? -1 : 0;
}
