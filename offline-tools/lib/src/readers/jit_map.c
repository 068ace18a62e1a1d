/* /tmp/perf-<pid>.map reader (jit_map.h). The file is another process's
 * output and may be hostile: lines are parsed strictly (hex START and
 * SIZE, a name), anything else is skipped and counted; sizes of 0 and
 * ranges that wrap are skipped; at most MAX_ENTRIES lines are kept. */
#define _GNU_SOURCE
#include "jit_map.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_ENTRIES = 4000000, MAX_SCAN_BACK = 64 };
#define COARSE_CLOCK_SLACK_NS 50000000ull

typedef struct jit_entry {
    uint64_t start, end;
    uint32_t order; /* line number: later lines win overlaps */
    uint32_t name;  /* offset in names */
} jit_entry;

struct sprof_jit_map {
    jit_entry *v;
    size_t n, cap;
    char *names;
    size_t names_len, names_cap;
};

static int parse_hex(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        s += 2;
    uint64_t v = 0;
    int digits = 0;
    for (;; s++, digits++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            break;
        if (digits == 16)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (!digits || *s != ' ')
        return -1;
    *out = v;
    *p = s + 1;
    return 0;
}

static int add_entry(sprof_jit_map *m, uint64_t start, uint64_t size, const char *name, size_t len, uint32_t order)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        jit_entry *v = realloc(m->v, cap * sizeof *v);
        if (!v)
            return -1;
        m->v = v;
        m->cap = cap;
    }
    if (m->names_len + len + 1 > m->names_cap) {
        size_t cap = m->names_cap ? 2 * m->names_cap : 65536;
        while (cap < m->names_len + len + 1)
            cap *= 2;
        char *names = realloc(m->names, cap);
        if (!names)
            return -1;
        m->names = names;
        m->names_cap = cap;
    }
    memcpy(m->names + m->names_len, name, len);
    m->names[m->names_len + len] = '\0';
    m->v[m->n++] = (jit_entry){ start, start + size, order, (uint32_t)m->names_len };
    m->names_len += len + 1;
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const jit_entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

sprof_jit_map *sprof_jit_map_load(const char *path, uint64_t not_before_realtime_ns, uint64_t *skipped,
                                  char *why, size_t whylen)
{
    *skipped = 0;
    if (whylen)
        why[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno != ENOENT)
            snprintf(why, whylen, "cannot read it: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "not a regular file");
        fclose(f);
        return NULL;
    }
    /* /tmp is everyone's: a map someone else wrote is not the program's */
    if (st.st_uid != getuid() && st.st_uid != 0) {
        snprintf(why, whylen, "owned by uid %u, not by you", (unsigned)st.st_uid);
        fclose(f);
        return NULL;
    }
    /* file times come from the kernel's coarse clock, up to a tick (10 ms
     * at HZ 100) behind the trace's start time: a map written in the
     * program's first milliseconds read as older than the trace */
    uint64_t mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    if (not_before_realtime_ns && mtime + COARSE_CLOCK_SLACK_NS < not_before_realtime_ns) {
        snprintf(why, whylen, "last written before the trace began (another process that had the same pid)");
        fclose(f);
        return NULL;
    }
    sprof_jit_map *m = calloc(1, sizeof *m);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint32_t order = 0;
    while (m && (len = getline(&line, &cap, f)) >= 0) {
        order++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        const char *p = line;
        uint64_t start, size;
        if (parse_hex(&p, &start) != 0 || parse_hex(&p, &size) != 0 || !*p || !size || start + size < start ||
            strlen(p) != (size_t)(len - (p - line))) { /* a NUL inside the line */
            (*skipped)++;
            continue;
        }
        if (m->n >= MAX_ENTRIES || m->names_len + strlen(p) + 1 > UINT32_MAX) {
            (*skipped)++;
            continue;
        }
        if (add_entry(m, start, size, p, strlen(p), order) != 0) {
            sprof_jit_map_free(m);
            m = NULL;
        }
    }
    free(line);
    fclose(f);
    if (!m) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    qsort(m->v, m->n, sizeof *m->v, by_start);
    return m;
}

const char *sprof_jit_map_find(const sprof_jit_map *m, uint64_t pc)
{
    if (!m || !m->n)
        return NULL;
    size_t lo = 0, hi = m->n; /* first entry starting above pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    const jit_entry *best = NULL;
    for (size_t i = lo, k = 0; i-- > 0 && k < MAX_SCAN_BACK; k++) {
        const jit_entry *e = &m->v[i];
        if (pc < e->end && (!best || e->order > best->order))
            best = e;
    }
    return best ? m->names + best->name : NULL;
}

size_t sprof_jit_map_size(const sprof_jit_map *m)
{
    return m ? m->n : 0;
}

void sprof_jit_map_free(sprof_jit_map *m)
{
    if (!m)
        return;
    free(m->v);
    free(m->names);
    free(m);
}
