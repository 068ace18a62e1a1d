/* Symbolizer: (module, file offset, is_return) -> profile frames, each
 * distinct key resolved ONCE (uthash). Main binary through the symmap
 * (inline chain -> several frames), shared libraries through their ELF
 * symbols, anything else as module+0xoffset. Internal to offline-tools/lib. */
#ifndef SPROF_SYMBOLIZE_H
#define SPROF_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "address_space.h"
#include "sprof/profile.h"
#include "sprof/symmap.h"

typedef struct sprof_symbolizer sprof_symbolizer;

sprof_symbolizer *sprof_symbolizer_new(sprof_profile *p, const sprof_symmap *symmap, int no_inline);
void sprof_symbolizer_free(sprof_symbolizer *s);

/* Frames at runtime `pc` (mapping `me`, NULL if no mapping covers it),
 * INNERMOST FIRST, as indices into p->frames. The array stays valid until
 * the symbolizer is freed. Returns the count (>= 1), or 0 on out of memory. */
uint32_t sprof_symbolize(sprof_symbolizer *s, const sprof_map_entry *me, uint64_t pc, int is_return,
                         const uint32_t **frames);

/* Distinct PCs that got no symbol. */
uint64_t sprof_symbolizer_unresolved(const sprof_symbolizer *s);

/* Link-time address of a runtime pc in mapping me (main binary through the
 * symmap's segments, libraries through their PT_LOADs). 0 ok, -1 unknown. */
int sprof_link_address(const sprof_symmap *symmap, const sprof_map_entry *me, uint64_t pc,
                       uint64_t *vaddr);

#endif
