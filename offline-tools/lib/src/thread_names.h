/* A trace's thread names by tid (THREAD records), for the per-thread root
 * frames: a flat array behind an open-addressing index, the names left in
 * the trace's mapping (valid until the trace is closed), so a trace of a
 * million threads costs 24 bytes a thread here. Internal to offline-tools/lib. */
#ifndef SPROF_THREAD_NAMES_H
#define SPROF_THREAD_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "index_table.h"

typedef struct sprof_thread_name {
    uint32_t tid;
    const char *name;
} sprof_thread_name;

typedef struct sprof_thread_names {
    sprof_thread_name *v;
    size_t n, cap;
    sprof_index_table index;
} sprof_thread_names;

/* The latest name of tid wins; `name` must outlive the table. 0, or -1 out of memory. */
int sprof_thread_names_set(sprof_thread_names *t, uint32_t tid, const char *name);
/* NULL if tid was never named. */
const char *sprof_thread_names_get(const sprof_thread_names *t, uint32_t tid);
void sprof_thread_names_free(sprof_thread_names *t);

#endif
