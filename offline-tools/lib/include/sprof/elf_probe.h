/* Questions about an ELF file asked before any profile is loaded
 * (sprof-record: is there DWARF to make a symmap from?). */
#ifndef SPROF_ELF_PROBE_H
#define SPROF_ELF_PROBE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if `path` has a non-empty .debug_info section (built with -g), 0 if
 * not, -1 + err "<path>: <why>" if it is unreadable or not ELF64. */
int sprof_elf_has_dwarf(const char *path, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
