/* A traced process's address space, rebuilt from the trace's MAPPING
 * records: runtime PC -> (module, file offset). Modules are cached per
 * (path, build-id) across traces, so each library is parsed once per fold.
 * Internal to offline-tools/lib. */
#ifndef SPROF_ADDRESS_SPACE_H
#define SPROF_ADDRESS_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include <uthash.h>

#include "elf_module.h"
#include "sprof/symmap.h"

typedef struct sprof_module {
    UT_hash_handle hh;
    uint32_t id;
    char *key;
    char *path;
    const char *basename;
    uint8_t build_id[32]; /* as recorded in the trace */
    uint32_t build_id_len;
    int is_main;          /* symbolized through the symmap */
    uint64_t mapped_size; /* size of its executable mapping in the trace (for [vdso]) */
    int elf_state;        /* 0 not tried, 1 open and matching, -1 unusable */
    sprof_elf_module *elf;
    /* anonymous executable memory of one trace whose JIT wrote a perf map
     * (path: the map; mapped at file offset = start, so offsets are
     * addresses): its names; NULL for other modules */
    struct sprof_jit_map *jit;
} sprof_module;

typedef struct sprof_module_cache {
    sprof_module *table;
    uint32_t next_id;
} sprof_module_cache;

sprof_module *sprof_module_get(sprof_module_cache *c, const char *path, const uint8_t *build_id,
                               uint32_t build_id_len, int is_main);
/* The module's ELF file if readable and of the recorded build; else NULL. */
sprof_elf_module *sprof_module_elf(sprof_module *m);
void sprof_module_cache_free(sprof_module_cache *c);

typedef struct sprof_map_entry {
    uint64_t start, end, file_offset;
    uint32_t order; /* insertion order: later mappings win overlaps */
    sprof_module *mod;
} sprof_map_entry;

typedef struct sprof_address_space {
    sprof_map_entry *v;
    size_t n, cap;
} sprof_address_space;

int sprof_as_add(sprof_address_space *as, uint64_t start, uint64_t end, uint64_t file_offset,
                 sprof_module *mod);
/* Sort for lookups; call after the last add. */
void sprof_as_finish(sprof_address_space *as);
const sprof_map_entry *sprof_as_find(const sprof_address_space *as, uint64_t pc);
void sprof_as_free(sprof_address_space *as);

#endif
