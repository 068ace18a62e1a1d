/* Temp-file-and-rename output (see out_file.h and docs/security.md). */
#include "sprof/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int sprof_out_open(sprof_out_file *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        return 0;
    }
    /* A target that exists and is not a regular file (/dev/null, a FIFO, a
     * terminal) is written in place: renaming a temp file over it would
     * replace the device node with a plain file. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: is a directory", path);
            return -1;
        }
        o->fp = fopen(path, "wb");
        if (!o->fp) {
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
            return -1;
        }
        o->in_place = 1;
        o->path = strdup(path);
        if (!o->path) {
            snprintf(err, errlen, "%s: out of memory", path);
            sprof_out_abort(o);
            return -1;
        }
        return 0;
    }
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    if (*base == '\0') {
        snprintf(err, errlen, "%s: is a directory name, not a file name", path);
        return -1;
    }
    size_t n = dirlen + 1 + strlen(base) + 16;
    o->path = strdup(path);
    o->tmp_path = malloc(n);
    if (!o->path || !o->tmp_path) {
        snprintf(err, errlen, "%s: out of memory", path);
        sprof_out_abort(o);
        return -1;
    }
    snprintf(o->tmp_path, n, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
        free(o->tmp_path);
        o->tmp_path = NULL;
        sprof_out_abort(o);
        return -1;
    }
    /* mkstemp makes 0600; an output file gets the usual 0666 & ~umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        /* not fatal: the file stays private */
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        sprof_out_abort(o);
        return -1;
    }
    return 0;
}

int sprof_out_commit(sprof_out_file *o, char *err, size_t errlen)
{
    if (!o->path) { /* stdout */
        if (fflush(o->fp) != 0 || ferror(o->fp)) {
            snprintf(err, errlen, "<stdout>: write error: %s", strerror(errno));
            return -1;
        }
        o->fp = NULL;
        return 0;
    }
    int bad = ferror(o->fp) != 0;
    int saved = errno;
    if (fclose(o->fp) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    o->fp = NULL;
    if (bad) {
        snprintf(err, errlen, "%s: write error: %s", o->path, strerror(saved));
        sprof_out_abort(o);
        return -1;
    }
    if (!o->in_place && rename(o->tmp_path, o->path) != 0) {
        snprintf(err, errlen, "%s: %s", o->path, strerror(errno));
        sprof_out_abort(o);
        return -1;
    }
    free(o->tmp_path);
    free(o->path);
    memset(o, 0, sizeof *o);
    return 0;
}

void sprof_out_abort(sprof_out_file *o)
{
    if (o->fp && o->fp != stdout)
        fclose(o->fp);
    if (o->tmp_path)
        unlink(o->tmp_path);
    free(o->tmp_path);
    free(o->path);
    memset(o, 0, sizeof *o);
}
