/* Where a real binary's code is, from its symmap: for the synthetic traces
 * of tests and benches that must symbolize like the binary (bench/fold's
 * gen_trace, tests/scale's gen_scale). */
#ifndef SPROF_TEST_SYMMAP_TEXT_H
#define SPROF_TEST_SYMMAP_TEXT_H

#include <stdint.h>

#include "sprof/symmap.h"
#include "trace_builder.h"

/* The link-time range of the function whose C name is `name`. 0, or -1. */
int st_function(const sprof_symmap *m, const char *name, uint64_t *lo, uint64_t *hi);
/* Write the MAPPING of the binary's executable segment loaded at `load`
 * (page-aligned, with the symmap's build-id). 0, or -1 + a message on
 * stderr naming `symmap_path` when it has no executable segment. */
int st_map_text(trace_builder *b, const sprof_symmap *m, uint64_t load, const char *binary,
                const char *symmap_path);

#endif
