/* The symmap the fold tests share (see fixture_symmap.c). */
#ifndef SPROF_TEST_FIXTURE_SYMMAP_H
#define SPROF_TEST_FIXTURE_SYMMAP_H

#include <stdint.h>

#include "sprof/symmap.h"

#define FIXTURE_BUILD_ID 1, 2, 3, 4
#define FIXTURE_BINARY "/nonexistent/app"

/* Open from memory; *bytes (malloc'd) must outlive the symmap. */
sprof_symmap *fixture_symmap(uint8_t **bytes);
/* Write it to path. */
void fixture_symmap_write(const char *path);

#endif
