/* Human-readable views of a symmap: --dump and --lookup. */
#ifndef SPROF_DUMP_H
#define SPROF_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "sprof/symmap.h"

/* Print the whole map. */
void sprof_dump_symmap(const sprof_symmap *m, FILE *out);
/* Print the frames at link-time address addr, innermost first, one per line:
 * "0xADDR  #0 Vec2#+  (imeth, user, inlined)  app.rb:12". */
void sprof_print_lookup(const sprof_symmap *m, uint64_t addr, FILE *out);

#endif
