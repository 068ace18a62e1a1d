/* What SPROF_OUT may replace. sprof creates its trace with O_EXCL; a name
 * that exists is replaced (SPROF_OVERWRITE=1) only when it is a regular
 * file the user owns (or a symbolic link the user owns: the link itself is
 * removed, its target untouched). A directory, device node, FIFO, socket,
 * or another user's file or link, is never removed, whatever the setting:
 * as root, SPROF_OUT=/dev/null with SPROF_OVERWRITE=1 would otherwise have
 * deleted the real /dev/null. */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <unistd.h>

#include "rt_internal.h"

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

int sprof_refuse_existing(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0; /* gone meanwhile: the caller's open decides */
    if (S_ISDIR(st.st_mode)) {
        sprof_warn("SPROF_OUT=%s is a directory; SPROF_OUT names the trace file itself "
                   "(e.g. SPROF_OUT=%s/trace.bin); running unprofiled", path, path);
        return 1;
    }
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        sprof_warn("SPROF_OUT=%s is %s; sprof writes only to a new or regular file and never "
                   "replaces anything else, even with SPROF_OVERWRITE=1; running unprofiled",
                   path, kind_of(st.st_mode));
        return 1;
    }
    if (st.st_uid != geteuid()) {
        sprof_warn("SPROF_OUT=%s belongs to another user (uid %u); sprof replaces only your own "
                   "files, even with SPROF_OVERWRITE=1; running unprofiled", path, (unsigned)st.st_uid);
        return 1;
    }
    return 0;
}
