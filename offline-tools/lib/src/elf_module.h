/* A shared library (or any ELF64 file) read at fold time: function symbols,
 * PT_LOAD segments, build-id, and .eh_frame compiled into CFI rows.
 * Own minimal parser over <elf.h> (the offline tools do not depend on
 * libelf); the file is mmap'd and every offset is bounds-checked, so a
 * hostile or truncated file is refused, never read out of bounds.
 * Internal to offline-tools/lib. */
#ifndef SPROF_ELF_MODULE_H
#define SPROF_ELF_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap.h"

typedef struct sprof_elf_symbol {
    uint64_t lo, hi;   /* link-time [lo, hi) */
    const char *name;  /* points into the mapped file */
} sprof_elf_symbol;

typedef struct sprof_elf_module {
    char *path;
    void *map;          /* whole file, read-only */
    size_t map_size;
    int borrowed;       /* map not ours (sprof_elf_open_mem) */
    uint8_t build_id[32];
    uint32_t build_id_len;
    sprof_segment *segments; /* PT_LOAD */
    size_t nsegments;
    sprof_elf_symbol *symbols; /* sorted by lo, non-overlapping */
    size_t nsymbols;
    /* .eh_frame, compiled on first use */
    const uint8_t *eh_frame;
    size_t eh_frame_size;
    uint64_t eh_frame_vaddr;
    int cfi_state;      /* 0 not compiled, 1 compiled, -1 failed */
    sprof_cfi_row *cfi;
    size_t ncfi;
    /* separate debug file (/usr/lib/debug/.build-id/xx/yyyy.debug) whose
     * .symtab named the functions, kept mapped because names point into it */
    void *debug_map;
    size_t debug_map_size;
    char *plt_names; /* "sym@plt" strings of synthesized PLT stub symbols */
    char *pltgot_names; /* the same for .plt.got's stubs */
    int has_debug_info; /* a non-empty .debug_info section: built with -g */
    int links_sprof_runtime; /* defines sprof_rt_link: libsprof_rt.a is linked in */
} sprof_elf_module;

/* Open and parse `path`. NULL + one line in err if unreadable or malformed. */
sprof_elf_module *sprof_elf_open(const char *path, char *err, size_t errlen);
/* Same over an image already in memory (not copied, not unmapped on
 * close), e.g. this process's own vDSO; `name` names it in errors. */
sprof_elf_module *sprof_elf_open_mem(const void *data, size_t size, const char *name, char *err,
                                     size_t errlen);
void sprof_elf_close(sprof_elf_module *m);

/* File offset -> link-time vaddr through PT_LOAD; 0 ok, -1 none covers it. */
int sprof_elf_offset_to_vaddr(const sprof_elf_module *m, uint64_t off, uint64_t *vaddr);
/* Function symbol covering vaddr, or NULL. */
const sprof_elf_symbol *sprof_elf_symbol_at(const sprof_elf_module *m, uint64_t vaddr);
/* CFI row from the module's own .eh_frame; 0 ok, -1 none. */
int sprof_elf_cfi_lookup(sprof_elf_module *m, uint64_t vaddr, sprof_cfi_row *row);

#endif
