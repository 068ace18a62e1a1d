/* The Ruby name map: C function -> Ruby name, kind, def file:line. Loaded
 * from Spinel's app.symbols.json (exact) or derived from the Spinel C
 * sources that were compiled (names demangled, def lines from #line).
 * Also answers "which mapped method's lines contain file:line" for naming
 * blocks. Uses jansson + uthash. */
#ifndef SPROF_NAME_MAP_H
#define SPROF_NAME_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

typedef struct sprof_map_entry {
    char *c;          /* base C name (key) */
    char *ruby;       /* Ruby name; never NULL after loading */
    char *file;       /* def file, NULL if unknown */
    uint32_t line;    /* def line, 0 if unknown */
    uint8_t kind;     /* enum sprof_kind: TOPLEVEL / IMETH / CMETH */
    uint8_t approx;   /* Ruby name demangled or repaired, not from Spinel */
    UT_hash_handle hh;
} sprof_map_entry;

typedef struct sprof_name_map {
    sprof_map_entry *by_c;     /* uthash on c */
    sprof_map_entry **by_line; /* entries with file+line, sorted by (basename, line) */
    size_t nby_line;
    size_t count;
    int exact;                 /* 1: from Spinel's JSON; 0: from C sources */
} sprof_name_map;

void sprof_name_map_init(sprof_name_map *m);
void sprof_name_map_free(sprof_name_map *m);

/* Load Spinel's symbols JSON. Returns 0, or -1 with one line in err
 * ("path:LINE:COL: message" for syntax errors, "path: ..." otherwise).
 * Empty-string quirks produce one warning on stderr unless quiet. */
int sprof_name_map_load_json(sprof_name_map *m, const char *path, int quiet, char *err,
                             size_t errlen);

/* Add the sp_* definitions of a Spinel-generated C file whose preceding
 * #line directive names a .rb file. Returns 0 or -1 with err. */
int sprof_name_map_load_c_source(sprof_name_map *m, const char *path, char *err, size_t errlen);

/* Call once after loading, before the lookups below. */
void sprof_name_map_index(sprof_name_map *m);

const sprof_map_entry *sprof_name_map_find(const sprof_name_map *m, const char *base_c);

/* The mapped method whose source range (its def line up to the next def in
 * the same file) contains file:line; NULL if none. *in_mapped_file is set
 * when `file` is a file the map knows (so the line is top-level code). */
const sprof_map_entry *sprof_name_map_enclosing(const sprof_name_map *m, const char *file,
                                                uint32_t line, int *in_mapped_file);

/* basename of a path ("a/b/c.rb" -> "c.rb"). */
const char *sprof_path_basename(const char *path);

#endif
