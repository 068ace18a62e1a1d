/* Traces built record by record, folded through the fixture symmap:
 * aggregation, inline expansion, pc-1 for return addresses (no GC helper
 * between frames), frameless leaf through CFI candidates, filters,
 * per-thread roots, CPU weights, several traces summed, truncated files,
 * and the build-id refusal with its --force override. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_symmap.h"
#include "sprof/profile.h"
#include "trace_builder.h"
#include "fold_check.h"
#include "folded_text.h"

#define LOAD 0x555555554000ull
#define SP 0x7ffd00010000ull
#define START 1000000000ull

static char dir[64];

static void write_trace(const char *path, const uint8_t *id, int truncated)
{
    trace_builder b;
    if (tb_open(&b, path) != 0) {
        perror(path);
        exit(1);
    }
    tb_info(&b, SPROF_MODE_CPU, 1000, START, FIXTURE_BINARY);
    tb_mapping(&b, LOAD + 0x1000, LOAD + 0x11000, 0x1000, id, 4, FIXTURE_BINARY);
    tb_thread(&b, 100, SPROF_THREAD_START, START, "main");
    tb_thread(&b, 101, SPROF_THREAD_START, START, "worker");
    uint64_t ret_main[1] = { LOAD + 0x1310 };
    uint32_t off[1] = { 0x40 };
    /* 600 samples in the inlined Baz#qux of Foo#bar, called from main,
     * at t = 1.0 .. 1.6 s */
    for (int i = 0; i < 600; i++)
        tb_sample(&b, 100, 0, START + 1000000000ull + (uint64_t)i * 1000000, 1000000,
                  LOAD + 0x1115, SP, SP + 0x40, 0x40, ret_main, off, 1, NULL, NULL, 0);
    /* 300 samples in the frameless leaf Foo#leaf, whose return address
     * (a candidate at sp) lands on the GC cleanup after the inlined call:
     * looked up at pc-1 it is Baz#qux; t = 2.0 .. 2.3 s, thread 101 */
    uint32_t coff[2] = { 0, 8 };
    uint64_t cval[2] = { LOAD + 0x1130, LOAD + 0x1999 /* stale, unused */ };
    for (int i = 0; i < 300; i++)
        tb_sample(&b, 101, 0, START + 2000000000ull + (uint64_t)i * 1000000, 2000000,
                  LOAD + 0x1510, SP, SP + 0x40, 0x40, ret_main, off, 1, coff, cval, 2);
    /* 100 samples nowhere known: incomplete */
    for (int i = 0; i < 100; i++)
        tb_sample(&b, 100, SPROF_SAMPLE_TRUNCATED, START + 3000000000ull, 1000000, 0x1234, SP, 0,
                  SPROF_FPOFF_UNKNOWN, NULL, NULL, 0, NULL, NULL, 0);
    tb_stats(&b, 1000, 7, 100);
    if (tb_close(&b, truncated) != 0) {
        perror(path);
        exit(1);
    }
}

static char *fold(const char *const *traces, size_t n, const char *symmap, const sprof_load_options *o,
                  const sprof_fold_format *fmt, sprof_profile_stats *stats, char *err, size_t errlen)
{
    sprof_profile p;
    sprof_profile_init(&p);
    if (sprof_profile_add_traces(&p, traces, n, symmap, o, err, errlen) != 0) {
        sprof_profile_free(&p);
        return NULL;
    }
    char *buf = folded_text(&p, fmt);
    if (stats)
        *stats = p.stats;
    sprof_profile_free(&p);
    return buf;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/sprof-fold-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char symmap[128], t1[128], t2[128], t3[128];
    snprintf(symmap, sizeof symmap, "%s/app.symmap", dir);
    snprintf(t1, sizeof t1, "%s/a.trace", dir);
    snprintf(t2, sizeof t2, "%s/other-build.trace", dir);
    snprintf(t3, sizeof t3, "%s/cut.trace", dir);
    fixture_symmap_write(symmap);
    const uint8_t good[4] = { FIXTURE_BUILD_ID }, bad[4] = { 0x0a, 0x0b, 0x0c, 0x0d };
    write_trace(t1, good, 0);
    write_trace(t2, bad, 0);
    write_trace(t3, good, 1);

    char err[512] = "";
    sprof_load_options o;
    memset(&o, 0, sizeof o);
    sprof_fold_format fmt;
    memset(&fmt, 0, sizeof fmt);
    sprof_profile_stats st;
    const char *one[1] = { t1 };

    char *out = fold(one, 1, symmap, &o, &fmt, &st, err, sizeof err);
    const char *want = "0x1234 100\n"
                       "main;Foo#bar;Baz#qux 600\n"
                       "main;Foo#bar;Baz#qux;Foo#leaf 300\n";
    CHECK(out && strcmp(out, want) == 0, "basic fold:\n%s(err: %s)", out ? out : "", err);
    CHECK(st.samples == 1000 && st.incomplete == 100 && st.dropped == 7 && st.truncated == 100,
          "stats: %llu samples %llu incomplete %llu dropped %llu truncated",
          (unsigned long long)st.samples, (unsigned long long)st.incomplete,
          (unsigned long long)st.dropped, (unsigned long long)st.truncated);
    CHECK(st.unresolved_pcs == 1, "unresolved %llu", (unsigned long long)st.unresolved_pcs);
    free(out);

    /* C names, lines, classes */
    sprof_fold_format f2 = { 0, 1, 0, 0 };
    out = fold(one, 1, symmap, &o, &f2, NULL, err, sizeof err);
    CHECK(out && strstr(out, "main;sp_Foo_bar;sp_Baz_qux;sp_Foo_leaf 300\n"), "c names:\n%s", out ? out : err);
    free(out);
    sprof_fold_format f3 = { 0, 0, 1, 1 };
    out = fold(one, 1, symmap, &o, &f3, NULL, err, sizeof err);
    CHECK(out && strstr(out, "main_[n];Foo#bar:12_[u];Baz#qux:3_[u] 600\n"), "lines+classes:\n%s", out ? out : err);
    free(out);

    /* CPU weight */
    sprof_fold_format fw = { 1, 0, 0, 0 };
    out = fold(one, 1, symmap, &o, &fw, NULL, err, sizeof err);
    CHECK(out && strstr(out, "main;Foo#bar;Baz#qux 600000000\n") &&
              strstr(out, "main;Foo#bar;Baz#qux;Foo#leaf 600000000\n"),
          "cpu weight:\n%s", out ? out : err);
    free(out);

    /* --no-inline */
    sprof_load_options oi = o;
    oi.no_inline = 1;
    out = fold(one, 1, symmap, &oi, &fmt, NULL, err, sizeof err);
    CHECK(out && strstr(out, "main;Foo#bar 600\n") && strstr(out, "main;Foo#bar;Foo#leaf 300\n"),
          "no-inline:\n%s", out ? out : err);
    free(out);

    /* --tid 101, --threads */
    uint32_t tids[1] = { 101 };
    sprof_load_options ot = o;
    ot.tids = tids;
    ot.ntids = 1;
    ot.per_thread = 1;
    out = fold(one, 1, symmap, &ot, &fmt, &st, err, sizeof err);
    CHECK(out && strcmp(out, "[thread worker 101];main;Foo#bar;Baz#qux;Foo#leaf 300\n") == 0,
          "tid + threads:\n%s", out ? out : err);
    CHECK(st.filtered == 700, "filtered %llu", (unsigned long long)st.filtered);
    free(out);

    /* --from 1.5 --to 2.1: 100 of the first kind, 100 of the second */
    sprof_load_options ow = o;
    ow.from_ns = 1500000000ull;
    ow.to_ns = 2100000000ull;
    out = fold(one, 1, symmap, &ow, &fmt, NULL, err, sizeof err);
    CHECK(out && strcmp(out, "main;Foo#bar;Baz#qux 100\nmain;Foo#bar;Baz#qux;Foo#leaf 100\n") == 0,
          "time window:\n%s", out ? out : err);
    free(out);

    /* several traces are summed; a truncated one is counted */
    const char *two[2] = { t1, t3 };
    out = fold(two, 2, symmap, &o, &fmt, &st, err, sizeof err);
    CHECK(out && strstr(out, "main;Foo#bar;Baz#qux 1200\n"), "summed:\n%s", out ? out : err);
    CHECK(st.truncated_files == 1, "truncated files %llu", (unsigned long long)st.truncated_files);
    free(out);

    /* another build: refused, naming both build-ids; --force folds anyway */
    const char *other[1] = { t2 };
    err[0] = '\0';
    out = fold(other, 1, symmap, &o, &fmt, NULL, err, sizeof err);
    CHECK(!out, "mismatched build-id was accepted");
    CHECK(strstr(err, "build-id 0a0b0c0d") && strstr(err, "build-id 01020304") &&
              strstr(err, "different builds") && strstr(err, "--force") && strstr(err, t2),
          "mismatch message: %s", err);
    free(out);
    sprof_load_options of = o;
    of.force = 1;
    out = fold(other, 1, symmap, &of, &fmt, NULL, err, sizeof err);
    CHECK(out && strstr(out, "main;Foo#bar;Baz#qux 600\n"), "--force:\n%s", out ? out : err);
    free(out);

    /* a hostile trace is one error line naming the file */
    char junk[128];
    snprintf(junk, sizeof junk, "%s/junk.trace", dir);
    FILE *jf = fopen(junk, "wb");
    fwrite("SPROFTRC\x01\0\0\0\x10\0\0\0\x04\0\0\0\x03\0\0\0", 1, 24, jf);
    fclose(jf);
    const char *j1[1] = { junk };
    err[0] = '\0';
    out = fold(j1, 1, symmap, &o, &fmt, NULL, err, sizeof err);
    CHECK(!out && strstr(err, junk) && !strchr(err, '\n'), "junk trace: %s", err);
    free(out);

    unlink(symmap);
    unlink(t1);
    unlink(t2);
    unlink(t3);
    unlink(junk);
    rmdir(dir);
    return check_report("test_traces");
}
