/* Where sprof-record finds the sampler and its companion tools: relative
 * to its own executable, so a build tree (build/bin, build/lib) and an
 * installed prefix (PREFIX/bin, PREFIX/lib) both work with nothing set. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

/* The directory of /proc/self/exe, malloc'd; NULL if unknown. */
static char *self_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    return strdup(buf);
}

static char *join(const char *dir, const char *rel)
{
    size_t n = strlen(dir) + 1 + strlen(rel) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, rel);
    return s;
}

char *record_find_preload(const char *override)
{
    const char *given = override ? override : getenv("SPROF_PRELOAD");
    if (given && *given) {
        char *abs = realpath(given, NULL);
        if (!abs)
            fprintf(stderr, RECORD_TOOL ": %s: %s (the sampler named by %s)\n", given, strerror(errno),
                    override ? "--preload" : "SPROF_PRELOAD");
        return abs;
    }
    char *dir = self_dir();
    char *path = dir ? join(dir, "../lib/libsprof.so") : NULL;
    char *abs = path ? realpath(path, NULL) : NULL;
    if (!abs)
        fprintf(stderr, RECORD_TOOL ": cannot find the sampler libsprof.so at %s: give --preload PATH\n",
                path ? path : "<this program's directory>/../lib");
    free(dir);
    free(path);
    return abs;
}

char *record_sibling_tool(const char *name)
{
    char *dir = self_dir();
    char *path = dir ? join(dir, name) : NULL;
    free(dir);
    if (path && access(path, X_OK) != 0) {
        free(path);
        path = NULL;
    }
    return path;
}
