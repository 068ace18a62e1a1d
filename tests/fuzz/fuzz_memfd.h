/* For harnesses whose parser takes a path: the input bytes as a file. */
#ifndef SPROF_FUZZ_MEMFD_H
#define SPROF_FUZZ_MEMFD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* A memfd holding all of data[0..size) and its /proc/self/fd path in
 * path[0..pathlen); -1 if it cannot be made or written whole. */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size, char *path, size_t pathlen)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
