/* ELF questions asked before loading a profile (see sprof/elf_probe.h),
 * answered by the bounds-checked parser of elf_module.c. */
#include "sprof/elf_probe.h"

#include "elf_module.h"

int sprof_elf_probe(const char *path, sprof_elf_facts *f, char *err, size_t errlen)
{
    sprof_elf_module *m = sprof_elf_open(path, err, errlen);
    if (!m)
        return -1;
    f->has_dwarf = m->has_debug_info;
    f->links_sprof_runtime = m->links_sprof_runtime;
    sprof_elf_close(m);
    return 0;
}
