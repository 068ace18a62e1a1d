/* Source text for `top --lines`: files read once, split into lines, cached
 * by the name the profile gives them. Only regular files up to a size
 * limit are read; anything else just has no text. */
#include "sprof/top.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uthash.h>

#define SOURCE_MAX_BYTES (64u << 20)

typedef struct source_file {
    char *name;     /* as the profile names it */
    char *text;     /* file contents, newlines replaced by NUL; NULL if unreadable */
    char **lines;   /* lines[i] = text of line i+1 */
    size_t nlines;
    UT_hash_handle hh;
} source_file;

struct sprof_source_cache {
    char *dir;
    source_file *files;
};

sprof_source_cache *sprof_source_cache_new(const char *source_dir)
{
    sprof_source_cache *c = calloc(1, sizeof *c);
    if (c && source_dir) {
        c->dir = strdup(source_dir);
        if (!c->dir) {
            free(c);
            return NULL;
        }
    }
    return c;
}

/* Whole regular file into a NUL-terminated buffer, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || st.st_size > SOURCE_MAX_BYTES)
        goto out;
    buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        goto out;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
        if (r <= 0)
            break; /* shrank while reading: keep what we have */
        got += (size_t)r;
    }
    buf[got] = '\0';
    *len = got;
out:
    close(fd);
    return buf;
}

static void load(sprof_source_cache *c, source_file *f)
{
    size_t len = 0;
    f->text = slurp(f->name, &len);
    if (!f->text && c->dir && f->name[0] != '/') {
        size_t n = strlen(c->dir) + strlen(f->name) + 2;
        char *p = malloc(n);
        if (p) {
            snprintf(p, n, "%s/%s", c->dir, f->name);
            f->text = slurp(p, &len);
            if (!f->text) {
                const char *slash = strrchr(f->name, '/');
                if (slash) {
                    snprintf(p, n, "%s/%s", c->dir, slash + 1);
                    f->text = slurp(p, &len);
                }
            }
            free(p);
        }
    } else if (!f->text && c->dir) { /* absolute path that moved: try its basename */
        const char *slash = strrchr(f->name, '/');
        size_t n = strlen(c->dir) + strlen(slash ? slash : f->name) + 2;
        char *p = malloc(n);
        if (p) {
            snprintf(p, n, "%s/%s", c->dir, slash ? slash + 1 : f->name);
            f->text = slurp(p, &len);
            free(p);
        }
    }
    if (!f->text)
        return;
    size_t count = 1;
    for (size_t i = 0; i < len; i++)
        count += f->text[i] == '\n';
    f->lines = malloc(count * sizeof *f->lines);
    if (!f->lines) {
        free(f->text);
        f->text = NULL;
        return;
    }
    char *s = f->text;
    for (;;) {
        f->lines[f->nlines++] = s;
        char *nl = strchr(s, '\n');
        if (!nl)
            break;
        *nl = '\0';
        if (nl > s && nl[-1] == '\r')
            nl[-1] = '\0';
        s = nl + 1;
    }
    /* A trailing newline does not start another line. */
    if (f->nlines > 1 && f->lines[f->nlines - 1][0] == '\0' && len > 0 && f->text[len - 1] == '\0')
        f->nlines--;
}

const char *sprof_source_line(sprof_source_cache *c, const char *file, uint32_t line)
{
    if (!c || !file[0] || line == 0)
        return NULL;
    source_file *f = NULL;
    HASH_FIND_STR(c->files, file, f);
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        f->name = strdup(file);
        if (!f->name) {
            free(f);
            return NULL;
        }
        load(c, f);
        HASH_ADD_KEYPTR(hh, c->files, f->name, strlen(f->name), f);
    }
    if (!f->text || line > f->nlines)
        return NULL;
    return f->lines[line - 1];
}

void sprof_source_cache_free(sprof_source_cache *c)
{
    if (!c)
        return;
    source_file *f, *tmp;
    HASH_ITER(hh, c->files, f, tmp) {
        HASH_DEL(c->files, f);
        free(f->name);
        free(f->text);
        free(f->lines);
        free(f);
    }
    free(c->dir);
    free(c);
}
