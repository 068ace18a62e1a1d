/* Writing a symmap to disk: atomically (temporary file in the same
 * directory, mode 0644, rename), or in place for device/FIFO targets. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer_internal.h"

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int sprof_symmap_writer_write(sprof_symmap_writer *w, const char *path, char *err, size_t errlen)
{
    uint8_t *buf;
    size_t size;
    char why[256];
    if (sprof_symmap_writer_to_memory(w, &buf, &size, why, sizeof(why)) != 0) {
        wset_err(err, errlen, "%s: %s", path, why);
        return -1;
    }
    /* An existing non-regular target (/dev/null, a FIFO) is written in place:
     * renaming over it would replace the device with a regular file. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        int rc = -1;
        if (S_ISDIR(st.st_mode)) {
            wset_err(err, errlen, "%s: is a directory", path);
        } else {
            int fd = open(path, O_WRONLY | O_CLOEXEC);
            if (fd < 0 || write_all(fd, buf, size) != 0)
                wset_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            else
                rc = 0;
            if (fd >= 0 && close(fd) != 0 && rc == 0) {
                wset_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
                rc = -1;
            }
        }
        free(buf);
        return rc;
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp) {
        free(buf);
        wset_err(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", 12);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        wset_err(err, errlen, "%s: cannot create temporary file: %s", path, strerror(errno));
        free(tmp);
        free(buf);
        return -1;
    }
    int rc = -1;
    if (fchmod(fd, 0644) != 0 || write_all(fd, buf, size) != 0) {
        wset_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        close(fd);
    } else if (close(fd) != 0) {
        wset_err(err, errlen, "%s: cannot write: %s", path, strerror(errno));
    } else if (rename(tmp, path) != 0) {
        wset_err(err, errlen, "%s: cannot rename into place: %s", path, strerror(errno));
    } else {
        rc = 0;
    }
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    free(buf);
    return rc;
}
