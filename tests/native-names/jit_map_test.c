/* The perf map reader (offline-tools/lib/src/readers/jit_map.c) on hostile
 * and ordinary files: lines parsed strictly and bad ones counted, the later
 * of two overlapping entries wins, a map older than the trace or owned by
 * someone else is refused with a reason, a missing one is not an error. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit_map.h"

static int failures;
static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

static int same(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

int main(void)
{
    char path[] = "/tmp/sprof-jitmap-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return perror("mkstemp"), 1;
    static const char text[] =
        "1000 100 first\n"
        "0x2000 0x10 second with spaces\r\n"
        "1080 10 later overlap\n"        /* inside first: wins there */
        "3000 0 zero size\n"              /* skipped */
        "ffffffffffffff00 200 wraps\n"   /* skipped */
        "12345678901234567 10 too many digits\n" /* skipped */
        "4000 10\n"                        /* no name: skipped */
        "xyz 10 not hex\n"                 /* skipped */
        "5000  10 two spaces\n"            /* skipped */
        "\n"                               /* skipped */
        "6000 8 last\n";
    if (write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1)) return perror("write"), 1;
    /* a NUL inside a line */
    static const char nul[] = "7000 8 a\0b\n";
    if (write(fd, nul, sizeof nul - 1) != (ssize_t)(sizeof nul - 1)) return perror("write"), 1;
    close(fd);

    uint64_t skipped = 0;
    char why[256];
    sprof_jit_map *m = sprof_jit_map_load(path, 0, &skipped, why, sizeof why);
    check(m != NULL, "an ordinary map loads");
    check(sprof_jit_map_size(m) == 4, "four good lines kept");
    check(skipped == 8, "eight bad lines counted");
    check(same(sprof_jit_map_find(m, 0x1000), "first"), "start of an entry");
    check(same(sprof_jit_map_find(m, 0x10ff), "first"), "last byte of an entry");
    check(sprof_jit_map_find(m, 0x1100) == NULL, "just past it: nothing");
    check(same(sprof_jit_map_find(m, 0x1085), "later overlap"), "the later of two overlapping lines wins");
    check(same(sprof_jit_map_find(m, 0x200f), "second with spaces"), "0x prefixes, spaces in names, CRLF");
    check(same(sprof_jit_map_find(m, 0x6000), "last"), "the last line");
    check(sprof_jit_map_find(m, 0x3000) == NULL && sprof_jit_map_find(m, 0) == NULL, "no entry: NULL");
    sprof_jit_map_free(m);

    m = sprof_jit_map_load(path, (uint64_t)4000000000ull * 1000000000ull, &skipped, why, sizeof why);
    check(m == NULL && strstr(why, "before the trace began") != NULL, "a map older than the trace is refused");
    if (geteuid() == 0 && chown(path, 12345, 12345) == 0) {
        m = sprof_jit_map_load(path, 0, &skipped, why, sizeof why);
        check(m == NULL && strstr(why, "owned by uid 12345") != NULL, "someone else's map is refused");
    }
    unlink(path);
    m = sprof_jit_map_load(path, 0, &skipped, why, sizeof why);
    check(m == NULL && why[0] == '\0', "no map: no reason, not an error");
    return failures ? 1 : 0;
}
