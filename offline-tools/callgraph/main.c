/* sprof-callgraph: the profile as a pprof-style call graph (Graphviz DOT,
 * optionally rendered to SVG by `dot`). Semantics: docs/views.md. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/callgraph.h"
#include "sprof/cli_load.h"
#include "sprof/out_file.h"
#include "sprof/tool.h"

static const char *tool = "sprof-callgraph";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sprof-callgraph [options] INPUT... [-o out.dot] [--svg out.svg]\n"
            "  Call graph of Ruby methods (one node per method: self and cumulative share;\n"
            "  edges: samples through each call). INPUTs: traces + the app's symmap, or folded files.\n"
            "  Without -o/--svg the DOT goes to stdout.\n"
            "  -o, --output PATH       write DOT here (atomically)\n"
            "      --svg PATH          render SVG with Graphviz `dot`\n"
            "      --nodefraction F    hide methods with cum < F of the total (default 0.005)\n"
            "      --edgefraction F    hide calls with weight < F of the total (default 0.001)\n"
            "      --nodecount N       show at most N methods, highest cum first (default 80, 0 = all)\n"
            "      --focus RE          keep only stacks through a method matching RE (POSIX ERE)\n"
            "      --ignore RE         drop stacks through a method matching RE\n"
            "      --relative          percentages of the focused samples, not of the whole profile\n"
            "%s"
            "  -h, --help, --version\n",
            sprof_cli_load_usage);
}

static int parse_fraction(const char *s, const char *name, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1) {
        fprintf(stderr, "%s: --%s wants a fraction between 0 and 1, not \"%s\"\n", tool, name, s);
        return -1;
    }
    *out = v;
    return 0;
}

enum { OPT_SVG = 1, OPT_NODEFRACTION, OPT_EDGEFRACTION, OPT_NODECOUNT, OPT_FOCUS, OPT_IGNORE,
       OPT_RELATIVE };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "svg", required_argument, NULL, OPT_SVG },
        { "nodefraction", required_argument, NULL, OPT_NODEFRACTION },
        { "edgefraction", required_argument, NULL, OPT_EDGEFRACTION },
        { "nodecount", required_argument, NULL, OPT_NODECOUNT },
        { "focus", required_argument, NULL, OPT_FOCUS },
        { "ignore", required_argument, NULL, OPT_IGNORE },
        { "relative", no_argument, NULL, OPT_RELATIVE },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        SPROF_CLI_LOAD_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    sprof_callgraph_options o;
    sprof_callgraph_options_init(&o);
    sprof_cli_load load;
    memset(&load, 0, sizeof load);
    const char *out_path = NULL, *svg_path = NULL;
    int c, status = SPROF_EXIT_USAGE;
    argv[0] = (char *)tool; /* getopt's own messages: "sprof-callgraph: ..." */
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case OPT_SVG: svg_path = optarg; break;
        case OPT_NODEFRACTION:
            if (parse_fraction(optarg, "nodefraction", &o.nodefraction) != 0)
                goto done;
            break;
        case OPT_EDGEFRACTION:
            if (parse_fraction(optarg, "edgefraction", &o.edgefraction) != 0)
                goto done;
            break;
        case OPT_NODECOUNT:
            if (sprof_cli_parse_count(tool, "--nodecount", "a count", optarg, &o.nodecount) != 0)
                goto done;
            break;
        case OPT_FOCUS: o.focus = optarg; break;
        case OPT_IGNORE: o.ignore = optarg; break;
        case OPT_RELATIVE: o.relative = 1; break;
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
    sprof_profile p;
    sprof_profile_init(&p);
    sprof_callgraph g;
    memset(&g, 0, sizeof g);
    char err[1024] = "";
    char *dot = NULL;
    size_t dot_len = 0;
    /* the destination first: one it cannot write is refused in one line,
     * before the inputs' warnings (its temporary file goes on any failure) */
    sprof_out_file f;
    memset(&f, 0, sizeof f);
    if ((out_path || !svg_path) && sprof_out_open(&f, out_path ? out_path : "-", err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    if (sprof_cli_load_operands(&load, tool, argv + optind, (size_t)(argc - optind), usage, &p) != 0)
        goto free_all;
    if (sprof_cli_parse_weight(tool, load.weight, &p, &o.weight_cpu) != 0)
        goto free_all;
    o.title = p.binary_path;
    sprof_caveats cv;
    sprof_caveats_of(&p, &cv);
    o.caveats = &cv;
    if (sprof_callgraph_build(&g, &p, &o, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    FILE *mem = open_memstream(&dot, &dot_len);
    if (!mem || sprof_callgraph_write_dot(&g, &o, mem) != 0 || fclose(mem) != 0) {
        fprintf(stderr, "%s: out of memory\n", tool);
        goto free_all;
    }
    if (out_path || !svg_path) {
        fwrite(dot, 1, dot_len, f.fp);
        if (sprof_out_commit(&f, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", tool, err);
            goto free_all;
        }
    }
    if (svg_path && sprof_dot_render_svg(dot, dot_len, svg_path, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    status = SPROF_EXIT_OK;
free_all:
    if (status != SPROF_EXIT_OK)
        sprof_out_abort(&f);
    free(dot);
    sprof_callgraph_free(&g);
    sprof_profile_free(&p);
done:
    sprof_cli_load_free(&load);
    return status;
}
