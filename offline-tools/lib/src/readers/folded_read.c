/* Read folded stacks ("a;b;c 123" lines) into a profile. The last
 * space-separated field is the count: an unsigned integer, or a decimal
 * fraction (difffolded.pl keeps them): the stack's samples get it rounded
 * to the nearest integer, the profile's exact_counts the fraction (the
 * folded writers print it), with a note; a line without a count is skipped with a warning, as
 * flamegraph.pl and inferno do (a file where no line has one is an error).
 * Other malformed lines (an empty frame, a NUL byte, an overflowing count)
 * are errors naming the file and line. Blank lines are skipped; an empty
 * file is zero stacks. sprof's class suffixes (_[u] _[r] _[g] _[n]) are
 * parsed back into the class and dropped (--classes writes them again);
 * flamegraph.pl's annotations (_[k] _[j] _[i] _[w]) give the class and stay
 * in the name, so every tool that writes folded text keeps them. sprof's
 * kernel leaves ([syscall write], [page fault], [kernel]) are of class
 * kernel even without a suffix. Spec: docs/folded.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/profile.h"
#include "sprof/trace_reader.h"

#define MAX_FOLDED_FRAMES 65536

/* A known suffix of name[0..*len): its class and flags; sprof's own class
 * suffixes are cut from *len, flamegraph.pl's annotations stay. */
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
    /* flamegraph.pl's (and, for _[k], ours): kept in the name */
    case 'k': *cost = SPROF_COST_KERNEL; return;
    case 'j': /* jit */
    case 'w': /* waker */
        return;
    case 'i': *flags = SPROF_FRAME_INLINED; *cost = SPROF_COST_USER; return;
    default: return;
    }
    *len -= 4;
}

/* What a file's lines were like, for the notes after it. */
typedef struct folded_tally {
    size_t stacks;          /* lines with a count */
    size_t no_count;        /* lines skipped: no count */
    size_t first_no_count;  /* line number of the first */
    size_t fractional;      /* counts rounded */
} folded_tally;

/* The count at the end of a line: 1 (set), 0 (not a count), -1 (error in err). */
static int parse_count(const char *num, const char *path, size_t lineno, uint64_t *out, int *fractional,
                       double *exact, char *err, size_t errlen)
{
    *exact = strtod(num, NULL);
    uint64_t count = 0;
    const char *c = num;
    if (*c < '0' || *c > '9')
        return 0;
    for (; *c >= '0' && *c <= '9'; c++) {
        unsigned d = (unsigned)(*c - '0');
        if (count > (UINT64_MAX - d) / 10) {
            snprintf(err, errlen, "%s:%zu: count overflows 64 bits", path, lineno);
            return -1;
        }
        count = count * 10 + d;
    }
    *fractional = 0;
    if (*c == '.') {
        /* a decimal fraction: round half up on the first digit after the point */
        c++;
        if (*c < '0' || *c > '9')
            return 0;
        int up = *c >= '5';
        int nonzero = 0;
        for (; *c >= '0' && *c <= '9'; c++)
            nonzero |= *c != '0';
        *fractional = nonzero;
        if (up) {
            if (count == UINT64_MAX) {
                snprintf(err, errlen, "%s:%zu: count overflows 64 bits", path, lineno);
                return -1;
            }
            count++;
        }
    }
    if (*c != '\0')
        return 0;
    *out = count;
    return 1;
}

/* Fractional counts: from the first one on, every stack's exact count is
 * kept beside its rounded one (the stacks before it were whole). `count`
 * is the rounded count this line already added to the stack's samples. */
static int keep_exact(sprof_profile *p, uint32_t index, uint64_t count, int fractional, double exact)
{
    if (!fractional && !p->exact_counts)
        return 0;
    size_t old = p->nexact;
    if (p->nexact < p->nstacks) {
        double *v = realloc(p->exact_counts, p->nstacks * sizeof *v);
        if (!v)
            return -1;
        for (size_t i = p->nexact; i < p->nstacks; i++)
            v[i] = (double)p->stacks[i].samples;
        p->exact_counts = v;
        p->nexact = p->nstacks;
    }
    /* a stack first seen in this pass holds this line's rounded count */
    p->exact_counts[index] += index >= old ? exact - (double)count : exact;
    return 0;
}

static int parse_line(sprof_profile *p, const char *path, size_t lineno, char *line, size_t len,
                      uint32_t *frames, size_t frames_cap, folded_tally *tally, char *err, size_t errlen)
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
    uint64_t count = 0;
    int fractional = 0, got = 0;
    double exact = 0;
    if (sp && sp != line) {
        got = parse_count(sp + 1, path, lineno, &count, &fractional, &exact, err, errlen);
        if (got < 0)
            return -1;
    }
    if (!got) { /* no count: skipped, as flamegraph.pl and inferno do; said after the file */
        if (!tally->no_count++)
            tally->first_no_count = lineno;
        return 0;
    }
    tally->fractional += fractional != 0;
    tally->stacks++;
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
    uint32_t index;
    if (sprof_profile_add_stack_at(p, frames, n, count, count, 0, &index) != 0 ||
        keep_exact(p, index, count, fractional, exact) != 0) {
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
    folded_tally tally = { 0 };
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
        rc = parse_line(p, path, lineno, line, (size_t)got, frames, frames_cap, &tally, err, errlen);
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        rc = -1;
    }
    if (rc == 0 && tally.no_count && !tally.stacks) {
        snprintf(err, errlen, "%s:%zu: no line ends in a count (expected \"frame;frame;... COUNT\")", path,
                 tally.first_no_count);
        rc = -1;
    }
    if (rc == 0 && tally.no_count)
        fprintf(stderr, "%s: warning: %zu line%s without a count skipped (the first: line %zu)\n", path,
                tally.no_count, tally.no_count == 1 ? "" : "s", tally.first_no_count);
    if (rc == 0 && tally.fractional)
        fprintf(stderr,
                "%s: note: %zu fractional count%s: kept in folded output, rounded to the nearest integer in the "
                "other views (they count samples)\n",
                path, tally.fractional, tally.fractional == 1 ? "" : "s");
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
