/* Rotating traces for programs that run for days (SPROF_ROTATE): every N
 * seconds, or once the file reaches SPROF_ROTATE_SIZE bytes, the writer
 * closes the trace (STATS, END "rotated") and goes on in the next file,
 * which is a complete trace of its own (writer.c, sprof_writer_rotate).
 * Files are SPROF_OUT with ".1", ".2", ... appended, or with "%n" in
 * SPROF_OUT replaced by the number; with SPROF_ROTATE_KEEP=K only the
 * newest K stay: an older one is removed when it is a trace this process
 * wrote. docs/runtime.md, "Rotating traces". */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

static char base_path[sizeof g_sprof.cfg.out_path];
static uint64_t seq;
static uint64_t next_due_ns; /* CLOCK_MONOTONIC */

/* "64M", "512k", "1000000": bytes; 0 when unset or wrong (warned). */
static uint64_t parse_size(const char *name, const char *s)
{
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    uint64_t unit = 1;
    if (*end == 'k' || *end == 'K') unit = 1024, end++;
    else if (*end == 'm' || *end == 'M') unit = 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G') unit = 1024ull * 1024 * 1024, end++;
    if (errno || *end || end == s || v == 0 || v > (1ull << 40) / unit) {
        sprof_warn("%s=%s is not a size (bytes, or a number with k, M or G); ignored", name, s);
        return 0;
    }
    return (uint64_t)v * unit;
}

void sprof_rotate_config(struct sprof_config *c)
{
    const char *secs = secure_getenv("SPROF_ROTATE");
    if (secs && *secs) {
        char *end;
        errno = 0;
        double v = strtod(secs, &end);
        if (errno || *end || !(v >= 0.1) || v > 1e7)
            sprof_warn("SPROF_ROTATE=%s is not a number of seconds (0.1..10000000); no rotation", secs);
        else
            c->rotate_ns = (uint64_t)(v * 1e9);
    }
    c->rotate_bytes = parse_size("SPROF_ROTATE_SIZE", secure_getenv("SPROF_ROTATE_SIZE"));
    const char *keep = secure_getenv("SPROF_ROTATE_KEEP");
    if (keep && *keep) {
        char *end;
        errno = 0;
        long v = strtol(keep, &end, 10);
        if (errno || *end || v < 0 || v > 1000000)
            sprof_warn("SPROF_ROTATE_KEEP=%s is not a count (0 = keep all); keeping all", keep);
        else
            c->rotate_keep = (uint32_t)v;
    }
}

static int rotating(void) { return g_sprof.cfg.rotate_ns || g_sprof.cfg.rotate_bytes; }

/* base_path with %n replaced by n, or ".n" appended */
static void name_of(uint64_t n, char *out, size_t len)
{
    const char *mark = strstr(base_path, "%n");
    int w;
    if (mark)
        w = snprintf(out, len, "%.*s%llu%s", (int)(mark - base_path), base_path, (unsigned long long)n, mark + 2);
    else
        w = snprintf(out, len, "%s.%llu", base_path, (unsigned long long)n);
    if (w < 0 || (size_t)w >= len) out[0] = 0; /* too long: the open fails and says so */
}

void sprof_rotate_first_name(void)
{
    if (!rotating()) return;
    /* a forked child comes here with its own %p name already expanded */
    snprintf(base_path, sizeof base_path, "%s", g_sprof.cfg.out_path);
    seq = 1;
    name_of(seq, g_sprof.cfg.out_path, sizeof g_sprof.cfg.out_path);
    next_due_ns = g_sprof.cfg.rotate_ns ? sprof_now_ns(CLOCK_MONOTONIC) + g_sprof.cfg.rotate_ns : 0;
}

void sprof_rotate_pass(uint64_t now)
{
    /* not once sampling stopped (exit, exec): the final drain ends this file */
    if (!rotating() || g_sprof.fd < 0 || !atomic_load(&g_sprof.running)) return;
    int by_time = next_due_ns && now >= next_due_ns;
    int by_size = g_sprof.cfg.rotate_bytes && g_sprof.file_bytes >= g_sprof.cfg.rotate_bytes;
    if (!by_time && !by_size) return;
    if (g_sprof.cfg.rotate_ns) next_due_ns = now + g_sprof.cfg.rotate_ns;
    char next[sizeof g_sprof.cfg.out_path];
    name_of(seq + 1, next, sizeof next);
    if (sprof_writer_rotate(next) != 0) return;
    seq++;
    uint32_t keep = g_sprof.cfg.rotate_keep;
    if (keep && seq > keep) {
        char old[sizeof g_sprof.cfg.out_path];
        name_of(seq - keep, old, sizeof old);
        /* only a trace of this process: never a file someone put there */
        if (sprof_trace_written_by_us(old)) unlink(old);
    }
}
