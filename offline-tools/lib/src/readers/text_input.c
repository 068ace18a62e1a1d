/* What the text parsers (perf script, Spinel allocation reports) share
 * around their line parsing: their common state (options, diagnostics,
 * symmap resolver), opening the input file (or stdin) with its symmap,
 * and hex numbers. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "perf_script_internal.h"

int sprof_text_parser_init(sprof_text_parser *t, sprof_profile *p, const char *name,
                           const sprof_symmap *m, const sprof_perf_options *opt, char *err,
                           size_t errlen)
{
    static const sprof_perf_options defaults;
    memset(t, 0, sizeof *t);
    t->p = p;
    t->opt = opt ? opt : &defaults;
    t->m = m;
    t->diag = (sprof_text_diag){ name, t->opt->warn, t->opt->strict, 0, err, errlen };
    if (m) {
        t->res = sprof_symres_new(m);
        if (!t->res) {
            snprintf(err, errlen, "%s: out of memory", name);
            return -1;
        }
    }
    return 0;
}

void sprof_text_parser_free(sprof_text_parser *t)
{
    sprof_symres_free(t->res);
    t->res = NULL;
}

int sprof_text_input_file(sprof_profile *p, const char *path, const char *symmap_path,
                          const sprof_perf_options *opt, sprof_text_stream_parser parse, char *err,
                          size_t errlen)
{
    sprof_symmap *m = NULL;
    if (symmap_path) {
        m = sprof_symmap_open(symmap_path, err, errlen);
        if (!m)
            return -1;
    }
    int from_stdin = strcmp(path, "-") == 0;
    FILE *in = from_stdin ? stdin : fopen(path, "r");
    if (!in) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        sprof_symmap_close(m);
        return -1;
    }
    int rc = parse(p, in, from_stdin ? "<stdin>" : path, m, opt, err, errlen);
    if (!from_stdin)
        fclose(in);
    sprof_symmap_close(m);
    return rc;
}

int sprof_text_hex(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > 16)
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (!isxdigit(c))
            return -1;
        x = x * 16 + (uint64_t)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
    }
    *v = x;
    return 0;
}
