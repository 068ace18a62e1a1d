/* Opening a symmap: mmap the file (or adopt caller bytes), validate once. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader_internal.h"

static sprof_symmap *finish_open(sprof_symmap *m, char *err, size_t errlen)
{
    if (symmap_validate(m, err, errlen) != 0)
        goto bad;
    if (m->segs.n) {
        m->segments = calloc(m->segs.n, sizeof(*m->segments));
        if (!m->segments) {
            snprintf(err, errlen, "%s: out of memory", m->name);
            goto bad;
        }
        for (size_t i = 0; i < m->segs.n; i++) {
            const symmap_segment_disk *s = R_SEG(m, i);
            m->segments[i] = (sprof_segment){ s->vaddr, s->memsz, s->file_offset, s->filesz, s->flags };
        }
    }
    if (addr_index_build(&m->frange_index, &m->franges) != 0 || addr_index_build(&m->cfi_index, &m->cfi) != 0) {
        snprintf(err, errlen, "%s: out of memory", m->name);
        goto bad;
    }
    return m;
bad:
    sprof_symmap_close(m);
    return NULL;
}

static sprof_symmap *new_map(const char *name, char *err, size_t errlen)
{
    sprof_symmap *m = calloc(1, sizeof(*m));
    char *n = strdup(name ? name : "<memory>");
    if (!m || !n) {
        free(m);
        free(n);
        snprintf(err, errlen, "%s: out of memory", name ? name : "<memory>");
        return NULL;
    }
    m->name = n;
    return m;
}

sprof_symmap *sprof_symmap_open_mem(const void *data, size_t size, const char *name,
                                    char *err, size_t errlen)
{
    sprof_symmap *m = new_map(name, err, errlen);
    if (!m)
        return NULL;
    if (size == 0 || !data) {
        snprintf(err, errlen, "%s: empty file", m->name);
        sprof_symmap_close(m);
        return NULL;
    }
    if ((uintptr_t)data % 8 != 0) {
        /* Tables are read in place as aligned structs: take an aligned copy. */
        m->owned = malloc(size);
        if (!m->owned) {
            snprintf(err, errlen, "%s: out of memory", m->name);
            sprof_symmap_close(m);
            return NULL;
        }
        memcpy(m->owned, data, size);
        data = m->owned;
    }
    m->base = data;
    m->size = size;
    return finish_open(m, err, errlen);
}

sprof_symmap *sprof_symmap_open(const char *path, char *err, size_t errlen)
{
    sprof_symmap *m = new_map(path, err, errlen);
    if (!m)
        return NULL;
    /* O_NONBLOCK: a FIFO must not hang us before fstat refuses it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto bad;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto bad;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory", path);
        goto bad;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        goto bad;
    }
    if (st.st_size == 0) {
        snprintf(err, errlen, "%s: empty file", path);
        goto bad;
    }
    if ((uint64_t)st.st_size > (size_t)-1) {
        snprintf(err, errlen, "%s: too large to map", path);
        goto bad;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
        goto bad;
    }
    close(fd);
    m->map = p;
    m->map_size = (size_t)st.st_size;
    m->base = p;
    m->size = (size_t)st.st_size;
    return finish_open(m, err, errlen);
bad:
    if (fd >= 0)
        close(fd);
    sprof_symmap_close(m);
    return NULL;
}

void sprof_symmap_close(sprof_symmap *m)
{
    if (!m)
        return;
    if (m->map)
        munmap(m->map, m->map_size);
    free(m->owned);
    free(m->segments);
    addr_index_free(&m->frange_index);
    addr_index_free(&m->cfi_index);
    free(m->name);
    free(m);
}
