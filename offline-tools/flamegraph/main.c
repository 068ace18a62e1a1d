/* sprof-flamegraph: interactive SVG flame graph from traces + symmap or
 * folded files. All the work is in the offline library; this file only
 * turns arguments into options. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/caveats.h"
#include "sprof/cli_load.h"
#include "sprof/flamegraph.h"
#include "sprof/out_file.h"
#include "sprof/profile.h"
#include "sprof/tool.h"

static const char *tool = "sprof-flamegraph";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sprof-flamegraph [options] INPUT... [-o out.svg]\n"
            "  INPUT: sprof traces with their symmap, or folded files (recognised by content)\n"
            "  -o, --output FILE   write the SVG here (atomically) instead of stdout\n"
            "      --title TEXT    title (default \"Flame Graph\")\n"
            "      --subtitle TEXT second line under the title\n"
            "      --width PX      image width (default 1200)\n"
            "      --inverted      icicle graph: root at the top\n"
            "      --minwidth W    hide frames narrower than W pixels, or W%% of the total (default 0.1)\n"
            "      --cpu           = --weight=cpu (widths by CPU time; --weight below)\n"
            "      --lines         one frame per Ruby method and line (Foo#bar:12)\n"
            "      --c-names       C symbols instead of Ruby names\n"
            "%s"
            "  -h, --help, --version\n",
            sprof_cli_load_usage);
}

/* "0.5" (pixels) or "0.5%" (of the total). */
static int parse_minwidth(const char *s, sprof_flame_options *o)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0 || v != v)
        return -1;
    if (*end == '%') {
        o->minwidth_pct = 1;
        end++;
    }
    if (*end)
        return -1;
    o->minwidth = v;
    return 0;
}

/* Render into of (the file at `output`, opened before the inputs were
 * read), committed atomically; or, of NULL, to stdout only once complete. */
static int write_output(const sprof_flame_tree *tree, const sprof_flame_options *fo, sprof_out_file *of,
                        const char *output)
{
    char err[1024];
    if (of) {
        if (sprof_flame_write_svg(tree, fo, of->fp) != 0) {
            sprof_out_abort(of);
            fprintf(stderr, "%s: %s: write failed\n", tool, output);
            return -1;
        }
        if (sprof_out_commit(of, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", tool, err);
            return -1;
        }
        return 0;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    int rc = mem ? sprof_flame_write_svg(tree, fo, mem) : -1;
    if (mem && fclose(mem) != 0)
        rc = -1;
    if (rc == 0 && (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0))
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "%s: cannot write the SVG to stdout\n", tool);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    enum { O_TITLE = 1, O_SUBTITLE, O_WIDTH, O_INVERTED, O_MINWIDTH, O_CPU, O_LINES, O_CNAMES };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "title", required_argument, NULL, O_TITLE },
        { "subtitle", required_argument, NULL, O_SUBTITLE },
        { "width", required_argument, NULL, O_WIDTH },
        { "inverted", no_argument, NULL, O_INVERTED },
        { "icicle", no_argument, NULL, O_INVERTED },
        { "minwidth", required_argument, NULL, O_MINWIDTH },
        { "cpu", no_argument, NULL, O_CPU },
        { "lines", no_argument, NULL, O_LINES },
        { "c-names", no_argument, NULL, O_CNAMES },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        SPROF_CLI_LOAD_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    sprof_flame_options fo = { .minwidth = 0.1 };
    sprof_fold_format fmt = { 0 };
    sprof_cli_load load;
    memset(&load, 0, sizeof load);
    const char *output = NULL;
    sprof_out_file of;
    memset(&of, 0, sizeof of);
    int c, status = SPROF_EXIT_USAGE;
    argv[0] = (char *)tool; /* getopt's own messages: "sprof-flamegraph: ..." */
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case O_TITLE: fo.title = optarg; break;
        case O_SUBTITLE: fo.subtitle = optarg; break;
        case O_WIDTH: {
            char *end;
            errno = 0;
            long w = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || w < 100 || w > 100000) {
                fprintf(stderr, "%s: --width wants pixels between 100 and 100000, not \"%s\"\n", tool, optarg);
                goto done;
            }
            fo.width = (int)w;
            break;
        }
        case O_INVERTED: fo.inverted = 1; break;
        case O_MINWIDTH:
            if (parse_minwidth(optarg, &fo) != 0) {
                fprintf(stderr, "%s: --minwidth wants pixels (0.5) or a percentage (0.5%%), not \"%s\"\n", tool,
                        optarg);
                goto done;
            }
            break;
        case O_CPU: load.weight = "cpu"; break;
        case O_LINES: fmt.lines = 1; break;
        case O_CNAMES: fmt.c_names = 1; break;
        case 'h': usage(stdout); status = SPROF_EXIT_OK; goto done;
        case 'V': status = sprof_tool_print_version(tool); goto done;
        default:
            if (sprof_cli_other_option(&load, c, optarg, tool, usage) != 0)
                goto done;
            break;
        }
    }

    if (sprof_cli_check_usage(&load, tool, (size_t)(argc - optind), usage) != 0)
        goto done;
    status = SPROF_EXIT_FAILURE;
    /* the destination first: one it cannot write is refused in one line,
     * before the inputs' warnings (its temporary file goes on any failure) */
    int to_file = output && strcmp(output, "-") != 0;
    if (to_file) {
        char err[1024];
        if (sprof_out_open(&of, output, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", tool, err);
            goto done;
        }
    }
    sprof_profile prof;
    sprof_profile_init(&prof);
    if (sprof_cli_load_operands(&load, tool, argv + optind, (size_t)(argc - optind), usage, &prof) != 0) {
        sprof_profile_free(&prof);
        goto done;
    }
    if (sprof_cli_parse_weight(tool, load.weight, &prof, &fmt.weight_cpu) != 0) {
        sprof_profile_free(&prof);
        goto done;
    }
    fo.count_name = fmt.weight_cpu ? "ns CPU" : "samples";
    /* incomplete stacks and guessed names go under the title, after any
     * subtitle the user gave */
    sprof_caveats cv;
    sprof_caveats_of(&prof, &cv);
    char warn[256], subtitle[1024];
    if (sprof_caveats_short(&cv, warn, sizeof warn)) {
        if (fo.subtitle && *fo.subtitle)
            snprintf(subtitle, sizeof subtitle, "%s \u2014 %s", fo.subtitle, warn);
        else
            snprintf(subtitle, sizeof subtitle, "%s", warn);
        fo.subtitle = subtitle;
    }
    sprof_flame_tree tree;
    if (sprof_flame_tree_init(&tree) != 0) {
        fprintf(stderr, "%s: out of memory\n", tool);
        sprof_profile_free(&prof);
        goto done;
    }
    int rc = sprof_flame_tree_add_profile(&tree, &prof, &fmt, 0);
    sprof_profile_free(&prof);
    if (rc != 0 || sprof_flame_tree_finish(&tree) != 0) {
        fprintf(stderr, "%s: out of memory\n", tool);
    } else if (write_output(&tree, &fo, to_file ? &of : NULL, output) == 0) {
        /* An input that loads but holds no samples (all counts 0, a trace
         * cut before its first sample, filters that keep nothing) gives
         * an empty graph, as the other views give an empty table. */
        if (tree.nodes[0].value == 0)
            fprintf(stderr, "%s: warning: no samples in the input: the graph is empty\n", tool);
        status = SPROF_EXIT_OK;
    }
    sprof_flame_tree_free(&tree);
done:
    if (status != SPROF_EXIT_OK)
        sprof_out_abort(&of);
    sprof_cli_load_free(&load);
    return status;
}
