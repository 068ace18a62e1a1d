/* sprof-symmap: write, dump or query an app.symmap.
 *   sprof-symmap BINARY [-o OUT] [--spinel-map PATH] [--c-source FILE.c ...] [--quiet]
 *   sprof-symmap --dump SYMMAP
 *   sprof-symmap --lookup SYMMAP ADDR...   (hex link-time addresses) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "generate.h"
#include "sprof/symmap.h"
#include "sprof/tool.h"

static void usage(FILE *f)
{
    fputs("usage: sprof-symmap BINARY [-o OUT] [--spinel-map PATH] [--c-source FILE.c]... [--quiet]\n"
          "       sprof-symmap --dump SYMMAP\n"
          "       sprof-symmap --lookup SYMMAP ADDR...   (hex link-time addresses)\n"
          "       sprof-symmap --help | --version\n"
          "  Ruby names come from Spinel's BINARY.symbols.json (or --spinel-map PATH), else\n"
          "  from the C sources (--c-source), else are guessed from the C names.\n",
          f);
}

static int parse_hex(const char *s, uint64_t *v)
{
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 16);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

static int read_mode(int argc, char **argv, int lookup)
{
    if (argc < 3 || (lookup && argc < 4)) {
        usage(stderr);
        return 2;
    }
    for (int i = 3; i < argc; i++) { /* validate before printing anything */
        uint64_t a;
        if (parse_hex(argv[i], &a) < 0) {
            fprintf(stderr, "sprof-symmap: %s: not a hex address\n", argv[i]);
            return 2;
        }
    }
    char err[1024];
    sprof_symmap *m = sprof_symmap_open(argv[2], err, sizeof err);
    if (!m) {
        fprintf(stderr, "sprof-symmap: %s\n", err);
        return 1;
    }
    if (lookup) {
        for (int i = 3; i < argc; i++) {
            uint64_t a;
            parse_hex(argv[i], &a);
            sprof_print_lookup(m, a, stdout);
        }
    } else {
        sprof_dump_symmap(m, stdout);
    }
    sprof_symmap_close(m);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "sprof-symmap: write error on standard output\n");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--dump") == 0)
        return read_mode(argc, argv, 0);
    if (argc >= 2 && strcmp(argv[1], "--lookup") == 0)
        return read_mode(argc, argv, 1);
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return SPROF_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "--version") == 0)
        return sprof_tool_print_version("sprof-symmap");
    sprof_gen_options o = { 0 };
    const char **sources = calloc((size_t)argc, sizeof *sources);
    if (!sources)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "-o") == 0 && has_value)
            o.out = argv[++i];
        else if (strcmp(a, "--spinel-map") == 0 && has_value)
            o.spinel_map = argv[++i];
        else if (strcmp(a, "--c-source") == 0 && has_value)
            sources[o.nc_sources++] = argv[++i];
        else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
            o.quiet = 1;
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "sprof-symmap: unknown or incomplete option %s (see --help)\n", a);
            free(sources);
            return 2;
        } else if (!o.binary)
            o.binary = a;
        else {
            fprintf(stderr, "sprof-symmap: more than one binary given (%s, %s)\n", o.binary, a);
            free(sources);
            return 2;
        }
    }
    if (!o.binary) {
        usage(stderr);
        free(sources);
        return 2;
    }
    o.c_sources = sources;
    char err[1024];
    int rc = sprof_generate(&o, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "sprof-symmap: %s\n", err);
    free(sources);
    return rc < 0 ? 1 : 0;
}
