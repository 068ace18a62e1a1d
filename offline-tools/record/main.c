/* sprof-record: profile one command from start to end.
 *
 *   sprof-record [options] -- COMMAND [ARGS...]
 *
 * Runs COMMAND with the sampler preloaded and SPROF_OUT naming a trace in
 * a private temporary directory (the runtime's wrapper rule decides which
 * process of the tree takes it), waits, names the frames through the
 * binary's symmap (found or made), writes what -o asks for and prints the
 * top methods. Exits with the command's status. Docs: docs/user-guide.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sprof/cli_load.h"
#include "sprof/elf_probe.h"
#include "sprof/tool.h"
#include "record.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: sprof-record [options] -- COMMAND [ARGS...]\n"
            "  Run COMMAND with the sprof sampler, then write a profile of it.\n"
            "  -o, --output PATH       what to write, by extension: .svg (flame graph), .folded,\n"
            "                          .pb.gz (pprof), .speedscope.json, .bin or .trace (the raw\n"
            "                          trace, plus PATH.symmap when one was made)\n"
            "                          (default: sprof-<program>.svg in the current directory)\n"
            "      --hz N              samples per CPU second (wall second with --wall); default 1000\n"
            "      --wall              sample wall-clock time (waiting too), not CPU time\n"
            "      --mechanism M       perf_event, cpuclock, posix_timer or itimer (default: the\n"
            "                          best the machine allows; SPROF_TIMER)\n"
            "      --duration SECS     stop the command after SECS: SIGINT, SIGTERM 2 s later,\n"
            "                          SIGKILL 3 s after that\n"
            "      --preload PATH      the sampler library (default: ../lib/libsprof.so from this\n"
            "                          program's directory; or SPROF_PRELOAD)\n"
            "  -q, --quiet             print only errors (no exit line, no top methods)\n"
            "%s"
            "  -h, --help, --version\n"
            "  Exit status: the command's (128+N if signal N ended it; 127 not found, 126 not\n"
            "  runnable); 2 for a usage error; 1 if the command succeeded but no profile could be made.\n",
            sprof_cli_load_usage);
}

typedef struct record_args {
    const char *output;
    const char *preload;
    double duration;
    record_format format;
    record_env env;
    sprof_cli_load load;
    char **command;
} record_args;

enum { OPT_HZ = 1, OPT_WALL, OPT_MECHANISM, OPT_DURATION, OPT_PRELOAD };

static int check_hz(const char *s)
{
    size_t v;
    if (sprof_cli_parse_count(RECORD_TOOL, "--hz", "a rate of 1 to 100000 samples per second", s, &v) != 0)
        return -1;
    if (v < 1 || v > 100000) {
        fprintf(stderr, RECORD_TOOL ": --hz wants a rate of 1 to 100000 samples per second, not \"%s\"\n", s);
        return -1;
    }
    return 0;
}

static int check_mechanism(const char *s)
{
    static const char *const known[] = { "perf_event", "cpuclock", "posix_timer", "itimer" };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i]) == 0)
            return 0;
    fprintf(stderr, RECORD_TOOL ": --mechanism must be perf_event, cpuclock, posix_timer or itimer, not \"%s\"\n",
            s);
    return -1;
}

static int parse_duration(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e8) {
        fprintf(stderr, RECORD_TOOL ": --duration wants seconds (e.g. 10 or 0.5), not \"%s\"\n", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* 0 ok, 1 help or version printed, -1 usage error (printed). */
static int parse_args(record_args *a, int argc, char **argv)
{
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "hz", required_argument, NULL, OPT_HZ },
        { "wall", no_argument, NULL, OPT_WALL },
        { "mechanism", required_argument, NULL, OPT_MECHANISM },
        { "duration", required_argument, NULL, OPT_DURATION },
        { "preload", required_argument, NULL, OPT_PRELOAD },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        SPROF_CLI_LOAD_LONGOPTS,
        { NULL, 0, NULL, 0 },
    };
    int c;
    /* "+": options end at COMMAND even without "--" (its own options are its) */
    while ((c = getopt_long(argc, argv, "+o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->output = optarg; break;
        case OPT_HZ:
            if (check_hz(optarg) != 0)
                return -1;
            a->env.hz = optarg;
            break;
        case OPT_WALL: a->env.wall = 1; break;
        case OPT_MECHANISM:
            if (check_mechanism(optarg) != 0)
                return -1;
            a->env.timer = optarg;
            break;
        case OPT_DURATION:
            if (parse_duration(optarg, &a->duration) != 0)
                return -1;
            break;
        case OPT_PRELOAD: a->preload = optarg; break;
        case 'q': a->env.quiet = 1; break;
        case 'h': usage(stdout); return 1;
        case 'V': return sprof_tool_print_version(RECORD_TOOL) == SPROF_EXIT_OK ? 1 : -1;
        default:
            if (sprof_cli_other_option(&a->load, c, optarg, RECORD_TOOL, usage) != 0)
                return -1;
            break;
        }
    }
    if (a->output && record_format_of(a->output, &a->format) != 0) {
        fprintf(stderr, RECORD_TOOL ": %s: cannot tell what to write from the name: end it in .svg, .folded, "
                ".pb.gz, .speedscope.json, .bin or .trace\n", a->output);
        return -1;
    }
    if (sprof_cli_load_check(&a->load, RECORD_TOOL) != 0)
        return -1;
    if (optind >= argc) {
        fprintf(stderr, RECORD_TOOL ": no command given\n");
        usage(stderr);
        return -1;
    }
    a->command = argv + optind;
    return 0;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

/* The symmap to name exe's frames with: --symmap, else <exe>.symmap, else
 * one made by sprof-symmap at `made` when exe has DWARF; NULL: none (the
 * load then names frames from ELF symbols and says so). malloc'd. */
static char *choose_symmap(const record_args *a, const char *exe, const char *made)
{
    if (a->load.symmap)
        return strdup(a->load.symmap);
    if (!exe)
        return NULL;
    char *beside = concat(exe, ".symmap");
    if (beside && file_exists(beside))
        return beside;
    free(beside);
    char err[512];
    sprof_elf_facts facts;
    if (sprof_elf_probe(exe, &facts, err, sizeof err) != 0 || !facts.has_dwarf)
        return NULL;
    char *tool = record_sibling_tool("sprof-symmap");
    char *argv[] = { tool ? tool : "sprof-symmap", (char *)exe, "-o", (char *)made, "--quiet", NULL };
    int rc = record_run_helper(argv);
    free(tool);
    if (rc != 0 || !file_exists(made)) {
        fprintf(stderr, RECORD_TOOL ": sprof-symmap %s failed: frames are named from ELF symbols only\n", exe);
        return NULL;
    }
    return strdup(made);
}

/* The default output: sprof-<program>.svg in the current directory. */
static char *default_output(const char *exe, const char *command)
{
    char *copy = strdup(exe ? exe : command);
    if (!copy)
        return NULL;
    char *out = concat("sprof-", basename(copy));
    char *svg = out ? concat(out, ".svg") : NULL;
    free(out);
    free(copy);
    return svg;
}

/* Does the program COMMAND names (searched in PATH as execvp does) have
 * the runtime linked in? Only the command itself is looked at, not what a
 * wrapper it is runs. */
static int command_links_runtime(const char *command)
{
    char *found = NULL;
    if (strchr(command, '/')) {
        found = strdup(command);
    } else {
        const char *path = getenv("PATH");
        char *dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
        for (char *save = NULL, *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !found;
             d = strtok_r(NULL, ":", &save)) {
            char *candidate = concat(d, "/");
            char *full = candidate ? concat(candidate, command) : NULL;
            free(candidate);
            if (full && access(full, X_OK) == 0)
                found = full;
            else
                free(full);
        }
        free(dirs);
    }
    sprof_elf_facts facts = { 0, 0 };
    char err[512];
    int links = found && sprof_elf_probe(found, &facts, err, sizeof err) == 0 && facts.links_sprof_runtime;
    free(found);
    return links;
}

/* Everything after the command ran: 0, or -1 after printing. */
static int make_profile(record_args *a, const char *workdir, const char *trace)
{
    char *exe = record_trace_exe(trace);
    char *made = concat(workdir, "/trace.symmap");
    char *symmap = made ? choose_symmap(a, exe, made) : NULL;
    char *output = a->output ? strdup(a->output) : default_output(exe, a->command[0]);
    int rc = -1;
    sprof_profile p;
    sprof_profile_init(&p);
    if (!output || !made)
        goto out;
    a->load.symmap = symmap;
    a->load.quiet = a->env.quiet; /* -q: only errors (a machine too loaded for the rate is no error) */
    char *paths[] = { (char *)trace };
    int weight_cpu = 0;
    a->load.load.timeline = a->format == RECORD_PPROF || a->format == RECORD_SPEEDSCOPE;
    if (sprof_cli_load_profile(&a->load, RECORD_TOOL, paths, 1, &p) != 0 ||
        sprof_cli_parse_weight(RECORD_TOOL, a->load.weight, &p, &weight_cpu) != 0)
        goto out;
    if (a->format == RECORD_RAW) {
        if (record_keep_file(trace, output) != 0)
            goto out;
        if (symmap && strcmp(symmap, made) == 0) { /* keep the made symmap with the trace */
            char *kept = concat(output, ".symmap");
            if (!kept || record_keep_file(made, kept) != 0) {
                free(kept);
                goto out;
            }
            if (!a->env.quiet)
                fprintf(stderr, RECORD_TOOL ": symmap made for it: %s\n", kept);
            free(kept);
        }
    } else {
        char *copy = strdup(exe ? exe : a->command[0]);
        int w = copy ? record_write_view(&p, a->format, output, weight_cpu, basename(copy)) : -1;
        free(copy);
        if (w != 0)
            goto out;
    }
    if (!a->env.quiet) {
        fprintf(stderr, RECORD_TOOL ": wrote %s (%s)\n", output, record_format_name(a->format));
        record_print_top(&p, weight_cpu, 10);
    }
    rc = 0;
out:
    sprof_profile_free(&p);
    free(exe);
    free(made);
    free(symmap);
    free(output);
    return rc;
}

int main(int argc, char **argv)
{
    record_args a;
    memset(&a, 0, sizeof a);
    a.format = RECORD_SVG;
    argv[0] = RECORD_TOOL; /* getopt's own messages: "sprof-record: ...", not the path it was run by */
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) {
        sprof_cli_load_free(&a.load);
        return rc > 0 ? SPROF_EXIT_OK : SPROF_EXIT_USAGE;
    }
    int status = 1;
    char *preload = record_find_preload(a.preload);
    char *workdir = preload ? record_make_workdir() : NULL;
    char *trace = workdir ? concat(workdir, "/trace.bin") : NULL;
    if (!trace)
        goto done;
    /* a program with libsprof_rt.a linked in has the runtime already: a
     * second, preloaded copy would fight it over the trace */
    a.env.preload = command_links_runtime(a.command[0]) ? NULL : preload;
    a.env.trace = trace;
    int started;
    status = record_run_command(a.command, &a.env, a.duration, &started);
    if (status < 0) {
        status = 1;
        goto done;
    }
    if (!started)
        goto done;
    int made;
    if (!file_exists(trace)) {
        fprintf(stderr, RECORD_TOOL ": %s wrote no trace: a static or setuid program cannot take the preloaded "
                "sampler (link libsprof_rt.a into it instead: docs/runtime.md)\n", a.command[0]);
        made = -1;
    } else {
        made = make_profile(&a, workdir, trace);
    }
    /* the command's status wins; a failure of ours only turns a success into 1 */
    if (made != 0 && status == 0)
        status = 1;
done:
    if (workdir)
        record_remove_workdir(workdir);
    free(trace);
    free(workdir);
    free(preload);
    sprof_cli_load_free(&a.load);
    return status;
}
