/* CFI helpers shared by the CFI compiler and the symmap writer. */
#ifndef SPROF_CFI_INTERNAL_H
#define SPROF_CFI_INTERNAL_H

#include <stddef.h>

#include "sprof/symmap.h"

/* Put rows in canonical form: rules with nothing to say zeroed, sorted by
 * address, overlaps removed (the row starting first keeps its addresses;
 * a later row keeps only what lies beyond), empty rows dropped, adjacent
 * identical rows merged. Works in place; returns the new count. The result
 * depends only on the set of rows, not their order. */
size_t sprof_cfi_normalize(sprof_cfi_row *rows, size_t n);

/* Same rule (not the same range)? */
int sprof_cfi_same_rule(const sprof_cfi_row *a, const sprof_cfi_row *b);

#endif
