/* What sprof-symmap needs from the ELF file itself (libelf): function
 * symbols with sizes, PT_LOAD layout, PIE-ness, the GNU build-id, and the
 * call-frame information compiled to compact rows. */
#ifndef SPROF_ELF_INPUT_H
#define SPROF_ELF_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap.h"

typedef struct sprof_elf_func {
    char *name;   /* symbol name, clone suffix kept */
    uint64_t lo, hi;
    char **aliases; /* the other names at exactly [lo, hi), best-ranked first (identical code
                     * folding gives several functions one body) */
    size_t naliases;
} sprof_elf_func;

typedef struct sprof_elf_info {
    int is_pie;
    uint8_t build_id[64];
    size_t build_id_len;
    sprof_segment *segs;
    size_t nsegs;
    sprof_elf_func *funcs; /* sorted by (lo, hi), one name per (lo, hi) */
    size_t nfuncs;
    int has_symtab;
    int has_debug_info;    /* a .debug_info section exists */
    int dynsym_only;       /* symbols came from .dynsym alone */
    sprof_cfi_row *cfi;    /* merged .eh_frame (+ .debug_frame) rows, sorted */
    size_t ncfi;
    char dwarf_problem[128]; /* non-empty: DWARF too damaged to hand to libdwarf */
} sprof_elf_info;

/* Read `path`. Returns 0, or -1 with one line in err ("<path>: ..."). Warnings
 * (dynsym only, CFI unreadable) go to stderr unless quiet. */
int sprof_elf_read(const char *path, int quiet, sprof_elf_info *out, char *err, size_t errlen);
void sprof_elf_free(sprof_elf_info *info);

/* Index of the function whose [lo, hi) contains addr (the smallest one when
 * several do), or -1. */
long sprof_elf_find_func(const sprof_elf_info *info, uint64_t addr);

#endif
