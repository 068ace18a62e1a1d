/* JIT symbol maps: /tmp/perf-<pid>.map, the text file a JIT writes for
 * perf (node --perf-basic-prof, a JVM's perf-map-agent, LuaJIT, CPython
 * 3.12 -X perf): one "START SIZE NAME" line per compiled function, START
 * and SIZE in hex. Names the code of a trace's anonymous executable
 * mappings (docs/native-names.md). */
#ifndef SPROF_JIT_MAP_H
#define SPROF_JIT_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sprof_jit_map sprof_jit_map;

/* The map at path, or NULL: *why is "" when there is none (no file), else
 * why it is not used (written before not_before_realtime_ns: another
 * process that had the same pid; not the reader's or root's; unreadable;
 * out of memory). *skipped counts malformed lines left out. */
sprof_jit_map *sprof_jit_map_load(const char *path, uint64_t not_before_realtime_ns, uint64_t *skipped,
                                  char *why, size_t whylen);
/* The name of the function at absolute address pc, NULL if none. Where
 * entries overlap (code moved, its space reused) the later line wins. */
const char *sprof_jit_map_find(const sprof_jit_map *m, uint64_t pc);
size_t sprof_jit_map_size(const sprof_jit_map *m);
void sprof_jit_map_free(sprof_jit_map *m);

#endif
