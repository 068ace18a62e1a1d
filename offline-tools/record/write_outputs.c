/* What sprof-record writes: the view -o asks for by its extension, and
 * the top methods on stderr. All rendering is the offline library's (the
 * same code as sprof-flamegraph, sprof-fold, sprof-export, sprof-top). */
#include <stdio.h>
#include <string.h>

#include "sprof/caveats.h"
#include "sprof/export.h"
#include "sprof/flamegraph.h"
#include "sprof/out_file.h"
#include "sprof/top.h"
#include "record.h"

static const struct {
    const char *ext;
    record_format fmt;
    const char *name;
} formats[] = {
    { ".svg", RECORD_SVG, "flame graph" },
    { ".folded", RECORD_FOLDED, "folded stacks" },
    { ".pb.gz", RECORD_PPROF, "pprof profile" },
    { ".speedscope.json", RECORD_SPEEDSCOPE, "speedscope profile" },
    { ".bin", RECORD_RAW, "raw trace" },
    { ".trace", RECORD_RAW, "raw trace" },
};

int record_format_of(const char *path, record_format *fmt)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        size_t e = strlen(formats[i].ext);
        if (n > e && strcmp(path + n - e, formats[i].ext) == 0) {
            *fmt = formats[i].fmt;
            return 0;
        }
    }
    return -1;
}

const char *record_format_name(record_format fmt)
{
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (formats[i].fmt == fmt)
            return formats[i].name;
    return "?";
}

/* As sprof-flamegraph draws it: the caveats (incomplete stacks, guessed
 * names) under the title. */
static int write_svg(const sprof_profile *p, const sprof_fold_format *fmt, const char *title, FILE *out)
{
    sprof_flame_options fo = { .minwidth = 0.1, .title = title };
    fo.count_name = fmt->weight_cpu ? "ns CPU" : "samples";
    sprof_caveats cv;
    sprof_caveats_of(p, &cv);
    char warn[256];
    if (sprof_caveats_short(&cv, warn, sizeof warn))
        fo.subtitle = warn;
    sprof_flame_tree tree;
    if (sprof_flame_tree_init(&tree) != 0)
        return -1;
    int rc = -1;
    if (sprof_flame_tree_add_profile(&tree, p, fmt, 0) == 0 && sprof_flame_tree_finish(&tree) == 0)
        rc = sprof_flame_write_svg(&tree, &fo, out);
    sprof_flame_tree_free(&tree);
    return rc;
}

int record_write_view(const sprof_profile *p, record_format fmt, const char *path, int weight_cpu,
                      const char *title)
{
    char err[1024] = "";
    sprof_export_options xo = { weight_cpu, NULL };
    int rc = 0;
    if (fmt == RECORD_PPROF) {
        rc = sprof_export_pprof(p, &xo, path, err, sizeof err);
    } else if (fmt == RECORD_SPEEDSCOPE) {
        rc = sprof_export_speedscope(p, &xo, path, err, sizeof err);
    } else {
        sprof_out_file of;
        if (sprof_out_open(&of, path, err, sizeof err) != 0) {
            fprintf(stderr, RECORD_TOOL ": %s\n", err);
            return -1;
        }
        sprof_fold_format ff = { 0 };
        ff.weight_cpu = weight_cpu;
        rc = fmt == RECORD_SVG ? write_svg(p, &ff, title, of.fp) : sprof_profile_write_folded(p, of.fp, &ff);
        if (rc < 0) {
            sprof_out_abort(&of);
            snprintf(err, sizeof err, "%s: write failed", path);
        } else {
            rc = sprof_out_commit(&of, err, sizeof err);
        }
    }
    if (rc < 0) {
        fprintf(stderr, RECORD_TOOL ": %s\n", err[0] ? err : "write failed");
        return -1;
    }
    return 0;
}

void record_print_top(const sprof_profile *p, int weight_cpu, size_t n)
{
    sprof_top_options o;
    memset(&o, 0, sizeof o);
    o.weight_cpu = weight_cpu;
    o.nrows = n;
    sprof_caveats cv;
    sprof_caveats_of(p, &cv);
    o.caveats = &cv;
    sprof_top t;
    memset(&t, 0, sizeof t);
    char err[256] = "";
    if (sprof_top_build(&t, p, &o, err, sizeof err) == 0)
        sprof_top_write_text(&t, &o, stderr);
    else
        fprintf(stderr, RECORD_TOOL ": top methods: %s\n", err);
    sprof_top_free(&t);
}
