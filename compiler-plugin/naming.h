/* Deciding the Ruby name, kind and cost class of one piece of code (a
 * function or an inlined copy), from the name map, the classification
 * table, the block rules and the demangler, in that order. Rules: docs/ruby-names.md. */
#ifndef SPROF_NAMING_H
#define SPROF_NAMING_H

#include <stddef.h>
#include <stdint.h>

#include "name_map.h"
#include "sprof/symmap_writer.h"

typedef struct sprof_line_ref {
    const char *file;
    uint32_t line;
} sprof_line_ref;

/* Where the code is, for block naming: its source lines in address order
 * (statements first; inlined callees excluded) and its DWARF declaration. */
typedef struct sprof_code_site {
    const sprof_line_ref *lines;
    size_t nlines;
    const char *decl_file;
    uint32_t decl_line;
} sprof_code_site;

/* Fills out (c_name = cname; ruby_name points at ruby_buf or into the map).
 * `map` may be empty (count 0). */
void sprof_name_code(const sprof_name_map *map, const char *cname, const sprof_code_site *site,
                     sprof_symmap_names *out, char *ruby_buf, size_t ruby_len);

#endif
