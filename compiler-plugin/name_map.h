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
    uint32_t end_line; /* line of the def's `end`, from the .rb source; 0 if unknown */
    UT_hash_handle hh;
} sprof_map_entry;

/* A class or module body in a .rb file (from its source), for blocks that
 * sit in a class body outside any method: `block in <class:Foo>`. */
typedef struct sprof_class_scope {
    const char *file_base; /* basename of the .rb */
    uint32_t lo, hi;
    char *label;           /* "<class:Foo>", "<module:Geo>" */
} sprof_class_scope;

/* What the JSON map held, to tell a broken map from a good one. */
typedef struct sprof_map_stats {
    size_t rows;           /* rows in the file */
    size_t empty_rows;     /* rows with an empty string where a value belongs */
    size_t nameless_rows;  /* rows without a C name (useless) */
    size_t clones_fixed;   /* "Sphere::::implicit::852#x" rows corrected to "Sphere#x" */
    size_t absent_rows;    /* rows with no file naming a function the binary does not have */
    char absent_example[128];
} sprof_map_stats;

typedef struct sprof_name_map {
    sprof_map_entry *by_c;     /* uthash on c */
    sprof_map_entry **by_line; /* entries with file+line, sorted by (basename, line) */
    size_t nby_line;
    size_t count;
    int exact;                 /* 1: from Spinel's JSON; 0: from C sources */
    char *json_path;           /* the JSON map read, NULL if none (owned) */
    sprof_map_stats stats;
    /* Basenames of the mapped .rb files whose source was read and agrees
     * with the map: methods there have exact [def, end] ranges. */
    char **rb_parsed;
    size_t nrb_parsed;
    sprof_class_scope *classes;
    size_t nclasses;
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

/* Read the mapped .rb files (each looked up as written, then by basename in
 * each of `dirs`) and give their methods exact [def, end] ranges and the
 * map its class bodies. A file that cannot be found, or whose defs do not
 * sit on the map's def lines (another version of the source), is left out:
 * its methods keep the guessed range (up to the next def). */
void sprof_name_map_read_sources(sprof_name_map *m, const char *const *dirs, size_t ndirs);

/* Where file:line is, for naming a block found there. */
typedef struct sprof_scope_hit {
    const sprof_map_entry *method; /* the mapped method whose body contains it, or NULL */
    const char *class_label;       /* else the class body containing it ("<class:Foo>"), or NULL */
    int in_mapped_file;            /* `file` is a mapped .rb file (else nothing is known) */
    int guessed;                   /* ranges guessed: the .rb source was not read */
} sprof_scope_hit;

void sprof_name_map_scope(const sprof_name_map *m, const char *file, uint32_t line,
                          sprof_scope_hit *out);

/* basename of a path ("a/b/c.rb" -> "c.rb"). */
const char *sprof_path_basename(const char *path);

#endif
