/* Compile DWARF call-frame information (.eh_frame or .debug_frame bytes)
 * into compact rows (sprof_cfi_row, sprof/symmap.h): for each address
 * range, where the CFA is, where the return address and the caller's rbp
 * are saved. Shared by the symmap generator (for the binary) and the
 * offline tools (for shared libraries read at fold time). libc only.
 * Rows whose CFA is an expression (PLT stubs, signal trampolines) are
 * emitted with cfa_reg = SPROF_CFA_UNDEFINED. */
#ifndef SPROF_CFI_H
#define SPROF_CFI_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* data/size: section bytes; section_vaddr: link-time address of the
 * section's first byte (pc-relative pointer encodings need it);
 * is_debug_frame: 1 for .debug_frame layout, 0 for .eh_frame.
 * On success returns 0 and a malloc'd array of rows sorted by lo,
 * non-overlapping, adjacent identical rows merged. On malformed input
 * returns -1 with one line in err (never reads outside data). */
int sprof_cfi_compile(const uint8_t *data, size_t size, uint64_t section_vaddr,
                      int is_debug_frame, sprof_cfi_row **rows, size_t *nrows,
                      char *err, size_t errlen);

/* Binary search in a sorted row array; NULL if none covers addr. */
const sprof_cfi_row *sprof_cfi_find(const sprof_cfi_row *rows, size_t n, uint64_t addr);

#ifdef __cplusplus
}
#endif
#endif
