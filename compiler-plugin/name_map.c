/* Ruby name map: loading (JSON / C sources) and lookups. See name_map.h. */
#include "name_map.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classify.h"
#include "rb_scopes.h"
#include "ruby_names.h"
#include "sprof/symmap.h"

void sprof_name_map_init(sprof_name_map *m)
{
    memset(m, 0, sizeof *m);
}

void sprof_name_map_free(sprof_name_map *m)
{
    sprof_map_entry *e, *tmp;
    HASH_ITER(hh, m->by_c, e, tmp)
    {
        HASH_DEL(m->by_c, e);
        free(e->c);
        free(e->ruby);
        free(e->file);
        free(e);
    }
    free(m->by_line);
    free(m->json_path);
    for (size_t i = 0; i < m->nrb_parsed; i++)
        free(m->rb_parsed[i]);
    free(m->rb_parsed);
    for (size_t i = 0; i < m->nclasses; i++)
        free(m->classes[i].label);
    free(m->classes);
    memset(m, 0, sizeof *m);
}

const char *sprof_path_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Takes ownership of nothing: copies every string. Returns 0, -1 on OOM,
 * 1 if the C name was already present (first row wins). */
static int add_entry(sprof_name_map *m, const char *c, const char *ruby, const char *file,
                     uint32_t line, uint8_t kind, uint8_t approx)
{
    sprof_map_entry *e;
    HASH_FIND_STR(m->by_c, c, e);
    if (e)
        return 1;
    e = calloc(1, sizeof *e);
    if (!e)
        return -1;
    e->c = strdup(c);
    e->ruby = strdup(ruby);
    e->file = file ? strdup(file) : NULL;
    if (!e->c || !e->ruby || (file && !e->file)) {
        free(e->c);
        free(e->ruby);
        free(e->file);
        free(e);
        return -1;
    }
    e->line = line;
    e->kind = kind;
    e->approx = approx;
    HASH_ADD_KEYPTR(hh, m->by_c, e->c, strlen(e->c), e);
    m->count++;
    return 0;
}

static int kind_from_string(const char *s, uint8_t *kind)
{
    if (strcmp(s, "toplevel") == 0)
        *kind = SPROF_KIND_TOPLEVEL;
    else if (strcmp(s, "imeth") == 0)
        *kind = SPROF_KIND_IMETH;
    else if (strcmp(s, "cmeth") == 0)
        *kind = SPROF_KIND_CMETH;
    else
        return -1;
    return 0;
}

/* A field that must be a string (or absent/null when optional). Returns the
 * string, "" for absent/null, or NULL after writing err for a wrong type. */
static const char *string_field(json_t *row, const char *key, const char *path, size_t i,
                                char *err, size_t errlen)
{
    json_t *v = json_object_get(row, key);
    if (!v || json_is_null(v))
        return "";
    if (!json_is_string(v)) {
        snprintf(err, errlen, "%s: symbols[%zu]: \"%s\" must be a string", path, i, key);
        return NULL;
    }
    return json_string_value(v);
}

int sprof_name_map_load_json(sprof_name_map *m, const char *path, int quiet, char *err,
                             size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (jerr.line > 0)
            snprintf(err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
        else
            snprintf(err, errlen, "%s: %s", path, jerr.text);
        return -1;
    }
    int rc = -1;
    size_t empty_rows = 0, nameless_rows = 0;
    (void)quiet; /* the verdict on the map is given once the binary is known */
    json_t *syms = json_is_object(root) ? json_object_get(root, "symbols") : NULL;
    if (!json_is_object(root)) {
        snprintf(err, errlen, "%s: top level must be an object with a \"symbols\" array", path);
        goto out;
    }
    if (!json_is_array(syms)) {
        snprintf(err, errlen, "%s: \"symbols\" must be an array", path);
        goto out;
    }
    for (size_t i = 0; i < json_array_size(syms); i++) {
        json_t *row = json_array_get(syms, i);
        if (!json_is_object(row)) {
            snprintf(err, errlen, "%s: symbols[%zu]: must be an object", path, i);
            goto out;
        }
        const char *c = string_field(row, "c", path, i, err, errlen);
        const char *ruby = c ? string_field(row, "ruby", path, i, err, errlen) : NULL;
        const char *kind_s = ruby ? string_field(row, "kind", path, i, err, errlen) : NULL;
        const char *file = kind_s ? string_field(row, "file", path, i, err, errlen) : NULL;
        if (!file)
            goto out;
        json_t *jline = json_object_get(row, "line");
        uint32_t line = 0;
        if (jline && !json_is_null(jline)) {
            if (!json_is_integer(jline) || json_integer_value(jline) < 0 ||
                json_integer_value(jline) > (json_int_t)UINT32_MAX) {
                snprintf(err, errlen, "%s: symbols[%zu]: \"line\" must be a non-negative integer or null",
                         path, i);
                goto out;
            }
            line = (uint32_t)json_integer_value(jline);
        }
        uint8_t kind = SPROF_KIND_TOPLEVEL, dkind = SPROF_KIND_TOPLEVEL;
        if (*kind_s && kind_from_string(kind_s, &kind) != 0) {
            snprintf(err, errlen, "%s: symbols[%zu]: \"kind\" must be toplevel, imeth or cmeth, not \"%s\"",
                     path, i, kind_s);
            goto out;
        }
        if (!*c || !*ruby || !*kind_s || (json_object_get(row, "file") && json_is_string(json_object_get(row, "file")) && !*file))
            empty_rows++;
        if (!*c) { /* nothing to join on: the row is useless */
            nameless_rows++;
            continue;
        }
        char base[512], ruby_buf[512], demangled[512];
        snprintf(base, sizeof base, "%.*s", (int)sprof_base_name_len(c), c);
        uint8_t approx = 0;
        int can_demangle = sprof_demangle(base, demangled, sizeof demangled, &dkind);
        if (!*ruby) {
            ruby = can_demangle ? demangled : base;
            approx = 1;
        } else {
            uint8_t rkind;
            if (sprof_repair_map_name(ruby, ruby_buf, sizeof ruby_buf, &rkind)) {
                ruby = ruby_buf; /* Geo_cls_dist2 (toplevel) -> Geo.dist2 (cmeth) */
                kind = rkind;
                kind_s = "cmeth";
            }
        }
        if (!*kind_s)
            kind = can_demangle ? dkind : SPROF_KIND_TOPLEVEL;
        char plain_ruby[512];
        if (sprof_strip_implicit(ruby, plain_ruby, sizeof plain_ruby))
            m->stats.clones_fixed++;
        if (add_entry(m, base, plain_ruby, *file ? file : NULL, line, kind, approx) < 0) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto out;
        }
    }
    m->stats.rows = json_array_size(syms);
    m->stats.empty_rows = empty_rows;
    m->stats.nameless_rows = nameless_rows;
    free(m->json_path);
    m->json_path = strdup(path);
    m->exact = 1;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

static int ends_with_rb(const char *f)
{
    size_t n = strlen(f);
    return n > 3 && strcmp(f + n - 3, ".rb") == 0;
}

/* "#line N "file"" or the preprocessor's "# N "file" flags". Returns 1 and
 * updates (file, next_line) when `s` is such a directive. */
static int parse_line_directive(const char *s, char *file, size_t filelen, unsigned long *next_line)
{
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '#')
        return 0;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp(p, "line", 4) == 0)
        p += 4;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!isdigit((unsigned char)*p))
        return 0;
    char *end;
    errno = 0;
    unsigned long n = strtoul(p, &end, 10);
    if (errno || n > UINT32_MAX)
        return 0;
    p = end;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '"') {
        const char *q = strchr(p + 1, '"');
        if (!q)
            return 0;
        snprintf(file, filelen, "%.*s", (int)(q - p - 1), p + 1);
    }
    *next_line = n;
    return 1;
}

/* The sp_* identifier right before a '(' on a column-0 line: the declarator
 * of a definition ("__attribute__((noinline)) static T sp_x(...)"). */
static int definition_name(const char *s, char *name, size_t namelen)
{
    if (!isalpha((unsigned char)*s) && *s != '_')
        return 0;
    for (const char *paren = strchr(s, '('); paren; paren = strchr(paren + 1, '(')) {
        const char *e = paren;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        const char *b = e;
        while (b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '_'))
            b--;
        if (e - b < 4 || strncmp(b, "sp_", 3) != 0)
            continue;
        if (b > s && b[-1] != ' ' && b[-1] != '*' && b[-1] != '\t')
            continue;
        snprintf(name, namelen, "%.*s", (int)(e - b), b);
        return 1;
    }
    return 0;
}

int sprof_name_map_load_c_source(sprof_name_map *m, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char cur_file[1024] = "";
    unsigned long cur_line = 1;
    char *line = NULL, *prev_def = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned long prev_def_line = 0;
    char prev_def_file[1024] = "";
    int rc = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (parse_line_directive(line, cur_file, sizeof cur_file, &cur_line))
            continue;
        unsigned long this_line = cur_line++;
        const char *t = line;
        while (*t == ' ' || *t == '\t')
            t++;
        /* A pending "sp_x(...)" header whose body brace is on this line. */
        if (prev_def) {
            if (*t == '{' && ends_with_rb(prev_def_file)) {
                char ruby[512];
                uint8_t kind;
                if (sprof_demangle(prev_def, ruby, sizeof ruby, &kind) &&
                    add_entry(m, prev_def, ruby, prev_def_file, (uint32_t)prev_def_line, kind, 1) < 0)
                    rc = -1;
            }
            free(prev_def);
            prev_def = NULL;
        }
        char name[512];
        if (!definition_name(line, name, sizeof name) || sprof_classify(name))
            continue;
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
            len--;
        if (len && line[len - 1] == '{') {
            char ruby[512];
            uint8_t kind;
            if (ends_with_rb(cur_file) && sprof_demangle(name, ruby, sizeof ruby, &kind) &&
                add_entry(m, name, ruby, cur_file, (uint32_t)this_line, kind, 1) < 0)
                rc = -1;
        } else if (len && line[len - 1] == ')') {
            prev_def = strdup(name);
            prev_def_line = this_line;
            snprintf(prev_def_file, sizeof prev_def_file, "%s", cur_file);
        }
    }
    int read_error = ferror(f);
    free(line);
    free(prev_def);
    fclose(f);
    if (read_error) {
        snprintf(err, errlen, "%s: read error", path);
        return -1;
    }
    if (rc < 0)
        snprintf(err, errlen, "%s: out of memory", path);
    return rc;
}

static int cmp_by_line(const void *a, const void *b)
{
    const sprof_map_entry *x = *(sprof_map_entry *const *)a, *y = *(sprof_map_entry *const *)b;
    int c = strcmp(sprof_path_basename(x->file), sprof_path_basename(y->file));
    if (c)
        return c;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return strcmp(x->c, y->c);
}

void sprof_name_map_index(sprof_name_map *m)
{
    free(m->by_line);
    m->by_line = NULL;
    m->nby_line = 0;
    size_t n = 0;
    sprof_map_entry *e, *tmp;
    HASH_ITER(hh, m->by_c, e, tmp) if (e->file && e->line) n++;
    if (!n)
        return;
    m->by_line = malloc(n * sizeof *m->by_line);
    if (!m->by_line)
        return; /* no block naming, lookups still work */
    HASH_ITER(hh, m->by_c, e, tmp) if (e->file && e->line) m->by_line[m->nby_line++] = e;
    qsort(m->by_line, m->nby_line, sizeof *m->by_line, cmp_by_line);
}

const sprof_map_entry *sprof_name_map_find(const sprof_name_map *m, const char *base_c)
{
    sprof_map_entry *e;
    HASH_FIND_STR(m->by_c, base_c, e);
    if (!e) {
        char plain[512];
        if (sprof_strip_implicit(base_c, plain, sizeof plain))
            HASH_FIND_STR(m->by_c, plain, e);
    }
    return e;
}

static int file_parsed(const sprof_name_map *m, const char *base)
{
    for (size_t i = 0; i < m->nrb_parsed; i++)
        if (strcmp(m->rb_parsed[i], base) == 0)
            return 1;
    return 0;
}

/* Find a mapped .rb: as written, else its basename in each dir. */
static int locate_rb(const char *file, const char *const *dirs, size_t ndirs, char *out,
                     size_t outlen)
{
    if (access(file, R_OK) == 0) {
        snprintf(out, outlen, "%s", file);
        return 1;
    }
    for (size_t d = 0; d < ndirs; d++) {
        if (!dirs[d])
            continue;
        if ((size_t)snprintf(out, outlen, "%s/%s", *dirs[d] ? dirs[d] : ".",
                             sprof_path_basename(file)) < outlen &&
            access(out, R_OK) == 0)
            return 1;
    }
    return 0;
}

void sprof_name_map_read_sources(sprof_name_map *m, const char *const *dirs, size_t ndirs)
{
    for (size_t i = 0; i < m->nby_line; i++) {
        const char *base = sprof_path_basename(m->by_line[i]->file);
        if (i > 0 && strcmp(base, sprof_path_basename(m->by_line[i - 1]->file)) == 0)
            continue;
        size_t j = i; /* this file's entries: [i, j) */
        while (j < m->nby_line && strcmp(sprof_path_basename(m->by_line[j]->file), base) == 0)
            j++;
        char path[4096];
        sprof_rb_scope *sc = NULL;
        size_t nsc = 0;
        if (!locate_rb(m->by_line[i]->file, dirs, ndirs, path, sizeof path) ||
            sprof_rb_scan(path, &sc, &nsc) < 0)
            continue;
        /* Every mapped def line must be a def in this source, else it is
         * another version of the file and its layout proves nothing. */
        int agree = 1;
        for (size_t k = i; k < j && agree; k++) {
            int found = 0;
            for (size_t q = 0; q < nsc && !found; q++)
                found = sc[q].type == SPROF_RB_DEF && sc[q].lo == m->by_line[k]->line;
            agree = found;
        }
        char **np = agree ? realloc(m->rb_parsed, (m->nrb_parsed + 1) * sizeof *np) : NULL;
        char *copy = np ? strdup(base) : NULL;
        if (np)
            m->rb_parsed = np;
        if (!copy) {
            sprof_rb_scopes_free(sc, nsc);
            continue;
        }
        m->rb_parsed[m->nrb_parsed++] = copy;
        for (size_t k = i; k < j; k++)
            for (size_t q = 0; q < nsc; q++)
                if (sc[q].type == SPROF_RB_DEF && sc[q].lo == m->by_line[k]->line)
                    m->by_line[k]->end_line = sc[q].hi;
        for (size_t q = 0; q < nsc; q++) {
            if (sc[q].type == SPROF_RB_DEF || !sc[q].name || !*sc[q].name)
                continue;
            sprof_class_scope *nc = realloc(m->classes, (m->nclasses + 1) * sizeof *nc);
            if (!nc)
                break;
            m->classes = nc;
            size_t ll = strlen(sc[q].name) + 16;
            char *label = malloc(ll);
            if (!label)
                break;
            snprintf(label, ll, "<%s:%s>", sc[q].type == SPROF_RB_CLASS ? "class" : "module",
                     sc[q].name);
            m->classes[m->nclasses++] = (sprof_class_scope){ copy, sc[q].lo, sc[q].hi, label };
        }
        sprof_rb_scopes_free(sc, nsc);
    }
}

void sprof_name_map_scope(const sprof_name_map *m, const char *file, uint32_t line,
                          sprof_scope_hit *out)
{
    memset(out, 0, sizeof *out);
    if (!file || !line || !m->nby_line)
        return;
    const char *base = sprof_path_basename(file);
    /* First entry of this file with def line > `line`, by binary search. */
    size_t lo = 0, hi = m->nby_line;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sprof_map_entry *e = m->by_line[mid];
        int c = strcmp(sprof_path_basename(e->file), base);
        if (c < 0 || (c == 0 && e->line <= line))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t first = lo; /* first entry of the file at or before lo */
    while (first > 0 && strcmp(sprof_path_basename(m->by_line[first - 1]->file), base) == 0)
        first--;
    int in_file = (lo < m->nby_line && strcmp(sprof_path_basename(m->by_line[lo]->file), base) == 0) ||
                  first < lo;
    if (!in_file)
        return;
    out->in_mapped_file = 1;
    if (!file_parsed(m, base)) {
        /* No source: a method's range is guessed to run to the next def. */
        if (first < lo) {
            out->method = m->by_line[lo - 1];
            out->guessed = 1;
        }
        return;
    }
    /* Exact ranges: the innermost def whose [def, end] holds the line (defs
     * nest rarely; the latest-starting one that holds it is innermost). */
    for (size_t k = lo; k > first; k--) {
        const sprof_map_entry *e = m->by_line[k - 1];
        if (e->end_line && line <= e->end_line) {
            out->method = e;
            return;
        }
    }
    uint32_t best_lo = 0;
    for (size_t k = 0; k < m->nclasses; k++) {
        const sprof_class_scope *c = &m->classes[k];
        if (strcmp(c->file_base, base) == 0 && c->lo <= line && line <= c->hi && c->lo >= best_lo) {
            best_lo = c->lo;
            out->class_label = c->label;
        }
    }
}
