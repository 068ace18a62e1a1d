/* How a frame is spelled in folded output: name (Ruby or C), optional
 * ":line", optional cost-class suffix, with the folded separators made
 * impossible inside a name. Spec: docs/folded.md. */
#include <stdio.h>
#include <string.h>

#include "sprof/profile.h"

static const char *const class_suffix[SPROF_COST_COUNT] = {
    [SPROF_COST_USER] = "_[u]",
    [SPROF_COST_RUNTIME] = "_[r]",
    [SPROF_COST_GC] = "_[g]",
    [SPROF_COST_NATIVE] = "_[n]",
    [SPROF_COST_KERNEL] = "_[k]", /* flamegraph.pl's own kernel suffix: it colours these orange */
};

const char *sprof_pframe_display(const sprof_pframe *f, const sprof_fold_format *fmt, char *buf,
                                 size_t buflen)
{
    static const sprof_fold_format plain;
    if (!fmt)
        fmt = &plain;
    if (buflen == 0)
        return "";
    const char *name = fmt->c_names && f->c_name && f->c_name[0] ? f->c_name : f->name;
    if (!name || !name[0])
        name = "[unknown]";
    size_t o = 0;
    for (const char *c = name; *c && o + 1 < buflen; c++) {
        unsigned char ch = (unsigned char)*c;
        /* ';' separates frames and a newline ends the line: never inside a name */
        if (ch == ';')
            ch = ':';
        else if (ch < 0x20 || ch == 0x7f)
            ch = ' ';
        buf[o++] = (char)ch;
    }
    buf[o] = '\0';
    if (fmt->lines && f->line && o < buflen)
        o += (size_t)snprintf(buf + o, buflen - o, ":%u", (unsigned)f->line);
    /* Synthetic roots ([Fiber], [thread ...]) carry no class; a kernel leaf
     * ([syscall write]) is synthetic too but is where the time went. */
    int classed = !(f->flags & SPROF_PFRAME_SYNTHETIC) || f->cost == SPROF_COST_KERNEL;
    /* a name that already ends in flamegraph.pl's annotation (folded or
     * perf-script input: _[k] _[j] _[i] _[w]) keeps it instead */
    if (o >= 4 && buf[o - 4] == '_' && buf[o - 3] == '[' && buf[o - 1] == ']' && strchr("kjiw", buf[o - 2]))
        classed = 0;
    if (fmt->classes && classed && f->cost < SPROF_COST_COUNT && o < buflen)
        snprintf(buf + o, buflen - o, "%s", class_suffix[f->cost]);
    return buf;
}
