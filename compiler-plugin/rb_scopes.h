/* Where Ruby scopes start and end in a .rb file, read from the source: every
 * `def`, `class` and `module` that starts a line, with the line of its
 * matching `end`. Used to name blocks after the method (or class body) whose
 * body really contains them, as CRuby does. The matching is by layout: the
 * first later line that starts with `end` at the same or a smaller
 * indentation (one-line and endless defs end on their own line). That is how
 * Ruby is written in practice (and what rubocop enforces); a file laid out
 * otherwise gives wrong ranges, so the caller checks the map's def lines
 * against the scan before trusting it. libc only. */
#ifndef SPROF_RB_SCOPES_H
#define SPROF_RB_SCOPES_H

#include <stddef.h>
#include <stdint.h>

enum sprof_rb_scope_type { SPROF_RB_DEF = 0, SPROF_RB_CLASS = 1, SPROF_RB_MODULE = 2 };

typedef struct sprof_rb_scope {
    uint32_t lo, hi; /* first and last line (1-based, inclusive) */
    uint8_t type;    /* enum sprof_rb_scope_type */
    char *name;      /* class/module: its name as written ("Foo", "Geo::Box"); def: NULL */
} sprof_rb_scope;

/* Scan `path`. Returns 0 with *out (sorted by lo; caller frees with
 * sprof_rb_scopes_free) or -1 when the file cannot be read. A scope with no
 * matching `end` runs to the end of the file. */
int sprof_rb_scan(const char *path, sprof_rb_scope **out, size_t *n);
void sprof_rb_scopes_free(sprof_rb_scope *s, size_t n);

/* The same, from text in memory (for tests). */
int sprof_rb_scan_text(const char *text, size_t len, sprof_rb_scope **out, size_t *n);

#endif
