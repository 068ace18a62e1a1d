/* Questions about an ELF file asked before any profile is loaded
 * (sprof-record: is there DWARF to make a symmap from? is the runtime
 * linked in already?). */
#ifndef SPROF_ELF_PROBE_H
#define SPROF_ELF_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_elf_facts {
    int has_dwarf;           /* a non-empty .debug_info section (built with -g) */
    int links_sprof_runtime; /* defines sprof_rt_link: libsprof_rt.a is linked in */
} sprof_elf_facts;

/* 0 + *f, or -1 + err "<path>: <why>" if it is unreadable or not ELF64. */
int sprof_elf_probe(const char *path, sprof_elf_facts *f, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
