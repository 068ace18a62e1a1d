/* Does this program end through a path no code of sprof runs on? A Go
 * program leaves through a raw exit_group system call (os.Exit, and the
 * return from main.main), so its trace has no END and there is no exit
 * line: the runtime then says at start where the trace goes, and names a
 * problem the moment it is noticed instead of at exit. Go executables are
 * recognised by their .go.buildinfo section (Go 1.13 and later). */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

static int has_section(int fd, const char *want)
{
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
        eh.e_shnum > 4096)
        return 0;
    Elf64_Shdr names;
    if (pread(fd, &names, sizeof names, (off_t)(eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof names)) !=
        (ssize_t)sizeof names)
        return 0;
    size_t wlen = strlen(want) + 1;
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (uint64_t)i * sizeof sh)) != (ssize_t)sizeof sh) return 0;
        char name[32];
        if (sh.sh_name >= names.sh_size || wlen > sizeof name) continue;
        if (pread(fd, name, wlen, (off_t)(names.sh_offset + sh.sh_name)) != (ssize_t)wlen) continue;
        if (memcmp(name, want, wlen) == 0) return 1;
    }
    return 0;
}

int sprof_exits_unseen(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    int go = has_section(fd, ".go.buildinfo");
    close(fd);
    return go;
}
