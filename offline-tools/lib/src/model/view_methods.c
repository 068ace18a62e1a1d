/* Frames merged by display name into methods; focus/ignore selection;
 * weight helpers shared by the method-level views. */
#include "sprof/view_methods.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct name_slot {
    const char *name; /* points at methods[id].name */
    uint32_t id;
    UT_hash_handle hh;
} name_slot;

int sprof_is_ruby_file(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && strcmp(path + n - 3, ".rb") == 0;
}

/* The file a method is shown at. Ruby code: a .rb file when any of its
 * frames has one. Other code (runtime, collector, libc): never a .rb file,
 * which could only come from a call site or a #line the C compiler let leak
 * over it (older symmaps); its own file or none. */
static int file_fits(const sprof_method *m, const char *file)
{
    return file[0] && (m->cost == SPROF_COST_USER || !sprof_is_ruby_file(file));
}

static void method_absorb(sprof_method *m, const sprof_pframe *f)
{
    if (file_fits(m, f->file) &&
        (!m->file[0] || (!sprof_is_ruby_file(m->file) && sprof_is_ruby_file(f->file))))
        m->file = f->file;
    m->name_flags |= f->flags & (SPROF_FRAME_NAME_APPROX | SPROF_FRAME_NAME_GUESSED | SPROF_FRAME_FOLDED);
    if (!m->def_line && f->def_line)
        m->def_line = f->def_line;
    if (!m->c_name[0] && f->c_name[0])
        m->c_name = f->c_name;
}

int sprof_methods_build(sprof_methods *m, const sprof_profile *p, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->nframes = p->nframes;
    m->of_frame = calloc(p->nframes ? p->nframes : 1, sizeof *m->of_frame);
    m->methods = calloc(p->nframes ? p->nframes : 1, sizeof *m->methods);
    name_slot *slots = calloc(p->nframes ? p->nframes : 1, sizeof *slots);
    name_slot *table = NULL;
    static const sprof_fold_format plain = { 0, 0, 0, 0 };
    if (!m->of_frame || !m->methods || !slots)
        goto oom;
    for (size_t i = 0; i < p->nframes; i++) {
        const sprof_pframe *f = &p->frames[i];
        char buf[1024];
        const char *name = sprof_pframe_display(f, &plain, buf, sizeof buf);
        name_slot *s = NULL;
        HASH_FIND_STR(table, name, s);
        if (!s) {
            sprof_method *mm = &m->methods[m->nmethods];
            mm->name = strdup(name);
            if (!mm->name)
                goto oom;
            mm->c_name = f->c_name;
            mm->cost = f->cost;
            mm->file = file_fits(mm, f->file) ? f->file : "";
            mm->def_line = f->def_line;
            mm->name_flags = f->flags & (SPROF_FRAME_NAME_APPROX | SPROF_FRAME_NAME_GUESSED | SPROF_FRAME_FOLDED);
            mm->kind = f->kind;
            s = &slots[m->nmethods];
            s->name = mm->name;
            s->id = (uint32_t)m->nmethods++;
            HASH_ADD_KEYPTR(hh, table, s->name, strlen(s->name), s);
        } else {
            method_absorb(&m->methods[s->id], f);
        }
        m->of_frame[i] = s->id;
    }
    HASH_CLEAR(hh, table);
    free(slots);
    return 0;
oom:
    HASH_CLEAR(hh, table);
    free(slots);
    sprof_methods_free(m);
    snprintf(err, errlen, "out of memory");
    return -1;
}

void sprof_methods_free(sprof_methods *m)
{
    for (size_t i = 0; i < m->nmethods; i++)
        free(m->methods[i].name);
    free(m->methods);
    free(m->of_frame);
    memset(m, 0, sizeof *m);
}

/* match[i] = 1 if method i's name matches re. */
static int match_methods(const sprof_methods *m, const char *what, const char *re, uint8_t *match,
                         char *err, size_t errlen)
{
    regex_t rx;
    int rc = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[256];
        regerror(rc, &rx, msg, sizeof msg);
        snprintf(err, errlen, "--%s '%s': %s", what, re, msg);
        return -1;
    }
    for (size_t i = 0; i < m->nmethods; i++)
        match[i] = regexec(&rx, m->methods[i].name, 0, NULL, 0) == 0;
    regfree(&rx);
    return 0;
}

static int stack_has_match(const sprof_methods *m, const sprof_pstack *s, const uint8_t *match)
{
    for (uint32_t j = 0; j < s->nframes; j++)
        if (s->frames[j] < m->nframes && match[m->of_frame[s->frames[j]]])
            return 1;
    return 0;
}

int sprof_methods_select(const sprof_methods *m, const sprof_profile *p, const char *focus,
                         const char *ignore, uint8_t *keep, char *err, size_t errlen)
{
    for (size_t i = 0; i < p->nstacks; i++)
        keep[i] = 1;
    if (!focus && !ignore)
        return 0;
    uint8_t *fm = calloc(m->nmethods ? m->nmethods : 1, 1);
    uint8_t *im = calloc(m->nmethods ? m->nmethods : 1, 1);
    int rc = -1;
    if (!fm || !im) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (focus && match_methods(m, "focus", focus, fm, err, errlen) != 0)
        goto out;
    if (ignore && match_methods(m, "ignore", ignore, im, err, errlen) != 0)
        goto out;
    for (size_t i = 0; i < p->nstacks; i++) {
        if (focus && !stack_has_match(m, &p->stacks[i], fm))
            keep[i] = 0;
        if (ignore && stack_has_match(m, &p->stacks[i], im))
            keep[i] = 0;
    }
    rc = 0;
out:
    free(fm);
    free(im);
    return rc;
}

int sprof_profile_has_cpu_weights(const sprof_profile *p)
{
    /* Folded files carry one count, stored as both samples and cpu_ns;
     * only traces (which set hz) carry real CPU time. */
    if (p->hz == 0)
        return 0;
    for (size_t i = 0; i < p->nstacks; i++)
        if (p->stacks[i].cpu_ns)
            return 1;
    return 0;
}

int sprof_parse_weight(const char *word, const sprof_profile *p, int *weight_cpu)
{
    if (strcmp(word, "samples") == 0)
        *weight_cpu = 0;
    else if (strcmp(word, "cpu") == 0)
        *weight_cpu = 1;
    else if (strcmp(word, "auto") == 0)
        *weight_cpu = sprof_profile_has_cpu_weights(p);
    else
        return -1;
    return 0;
}

const char *sprof_format_weight(uint64_t v, int weight_cpu, char *buf, size_t buflen)
{
    if (!weight_cpu)
        snprintf(buf, buflen, "%llu", (unsigned long long)v);
    else if (v >= 1000000000ull)
        snprintf(buf, buflen, "%.2fs", (double)v / 1e9);
    else if (v >= 1000000ull)
        snprintf(buf, buflen, "%.2fms", (double)v / 1e6);
    else if (v >= 1000ull)
        snprintf(buf, buflen, "%.2fus", (double)v / 1e3);
    else
        snprintf(buf, buflen, "%lluns", (unsigned long long)v);
    return buf;
}

double sprof_percent(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}
