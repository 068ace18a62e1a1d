/* sprof-export: the profile in other tools' formats (pprof profile.proto,
 * speedscope JSON) and sprof's timeline page. Details: docs/views.md. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "sprof/cli_load.h"
#include "sprof/export.h"
#include "sprof/tool.h"

static const char *tool = "sprof-export";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sprof-export [options] INPUT... [--pprof out.pb.gz] [--speedscope out.json] [--timeline out.html]\n"
            "  INPUTs: traces + the app's symmap, or folded files.\n"
            "      --pprof PATH        gzipped profile.proto (go tool pprof, Pyroscope, Grafana...)\n"
            "      --speedscope PATH   speedscope JSON (https://www.speedscope.app): one timeline per thread\n"
            "      --timeline PATH     sprof's timeline page (HTML, no network): lanes per thread over time by\n"
            "                          cost class, collector and kernel spans, a selection's flame graph\n"
            "                          (--weight: speedscope weights and pprof's default sample\n"
            "                          type; pprof always has both samples and cpu values)\n"
            "      --name NAME         profile name (default: the binary's name)\n"
            "%s"
            "  -h, --help, --version\n",
            sprof_cli_load_usage);
}

enum { OPT_PPROF = 1, OPT_SPEEDSCOPE, OPT_TIMELINE, OPT_NAME };

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "pprof", required_argument, NULL, OPT_PPROF },
        { "speedscope", required_argument, NULL, OPT_SPEEDSCOPE },
        { "timeline", required_argument, NULL, OPT_TIMELINE },
        { "name", required_argument, NULL, OPT_NAME },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        SPROF_CLI_LOAD_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    sprof_cli_load load;
    memset(&load, 0, sizeof load);
    sprof_export_options o;
    memset(&o, 0, sizeof o);
    const char *pprof = NULL, *speedscope = NULL, *timeline = NULL;
    int c, status = SPROF_EXIT_USAGE;
    argv[0] = (char *)tool; /* getopt's own messages: "sprof-export: ..." */
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_PPROF: pprof = optarg; break;
        case OPT_SPEEDSCOPE: speedscope = optarg; break;
        case OPT_TIMELINE: timeline = optarg; break;
        case OPT_NAME: o.name = optarg; break;
        case 'h': usage(stdout); status = SPROF_EXIT_OK; goto done;
        case 'V': status = sprof_tool_print_version(tool); goto done;
        default:
            if (sprof_cli_other_option(&load, c, optarg, tool, usage) != 0)
                goto done;
            break;
        }
    }
    if (optind >= argc || (!pprof && !speedscope && !timeline)) {
        if (optind < argc)
            fprintf(stderr, "%s: nothing to do: give --pprof PATH, --speedscope PATH and/or --timeline PATH\n", tool);
        else
            usage(stderr);
        goto done;
    }
    if (sprof_cli_load_check(&load, tool) != 0)
        goto done;
    status = SPROF_EXIT_FAILURE;
    sprof_profile p;
    sprof_profile_init(&p);
    char err[1024] = "";
    load.load.timeline = 1; /* speedscope's per-thread timelines, pprof's thread and time labels */
    if (sprof_cli_load_profile(&load, tool, argv + optind, (size_t)(argc - optind), &p) != 0)
        goto free_all;
    if (sprof_cli_parse_weight(tool, load.weight, &p, &o.weight_cpu) != 0)
        goto free_all;
    if (pprof && sprof_export_pprof(&p, &o, pprof, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    if (speedscope && sprof_export_speedscope(&p, &o, speedscope, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    if (timeline && sprof_export_timeline(&p, timeline, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", tool, err);
        goto free_all;
    }
    status = SPROF_EXIT_OK;
free_all:
    sprof_profile_free(&p);
done:
    sprof_cli_load_free(&load);
    return status;
}
