/* Recognise input files by content and load them into one profile. */
#include "sprof/inputs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sprof/alloc_report.h"
#include "sprof/perf_script.h"
#include "sprof/trace_format.h"

#define SYMMAP_MAGIC "SPROFSYM"

int sprof_input_detect(const char *path, enum sprof_input_kind *kind, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    /* enough text for the first line of a perf script or allocation report */
    char head[8192] = { 0 };
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    if (got < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (got == 0) { /* no trace, symmap or profile is empty: never an empty result */
        snprintf(err, errlen, "%s: empty file", path);
        return -1;
    }
    if ((size_t)got >= sizeof SPROF_TRACE_MAGIC - 1 ? memcmp(head, SPROF_TRACE_MAGIC, 8) == 0
                                                     : memcmp(head, SPROF_TRACE_MAGIC, (size_t)got) == 0)
        *kind = SPROF_INPUT_TRACE; /* a trace cut inside its magic is still a (cut) trace */
    else if (got >= 4 && memcmp(head, "\177ELF", 4) == 0)
        *kind = SPROF_INPUT_ELF;
    else if (got >= 8 && memcmp(head, SYMMAP_MAGIC, 8) == 0)
        *kind = SPROF_INPUT_SYMMAP;
    else if (sprof_perf_script_detect(head, (size_t)got))
        *kind = SPROF_INPUT_PERF_SCRIPT;
    else if (sprof_alloc_report_detect(head, (size_t)got))
        *kind = SPROF_INPUT_ALLOC;
    else
        *kind = SPROF_INPUT_FOLDED;
    return 0;
}

/* The usual mistake: the program itself where its symmap belongs. */
static int refuse_elf(const char *path, const char *as, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "%s: an ELF binary, not %s: make the program's symmap with `sprof-symmap %s -o %s.symmap` "
             "and give that file",
             path, as, path, path);
    return -1;
}

int sprof_inputs_classify(sprof_inputs *in, const char *const *paths, size_t npaths,
                          const char *forced_symmap, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    in->traces = calloc(npaths ? npaths : 1, sizeof *in->traces);
    in->texts = calloc(npaths ? npaths : 1, sizeof *in->texts);
    in->text_kinds = calloc(npaths ? npaths : 1, sizeof *in->text_kinds);
    if (!in->traces || !in->texts || !in->text_kinds) {
        snprintf(err, errlen, "out of memory");
        sprof_inputs_free(in);
        return -1;
    }
    in->symmap = forced_symmap;
    enum sprof_input_kind k;
    if (forced_symmap && sprof_input_detect(forced_symmap, &k, err, errlen) == 0 && k == SPROF_INPUT_ELF) {
        sprof_inputs_free(in);
        return refuse_elf(forced_symmap, "a symmap", err, errlen);
    } /* anything else wrong with it: the symmap reader says what */
    for (size_t i = 0; i < npaths; i++) {
        if (sprof_input_detect(paths[i], &k, err, errlen) != 0) {
            sprof_inputs_free(in);
            return -1;
        }
        switch (k) {
        case SPROF_INPUT_ELF:
            sprof_inputs_free(in);
            return refuse_elf(paths[i], "a trace, symmap or profile", err, errlen);
        case SPROF_INPUT_TRACE:
            in->traces[in->ntraces++] = paths[i];
            break;
        case SPROF_INPUT_SYMMAP:
            if (in->symmap) {
                snprintf(err, errlen, "%s: a second symmap (already have %s); give one", paths[i],
                         in->symmap);
                sprof_inputs_free(in);
                return -1;
            }
            in->symmap = paths[i];
            break;
        default:
            in->texts[in->ntexts] = paths[i];
            in->text_kinds[in->ntexts++] = k;
            break;
        }
    }
    return 0;
}

void sprof_inputs_free(sprof_inputs *in)
{
    free(in->traces);
    free(in->texts);
    free(in->text_kinds);
    memset(in, 0, sizeof *in);
}

int sprof_inputs_add_text(sprof_inputs *in, const char *path, enum sprof_input_kind kind)
{
    const char **t = realloc(in->texts, (in->ntexts + 1) * sizeof *t);
    if (!t)
        return -1;
    in->texts = t;
    enum sprof_input_kind *k = realloc(in->text_kinds, (in->ntexts + 1) * sizeof *k);
    if (!k)
        return -1;
    in->text_kinds = k;
    in->texts[in->ntexts] = path;
    in->text_kinds[in->ntexts++] = kind;
    return 0;
}

/* The text parsers' options, with the load options that apply to them. */
static sprof_perf_options text_options(const sprof_load_options *opt)
{
    sprof_perf_options o;
    memset(&o, 0, sizeof o);
    if (opt && opt->text)
        o = *opt->text;
    if (opt) {
        o.no_inline |= opt->no_inline;
        o.tid |= opt->per_thread;
        if (!o.tids) {
            o.tids = opt->tids;
            o.ntids = opt->ntids;
        }
    }
    return o;
}

int sprof_inputs_load(const sprof_inputs *in, sprof_profile *p, const sprof_load_options *opt,
                      char *err, size_t errlen)
{
    if (in->ntraces > 0 &&
        sprof_profile_add_traces(p, in->traces, in->ntraces, in->symmap, opt, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < in->ntexts; i++) {
        switch (in->text_kinds[i]) {
        case SPROF_INPUT_FOLDED:
            if (sprof_profile_add_folded(p, in->texts[i], err, errlen) != 0)
                return -1;
            break;
        case SPROF_INPUT_PERF_SCRIPT: {
            sprof_perf_options o = text_options(opt);
            if (sprof_profile_add_perf_script(p, in->texts[i], in->symmap, &o, err, errlen) != 0)
                return -1;
            break;
        }
        case SPROF_INPUT_ALLOC: {
            sprof_perf_options o = text_options(opt);
            if (sprof_profile_add_alloc_report(p, in->texts[i], in->symmap, &o, err, errlen) != 0)
                return -1;
            break;
        }
        default:
            snprintf(err, errlen, "%s: unsupported input kind", in->texts[i]);
            return -1;
        }
    }
    if (in->ntraces == 0 && in->ntexts == 0) {
        snprintf(err, errlen, "no profile input given (a trace, folded file, ...)");
        return -1;
    }
    return 0;
}
