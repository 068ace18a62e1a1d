/* sprof-symmap's generator: ELF + DWARF + Ruby names -> app.symmap. */
#ifndef SPROF_GENERATE_H
#define SPROF_GENERATE_H

#include <stddef.h>

typedef struct sprof_gen_options {
    const char *binary;
    const char *out;            /* NULL: <binary>.symmap */
    const char *spinel_map;     /* NULL: look beside the binary */
    const char *const *c_sources;
    size_t nc_sources;
    int quiet;                  /* no routine warnings on stderr (a broken or suspicious
                                 * name map is still reported: one line) */
} sprof_gen_options;

/* Returns 0, or -1 with one line in err. Writes nothing on failure. */
int sprof_generate(const sprof_gen_options *o, char *err, size_t errlen);

#endif
