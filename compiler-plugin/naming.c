/* Naming rules, in order. See naming.h and docs/ruby-names.md. */
#include "naming.h"

#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "ruby_names.h"
#include "sprof/symmap.h"

/* The mapped method containing the code, judged from its statement lines
 * (the first one that lands inside a method, skipping the declaration line,
 * which Spinel's #line placement makes unreliable), then its declaration. */
static const sprof_map_entry *enclosing_method(const sprof_name_map *map,
                                               const sprof_code_site *site,
                                               sprof_line_ref *where, int *in_file)
{
    int any_in_file = 0;
    for (size_t i = 0; i < site->nlines; i++) {
        const sprof_line_ref *l = &site->lines[i];
        if (!l->file || (l->line == site->decl_line && site->decl_file &&
                         strcmp(l->file, site->decl_file) == 0))
            continue;
        int inf;
        const sprof_map_entry *e = sprof_name_map_enclosing(map, l->file, l->line, &inf);
        if (inf && !any_in_file) {
            any_in_file = 1;
            *where = *l;
        }
        if (e) {
            *where = *l;
            *in_file = 1;
            return e;
        }
    }
    int inf = 0;
    const sprof_map_entry *e =
        sprof_name_map_enclosing(map, site->decl_file, site->decl_line, &inf);
    if (e || (inf && !any_in_file)) {
        where->file = site->decl_file;
        where->line = site->decl_line;
    }
    *in_file = any_in_file || inf;
    return e;
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
        return;
    }
    /* 3. Procs and fiber bodies, named after the method they sit in. */
    int block_type = sprof_block_function_type(base);
    if (block_type) {
        sprof_line_ref where = { NULL, 0 };
        int in_file = 0;
        const sprof_map_entry *m = map->count ? enclosing_method(map, site, &where, &in_file) : NULL;
        const char *what = block_type == 1 ? "block in" : "Fiber body in";
        snprintf(ruby_buf, ruby_len, "%s %s", what, m ? m->ruby : in_file ? "<main>" : "<unknown>");
        out->ruby_name = ruby_buf;
        out->kind = SPROF_KIND_BLOCK;
        out->cost = SPROF_COST_USER;
        out->flags = (m || in_file) ? 0 : SPROF_FRAME_NAME_APPROX;
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
        } else if (sprof_demangle(base, ruby_buf, ruby_len, &kind)) {
            out->kind = kind;
            out->cost = SPROF_COST_USER;
            out->flags = SPROF_FRAME_NAME_APPROX;
        } else {
            snprintf(ruby_buf, ruby_len, "%s", base);
            out->kind = SPROF_KIND_RUNTIME;
            out->cost = SPROF_COST_RUNTIME;
        }
        out->ruby_name = ruby_buf;
        return;
    }
    /* 5. Any other C function whose lines fall inside a mapped method is a
     * block Spinel emitted as its own function. */
    if (map->count && strcmp(base, "main") != 0) {
        sprof_line_ref where = { NULL, 0 };
        int in_file = 0;
        const sprof_map_entry *m = enclosing_method(map, site, &where, &in_file);
        if (m) {
            snprintf(ruby_buf, ruby_len, "block in %s", m->ruby);
            out->ruby_name = ruby_buf;
            out->kind = SPROF_KIND_BLOCK;
            out->cost = SPROF_COST_USER;
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
}
