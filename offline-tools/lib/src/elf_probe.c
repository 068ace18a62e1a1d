/* ELF questions asked before loading a profile (see sprof/elf_probe.h),
 * answered by the bounds-checked parser of elf_module.c. */
#include "sprof/elf_probe.h"

#include "elf_module.h"

int sprof_elf_has_dwarf(const char *path, char *err, size_t errlen)
{
    sprof_elf_module *m = sprof_elf_open(path, err, errlen);
    if (!m)
        return -1;
    int has = m->has_debug_info;
    sprof_elf_close(m);
    return has;
}
