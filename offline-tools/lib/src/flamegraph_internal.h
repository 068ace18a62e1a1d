/* Shared between the flame graph renderer's source files only. */
#ifndef SPROF_FLAMEGRAPH_INTERNAL_H
#define SPROF_FLAMEGRAPH_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

/* The embedded script (flamegraph_js.c). */
extern const char sprof_flame_js[];

/* Write s as XML character data / attribute text: markup characters
 * escaped, control characters and invalid UTF-8 replaced by '?'. At most
 * max_chars code points are written (SIZE_MAX: all). */
void sprof_flame_xml_escape(FILE *out, const char *s, size_t max_chars);

/* Number of code points in s as sprof_flame_xml_escape counts them. */
size_t sprof_flame_utf8_len(const char *s);

#endif
