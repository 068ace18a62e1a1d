/* Read folded stacks ("a;b;c 123" lines) into a profile. Strict: the last
 * space-separated field must be an unsigned integer; anything else is an
 * error naming the file and line. Blank lines are skipped; an empty file
 * is zero stacks. A trailing class suffix (ours: _[u] _[r] _[g] _[n] _[k];
 * flamegraph.pl's: _[k] _[j] _[i] _[w]) is parsed back, and sprof's
 * kernel leaves ([syscall write], [page fault], [kernel]) are of class
 * kernel even without one. Spec: docs/folded.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/profile.h"
#include "sprof/trace_reader.h"

#define MAX_FOLDED_FRAMES 65536

/* Strip a known suffix from name[0..*len), setting cost/flags. */
static void parse_suffix(const char *name, size_t *len, uint8_t *cost, uint16_t *flags)
{
    *cost = SPROF_COST_NATIVE;
    *flags = 0;
    if (*len < 5 || name[*len - 4] != '_' || name[*len - 3] != '[' || name[*len - 1] != ']')
        return;
    switch (name[*len - 2]) {
    case 'u': *cost = SPROF_COST_USER; break;
    case 'r': *cost = SPROF_COST_RUNTIME; break;
    case 'g': *cost = SPROF_COST_GC; break;
    case 'n': *cost = SPROF_COST_NATIVE; break;
    case 'k': *cost = SPROF_COST_KERNEL; break; /* ours and flamegraph.pl's */
    case 'j': /* jit */
    case 'w': /* waker */
        *cost = SPROF_COST_NATIVE;
        break;
    case 'i': *flags = SPROF_FRAME_INLINED; *cost = SPROF_COST_USER; break;
    default: return;
    }
    *len -= 4;
}

static int parse_line(sprof_profile *p, const char *path, size_t lineno, char *line, size_t len,
                      uint32_t *frames, size_t frames_cap, char *err, size_t errlen)
{
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    if (len == 0)
        return 0;
    if (memchr(line, '\0', len)) {
        snprintf(err, errlen, "%s:%zu: NUL byte in line", path, lineno);
        return -1;
    }
    char *sp = strrchr(line, ' ');
    if (!sp || sp == line) {
        snprintf(err, errlen, "%s:%zu: expected \"frame;frame;... COUNT\"", path, lineno);
        return -1;
    }
    const char *num = sp + 1;
    if (*num == '\0') {
        snprintf(err, errlen, "%s:%zu: missing count after the last space", path, lineno);
        return -1;
    }
    uint64_t count = 0;
    for (const char *c = num; *c; c++) {
        if (*c == '.' || *c == 'e' || *c == 'E') {
            snprintf(err, errlen, "%s:%zu: fractional count \"%s\" (counts are integers)", path,
                     lineno, num);
            return -1;
        }
        if (*c < '0' || *c > '9') {
            snprintf(err, errlen, "%s:%zu: count \"%.40s\" is not an unsigned integer", path,
                     lineno, num);
            return -1;
        }
        unsigned d = (unsigned)(*c - '0');
        if (count > (UINT64_MAX - d) / 10) {
            snprintf(err, errlen, "%s:%zu: count overflows 64 bits", path, lineno);
            return -1;
        }
        count = count * 10 + d;
    }
    *sp = '\0';
    uint32_t n = 0;
    char *start = line;
    for (;;) {
        char *semi = strchr(start, ';');
        size_t flen = semi ? (size_t)(semi - start) : strlen(start);
        if (flen == 0) {
            snprintf(err, errlen, "%s:%zu: empty frame name", path, lineno);
            return -1;
        }
        if (n == frames_cap) { /* frames_cap < MAX_FOLDED_FRAMES only for lines too short to reach it */
            snprintf(err, errlen, "%s:%zu: more than %zu frames", path, lineno, frames_cap);
            return -1;
        }
        uint8_t cost;
        uint16_t flags;
        parse_suffix(start, &flen, &cost, &flags);
        if (sprof_is_kernel_leaf_name(start, flen)) /* written without --classes: still kernel time */
            cost = SPROF_COST_KERNEL;
        char saved = start[flen];
        start[flen] = '\0';
        sprof_pframe f = { .name = start, .c_name = start, .file = "", .module = "",
                           .kind = SPROF_KIND_NATIVE, .cost = cost, .flags = flags };
        frames[n++] = sprof_profile_intern_frame(p, &f);
        start[flen] = saved;
        if (!semi)
            break;
        start = semi + 1;
    }
    /* The unit of a folded count is whatever it was written in: kept as
     * both samples and weight so any view shows it. */
    if (sprof_profile_add_stack(p, frames, n, count, count, 0) != 0) {
        snprintf(err, errlen, "%s:%zu: out of memory", path, lineno);
        return -1;
    }
    return 0;
}

int sprof_profile_add_folded_stream(sprof_profile *p, FILE *f, const char *path,
                                    char *err, size_t errlen)
{
    /* Frame ids of one line: a line of L bytes has at most L/2 + 1 frames,
     * so the array grows with the longest line instead of starting at the cap. */
    uint32_t *frames = NULL;
    size_t frames_cap = 0;
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int rc = 0;
    while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t need = (size_t)got / 2 + 1;
        if (need > MAX_FOLDED_FRAMES)
            need = MAX_FOLDED_FRAMES;
        if (need > frames_cap) {
            size_t grow = frames_cap * 2 > need ? frames_cap * 2 : need;
            if (grow > MAX_FOLDED_FRAMES)
                grow = MAX_FOLDED_FRAMES;
            uint32_t *bigger = realloc(frames, grow * sizeof *frames);
            if (!bigger) {
                snprintf(err, errlen, "%s: out of memory", path);
                rc = -1;
                break;
            }
            frames = bigger;
            frames_cap = grow;
        }
        rc = parse_line(p, path, lineno, line, (size_t)got, frames, frames_cap, err, errlen);
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    free(line);
    free(frames);
    return rc;
}

int sprof_profile_add_folded(sprof_profile *p, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = sprof_profile_add_folded_stream(p, f, path, err, errlen);
    fclose(f);
    return rc;
}
