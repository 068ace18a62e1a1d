/* A small symmap with every kind of content, shared by the symmap tests
 * and the fuzz-seed generator: functions (one overlapping the others), a
 * nested inline chain A -> B -> C with two call sites and a multi-range
 * inline, line rows, CFI rows, segments, a build-id. */
#ifndef SYMMAP_TEST_FIXTURE_H
#define SYMMAP_TEST_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/symmap_writer.h"

/* order 0: natural order; other values: a different, shuffled insertion order
 * of the same content (for the determinism test). */
sprof_symmap_writer *fixture_writer(unsigned order);

/* Builds the fixture into a malloc'd buffer; aborts on failure. */
uint8_t *fixture_bytes(unsigned order, size_t *size);

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#endif
