/* Naming rules, in order. See naming.h and docs/ruby-names.md. */
#include "naming.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "classify.h"
#include "ruby_names.h"
#include "sprof/symmap.h"

static int is_rb(const char *f)
{
    size_t n = f ? strlen(f) : 0;
    return n > 3 && strcmp(f + n - 3, ".rb") == 0;
}

/* The file that non-Ruby code may show as its own: its declaration file,
 * unless that is a .rb (a #line left over from the Ruby code before it) or
 * an absolute path that no longer exists (Spinel's deleted temporary out.c). */
static void own_location(const sprof_code_site *site, sprof_symmap_names *out)
{
    const char *f = site->decl_file;
    if (!f || is_rb(f) || (f[0] == '/' && access(f, F_OK) != 0)) {
        out->file = NULL;
        out->def_line = 0;
    }
}

/* Where a block is: the scope most of its own statement lines fall in (the
 * declaration line is skipped: Spinel's #line placement makes it inherit
 * the previous statement's line), else the scope of its declaration. */
static void block_scope(const sprof_name_map *map, const sprof_code_site *site,
                        sprof_scope_hit *hit, sprof_line_ref *where)
{
    enum { MAXK = 16 };
    typedef struct candidate {
        sprof_scope_hit h;
        sprof_line_ref at; /* its first line */
        unsigned votes;
    } candidate;
    candidate cand[MAXK];
    size_t ncand = 0;
    for (size_t i = 0; i < site->nlines; i++) {
        const sprof_line_ref *l = &site->lines[i];
        if (!l->file || !is_rb(l->file) ||
            (l->line == site->decl_line && site->decl_file && strcmp(l->file, site->decl_file) == 0))
            continue;
        sprof_scope_hit h;
        sprof_name_map_scope(map, l->file, l->line, &h);
        if (!h.in_mapped_file)
            continue;
        size_t k = 0;
        while (k < ncand && !(cand[k].h.method == h.method && cand[k].h.class_label == h.class_label))
            k++;
        if (k == ncand) {
            if (ncand == MAXK)
                continue;
            cand[ncand++] = (candidate){ h, *l, 0 };
        }
        cand[k].votes++;
    }
    size_t best = 0;
    for (size_t k = 1; k < ncand; k++)
        if (cand[k].votes > cand[best].votes)
            best = k;
    if (ncand) {
        *hit = cand[best].h;
        *where = cand[best].at;
        return;
    }
    sprof_name_map_scope(map, site->decl_file, site->decl_line, hit);
    if (hit->in_mapped_file) {
        where->file = site->decl_file;
        where->line = site->decl_line;
    }
}

/* Where the top-level script of main starts: the smallest of its own .rb
 * lines that is in no method or class body (the first .rb line when the
 * map cannot tell). NULL when main has no .rb line. */
static const sprof_line_ref *main_start(const sprof_name_map *map, const sprof_code_site *site)
{
    const sprof_line_ref *first = NULL, *top = NULL;
    for (size_t i = 0; i < site->nlines; i++) {
        const sprof_line_ref *l = &site->lines[i];
        if (!is_rb(l->file) || !l->line)
            continue;
        if (!first)
            first = l;
        sprof_scope_hit h;
        sprof_name_map_scope(map, l->file, l->line, &h);
        if (h.in_mapped_file && !h.method && !h.class_label && (!top || l->line < top->line))
            top = l;
    }
    return top ? top : first;
}

void sprof_name_code(const sprof_name_map *map, const char *cname, const sprof_code_site *site,
                     sprof_symmap_names *out, char *ruby_buf, size_t ruby_len)
{
    char base[512];
    snprintf(base, sizeof base, "%.*s", (int)sprof_base_name_len(cname), cname);
    memset(out, 0, sizeof *out);
    out->c_name = cname;
    out->file = site->decl_file;
    out->def_line = site->decl_line;

    /* 0. The C main of a Spinel program is the top-level script, <main> to
     * CRuby: its own statement lines are in the .rb. */
    if (strcmp(base, "main") == 0) {
        const sprof_line_ref *l = main_start(map, site);
        if (l || map->count) { /* a map or .rb lines: a Spinel program */
            snprintf(ruby_buf, ruby_len, "<main>");
            out->ruby_name = ruby_buf;
            out->kind = SPROF_KIND_TOPLEVEL;
            out->cost = SPROF_COST_USER;
            if (l) {
                out->file = l->file;
                out->def_line = l->line;
            } else {
                own_location(site, out);
            }
            return;
        }
    }
    /* 1. Spinel's map (or the C sources): exact, or marked approximate. */
    const sprof_map_entry *e = map->count ? sprof_name_map_find(map, base) : NULL;
    if (e) {
        snprintf(ruby_buf, ruby_len, "%s", e->ruby);
        out->ruby_name = ruby_buf;
        out->kind = e->kind;
        out->cost = SPROF_COST_USER;
        out->flags = e->approx ? SPROF_FRAME_NAME_APPROX : 0;
        if (e->file) {
            out->file = e->file;
            out->def_line = e->line;
        }
        return;
    }
    /* 2. Collector / runtime / known native code, by the rule table. */
    const sprof_classify_rule *rule = sprof_classify(base);
    if (rule) {
        snprintf(ruby_buf, ruby_len, "%s", base);
        out->ruby_name = ruby_buf;
        out->kind = rule->kind;
        out->cost = rule->cost;
        own_location(site, out);
        return;
    }
    /* 3. Procs and fiber bodies, named after the method they sit in. */
    int block_type = sprof_block_function_type(base);
    if (block_type) {
        sprof_line_ref where = { NULL, 0 };
        sprof_scope_hit hit = { 0 };
        if (map->count)
            block_scope(map, site, &hit, &where);
        const char *what = block_type == 1 ? "block in" : "Fiber body in";
        snprintf(ruby_buf, ruby_len, "%s %s", what,
                 hit.method ? hit.method->ruby
                 : hit.class_label ? hit.class_label
                 : hit.in_mapped_file ? "<main>"
                                      : "<unknown>");
        out->ruby_name = ruby_buf;
        out->kind = SPROF_KIND_BLOCK;
        out->cost = SPROF_COST_USER;
        if (!hit.in_mapped_file)
            out->flags = SPROF_FRAME_NAME_APPROX | SPROF_FRAME_NAME_GUESSED;
        else if (hit.guessed)
            out->flags = SPROF_FRAME_NAME_APPROX | SPROF_FRAME_NAME_GUESSED;
        else if (hit.method && hit.method->approx)
            out->flags = SPROF_FRAME_NAME_APPROX;
        if (where.file) {
            out->file = where.file;
            out->def_line = where.line;
        }
        return;
    }
    /* 4. Other sp_* functions: with a map they are runtime helpers (the map
     * lists every Ruby method); without one, the demangler guesses. */
    if (strncmp(base, "sp_", 3) == 0) {
        uint8_t kind;
        if (map->count) {
            snprintf(ruby_buf, ruby_len, "%s", base);
            out->kind = SPROF_KIND_RUNTIME;
            out->cost = SPROF_COST_RUNTIME;
            own_location(site, out);
        } else if (sprof_demangle(base, ruby_buf, ruby_len, &kind)) {
            out->kind = kind;
            out->cost = SPROF_COST_USER;
            out->flags = SPROF_FRAME_NAME_APPROX;
        } else {
            snprintf(ruby_buf, ruby_len, "%s", base);
            out->kind = SPROF_KIND_RUNTIME;
            out->cost = SPROF_COST_RUNTIME;
            own_location(site, out);
        }
        out->ruby_name = ruby_buf;
        return;
    }
    /* 5. Any other C function defined in the program's .rb code (its
     * declaration is in a .rb) whose lines fall inside a mapped method is a
     * block Spinel emitted as its own function. Code declared elsewhere
     * (putc, atol inlined from glibc's headers) is never a block. */
    if (map->count && is_rb(site->decl_file)) {
        sprof_line_ref where = { NULL, 0 };
        sprof_scope_hit hit = { 0 };
        block_scope(map, site, &hit, &where);
        if (hit.method) {
            snprintf(ruby_buf, ruby_len, "block in %s", hit.method->ruby);
            out->ruby_name = ruby_buf;
            out->kind = SPROF_KIND_BLOCK;
            out->cost = SPROF_COST_USER;
            out->flags = hit.guessed         ? SPROF_FRAME_NAME_APPROX | SPROF_FRAME_NAME_GUESSED
                         : hit.method->approx ? SPROF_FRAME_NAME_APPROX
                                              : 0;
            out->file = where.file;
            out->def_line = where.line;
            return;
        }
    }
    /* 6. Native: main, C helpers, libc. */
    snprintf(ruby_buf, ruby_len, "%s", base);
    out->ruby_name = ruby_buf;
    out->kind = SPROF_KIND_NATIVE;
    out->cost = SPROF_COST_NATIVE;
    own_location(site, out);
}
