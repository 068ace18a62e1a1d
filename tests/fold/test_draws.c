/* The cpuclock pacer's draws under the CPU weight (trace format 2.9): a
 * DRAW_PREV sample gives half of its weight to its thread's previous DRAW
 * sample (the trapezoid rule), other samples between them do not break
 * that, a thread's first draw keeps all of its own, a draw the time window
 * leaves out breaks the chain, sample counts are unchanged, and the timeline
 * weighs each sample as the stacks do. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_symmap.h"
#include "fold_check.h"
#include "folded_text.h"
#include "sprof/profile.h"
#include "trace_builder.h"

#define LOAD 0x555555554000ull
#define SP 0x7ffd00010000ull
#define START 1000000000ull
#define MS 1000000ull

enum { DRAW = SPROF_SAMPLE_DRAW, PREV = SPROF_SAMPLE_DRAW | SPROF_SAMPLE_DRAW_PREV };

static void sample(trace_builder *b, uint32_t tid, uint32_t flags, uint64_t at_ms, uint64_t weight_ns, uint64_t pc)
{
    tb_sample(b, tid, flags, START + at_ms * MS, weight_ns, pc, SP, 0, SPROF_FPOFF_UNKNOWN, NULL, NULL, 0, NULL, NULL,
              0);
}

static char *fold(const char *trace, const char *symmap, const sprof_load_options *o, int cpu, char *err,
                  size_t errlen)
{
    sprof_profile p;
    sprof_profile_init(&p);
    const char *one[1] = { trace };
    if (sprof_profile_add_traces(&p, one, 1, symmap, o, err, errlen) != 0) {
        sprof_profile_free(&p);
        return NULL;
    }
    sprof_fold_format fmt;
    memset(&fmt, 0, sizeof fmt);
    fmt.weight_cpu = cpu;
    char *buf = folded_text(&p, &fmt);
    sprof_profile_free(&p);
    return buf;
}

int main(void)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/sprof-draws-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char symmap[128], trace[128];
    snprintf(symmap, sizeof symmap, "%s/app.symmap", dir);
    snprintf(trace, sizeof trace, "%s/a.trace", dir);
    fixture_symmap_write(symmap);
    const uint8_t id[4] = { FIXTURE_BUILD_ID };

    trace_builder b;
    if (tb_open(&b, trace) != 0) {
        perror(trace);
        return 1;
    }
    tb_info(&b, SPROF_MODE_CPU, 1000, START, FIXTURE_BINARY);
    tb_mapping(&b, LOAD + 0x1000, LOAD + 0x11000, 0x1000, id, 4, FIXTURE_BINARY);
    tb_thread(&b, 100, SPROF_THREAD_START, START, "main");
    tb_thread(&b, 101, SPROF_THREAD_START, START, "worker");
    sample(&b, 100, DRAW, 1, 100, 0x1000);  /* its first draw: all of it */
    sample(&b, 100, PREV, 2, 200, 0x2000);  /* 100 of it to 0x1000 */
    sample(&b, 100, 0, 3, 50, 0x3000);      /* no draw: between, not a link */
    sample(&b, 101, PREV, 3, 1000, 0x4000); /* no draw of its thread before: all of it */
    sample(&b, 100, PREV, 4, 300, 0x1000);  /* 150 to 0x2000 */
    sample(&b, 100, DRAW, 20, 60, 0x5000);  /* outside the window below */
    sample(&b, 100, PREV, 21, 80, 0x6000);  /* 40 to 0x5000, or (window) none */
    tb_stats(&b, 7, 0, 0);
    if (tb_close(&b, 0) != 0) {
        perror(trace);
        return 1;
    }

    char err[512] = "";
    sprof_load_options o;
    memset(&o, 0, sizeof o);
    char *out = fold(trace, symmap, &o, 1, err, sizeof err);
    CHECK(out && strstr(out, "0x1000 350\n") && strstr(out, "0x2000 250\n") && strstr(out, "0x3000 50\n") &&
              strstr(out, "0x4000 1000\n") && strstr(out, "0x5000 100\n") && strstr(out, "0x6000 40\n"),
          "cpu weight, trapezoid:\n%s(err: %s)", out ? out : "", err);
    free(out);

    out = fold(trace, symmap, &o, 0, err, sizeof err);
    CHECK(out && strstr(out, "0x1000 2\n") && strstr(out, "0x2000 1\n") && strstr(out, "0x5000 1\n"),
          "sample counts unchanged:\n%s(err: %s)", out ? out : "", err);
    free(out);

    /* the timeline (speedscope, --timeline) weighs each sample as the stacks do */
    sprof_load_options ot = o;
    ot.timeline = 1;
    sprof_profile p;
    sprof_profile_init(&p);
    const char *one[1] = { trace };
    int rc = sprof_profile_add_traces(&p, one, 1, symmap, &ot, err, sizeof err);
    static const struct { uint32_t tid; uint64_t ms, want; } tl[] = {
        { 100, 1, 200 }, { 100, 2, 250 }, { 100, 3, 50 }, { 101, 3, 1000 },
        { 100, 4, 150 }, { 100, 20, 100 }, { 100, 21, 40 },
    };
    CHECK(rc == 0 && p.ntimeline == 7, "timeline: %zu samples (err: %s)", p.ntimeline, err);
    for (size_t i = 0; rc == 0 && i < p.ntimeline; i++)
        for (size_t k = 0; k < sizeof tl / sizeof tl[0]; k++)
            if (p.timeline[i].tid == tl[k].tid && p.timeline[i].time_ns == START + tl[k].ms * MS)
                CHECK(p.timeline[i].weight_ns == tl[k].want, "timeline sample of %u at %llu ms: %llu, want %llu",
                      tl[k].tid, (unsigned long long)tl[k].ms, (unsigned long long)p.timeline[i].weight_ns,
                      (unsigned long long)tl[k].want);
    sprof_profile_free(&p);

    /* a window that leaves out the draw at 20 ms: the one at 21 ms keeps all */
    sprof_load_options w = o;
    w.from_ns = 21 * MS;
    out = fold(trace, symmap, &w, 1, err, sizeof err);
    CHECK(out && strcmp(out, "0x6000 80\n") == 0, "window:\n%s(err: %s)", out ? out : "", err);
    free(out);

    unlink(trace);
    unlink(symmap);
    rmdir(dir);
    return check_report("test_draws");
}
