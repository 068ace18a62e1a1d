/* Where a real binary's code is, from its symmap (see symmap_text.h). */
#include "symmap_text.h"

#include <stdio.h>
#include <string.h>

int st_function(const sprof_symmap *m, const char *name, uint64_t *lo, uint64_t *hi)
{
    for (size_t i = 0; i < sprof_symmap_function_count(m); i++) {
        sprof_frame f;
        sprof_symmap_function(m, i, &f);
        if (strcmp(f.c_name, name) == 0) {
            *lo = f.func_lo;
            *hi = f.func_hi;
            return 0;
        }
    }
    return -1;
}

int st_map_text(trace_builder *b, const sprof_symmap *m, uint64_t load, const char *binary,
                const char *symmap_path)
{
    const sprof_segment *text = NULL;
    for (size_t i = 0; i < sprof_symmap_segment_count(m); i++)
        if (sprof_symmap_segment(m, i)->flags & 1 /* PF_X */)
            text = sprof_symmap_segment(m, i);
    if (!text) {
        fprintf(stderr, "%s: no executable segment\n", symmap_path);
        return -1;
    }
    size_t idlen;
    const uint8_t *id = sprof_symmap_build_id(m, &idlen);
    tb_mapping(b, load + (text->vaddr & ~0xfffull), load + ((text->vaddr + text->memsz + 0xfff) & ~0xfffull),
               text->file_offset & ~0xfffull, id, (uint32_t)idlen, binary);
    return 0;
}
