/* sprof-top: flat table of Ruby methods (or .rb lines with their source
 * text) by self or cumulative time, with the split by cost class.
 * Semantics: docs/views.md. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sprof/cli_load.h"
#include "sprof/out_file.h"
#include "sprof/tool.h"
#include "sprof/top.h"

static const char *tool = "sprof-top";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sprof-top [options] INPUT...\n"
            "  Flat profile: self, self%%, cum, cum%%, Ruby method, file:def-line; sorted by self.\n"
            "  INPUTs: traces + the app's symmap, or folded files.\n"
            "      --cum               sort by cumulative instead of self\n"
            "      --lines             one row per .rb line (self: the leaf's line; cum: the line of\n"
            "                          every frame), with the source text when the file is readable\n"
            "      --all-files         with --lines: C and other source files too, not only .rb\n"
            "      --source-dir DIR    look for source files here too (relative paths, basenames)\n"
            "  -n N                    print N rows (default 25, 0 = all)\n"
            "      --json              machine-readable output\n"
            "      --focus RE          keep only stacks through a method matching RE (POSIX ERE)\n"
            "      --ignore RE         drop stacks through a method matching RE\n"
            "      --relative          percentages of the focused samples, not of the whole profile\n"
            "  -o, --output PATH       write here (atomically) instead of stdout\n"
            "%s"
            "  -h, --help, --version\n",
            sprof_cli_load_usage);
}

enum { OPT_CUM = 1, OPT_LINES, OPT_ALL_FILES, OPT_SOURCE_DIR, OPT_JSON, OPT_FOCUS, OPT_IGNORE,
       OPT_RELATIVE };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "cum", no_argument, NULL, OPT_CUM },
        { "lines", no_argument, NULL, OPT_LINES },
        { "all-files", no_argument, NULL, OPT_ALL_FILES },
        { "source-dir", required_argument, NULL, OPT_SOURCE_DIR },
        { "json", no_argument, NULL, OPT_JSON },
        { "focus", required_argument, NULL, OPT_FOCUS },
        { "ignore", required_argument, NULL, OPT_IGNORE },
        { "relative", no_argument, NULL, OPT_RELATIVE },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        SPROF_CLI_LOAD_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    sprof_top_options o;
    memset(&o, 0, sizeof o);
    o.nrows = 25;
    sprof_cli_load load;
    memset(&load, 0, sizeof load);
    const char *out_path = "-";
    int json = 0, c, status = SPROF_EXIT_USAGE;
    argv[0] = (char *)tool; /* getopt's own messages: "sprof-top: ...", not the path it was run by */
    while ((c = getopt_long(argc, argv, "n:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_CUM: o.by_cum = 1; break;
        case OPT_LINES: o.lines = 1; break;
        case OPT_ALL_FILES: o.all_files = 1; break;
        case OPT_SOURCE_DIR: o.source_dir = optarg; break;
        case OPT_JSON: json = 1; break;
        case OPT_FOCUS: o.focus = optarg; break;
        case OPT_IGNORE: o.ignore = optarg; break;
        case OPT_RELATIVE: o.relative = 1; break;
        case 'o': out_path = optarg; break;
        case 'n':
            if (sprof_cli_parse_count(tool, "-n", "a row count", optarg, &o.nrows) != 0)
                goto done;
            break;
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
    sprof_top t;
    memset(&t, 0, sizeof t);
    char err[1024] = "";
    /* the destination first: one it cannot write is refused in one line,
     * before the inputs' warnings (its temporary file goes on any failure) */
    sprof_out_file f;
    if (sprof_out_open(&f, out_path, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    if (sprof_cli_load_operands(&load, tool, argv + optind, (size_t)(argc - optind), usage, &p) != 0)
        goto free_all;
    if (sprof_cli_parse_weight(tool, load.weight, &p, &o.weight_cpu) != 0)
        goto free_all;
    sprof_caveats cv;
    sprof_caveats_of(&p, &cv);
    o.caveats = &cv;
    if (sprof_top_build(&t, &p, &o, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    if (json)
        sprof_top_write_json(&t, &o, f.fp);
    else
        sprof_top_write_text(&t, &o, f.fp);
    if (sprof_out_commit(&f, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    status = SPROF_EXIT_OK;
free_all:
    if (status != SPROF_EXIT_OK)
        sprof_out_abort(&f);
    sprof_top_free(&t);
    sprof_profile_free(&p);
done:
    sprof_cli_load_free(&load);
    return status;
}
