/* Folded I/O: write/read round trip (with and without class suffixes),
 * sorting and merging, names with separators, strict parsing of malformed
 * lines (file:line in the error), empty file = zero stacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sprof/profile.h"
#include "fold_check.h"
#include "folded_text.h"

static char dir[64];


static const char *write_file(const char *name, const char *text)
{
    static char path[8][160];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 160, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

static uint32_t frame(sprof_profile *p, const char *name, uint8_t cost, uint32_t line)
{
    sprof_pframe f = { .name = name, .c_name = name, .file = "app.rb", .module = "app",
                       .line = line, .cost = cost };
    return sprof_profile_intern_frame(p, &f);
}

static void test_round_trip(void)
{
    sprof_profile p;
    sprof_profile_init(&p);
    uint32_t m = frame(&p, "main", SPROF_COST_NATIVE, 0);
    uint32_t a = frame(&p, "Foo#bar", SPROF_COST_USER, 12);
    uint32_t a2 = frame(&p, "Foo#bar", SPROF_COST_USER, 13); /* same method, other line */
    uint32_t g = frame(&p, "sp_gc_alloc", SPROF_COST_GC, 0);
    uint32_t w = frame(&p, "we;ird\nname", SPROF_COST_RUNTIME, 0);
    uint32_t s1[] = { m, a, g }, s2[] = { m, a2, g }, s3[] = { m, w };
    sprof_profile_add_stack(&p, s1, 3, 5, 50, 0);
    sprof_profile_add_stack(&p, s2, 3, 7, 70, 0);
    sprof_profile_add_stack(&p, s3, 2, 1, 10, 0);
    sprof_profile_add_stack(&p, s1, 3, 1, 10, 0); /* merges into the first */
    CHECK(p.nstacks == 3, "%zu stacks", p.nstacks);

    sprof_fold_format plain = { 0 };
    char *out = folded_text(&p, &plain);
    CHECK(strcmp(out, "main;Foo#bar;sp_gc_alloc 13\nmain;we:ird name 1\n") == 0, "plain:\n%s", out);
    free(out);
    sprof_fold_format lines = { .lines = 1 };
    out = folded_text(&p, &lines);
    CHECK(strcmp(out, "main;Foo#bar:12;sp_gc_alloc 6\nmain;Foo#bar:13;sp_gc_alloc 7\nmain;we:ird name 1\n") == 0,
          "lines:\n%s", out);
    free(out);
    sprof_fold_format cpu = { .weight_cpu = 1 };
    out = folded_text(&p, &cpu);
    CHECK(strcmp(out, "main;Foo#bar;sp_gc_alloc 130\nmain;we:ird name 10\n") == 0, "cpu:\n%s", out);
    free(out);

    sprof_fold_format classes = { .classes = 1 };
    out = folded_text(&p, &classes);
    CHECK(strcmp(out, "main_[n];Foo#bar_[u];sp_gc_alloc_[g] 13\nmain_[n];we:ird name_[r] 1\n") == 0,
          "classes:\n%s", out);
    /* read back: same text, classes parsed back into cost */
    const char *path = write_file("rt.folded", out);
    sprof_profile q;
    sprof_profile_init(&q);
    char err[256] = "";
    CHECK(sprof_profile_add_folded(&q, path, err, sizeof err) == 0, "read back: %s", err);
    char *again = folded_text(&q, &classes);
    CHECK(strcmp(again, out) == 0, "round trip with classes:\n%s\nvs\n%s", again, out);
    int gc_found = 0;
    for (size_t i = 0; i < q.nframes; i++)
        if (strcmp(q.frames[i].name, "sp_gc_alloc") == 0)
            gc_found = q.frames[i].cost == SPROF_COST_GC;
    CHECK(gc_found, "class suffix parsed back into the gc cost");
    free(again);
    free(out);
    sprof_profile_free(&q);
    sprof_profile_free(&p);
}

static void expect_error(const char *name, const char *text, const char *want)
{
    const char *path = write_file(name, text);
    sprof_profile p;
    sprof_profile_init(&p);
    char err[256] = "";
    int rc = sprof_profile_add_folded(&p, path, err, sizeof err);
    CHECK(rc != 0, "%s: accepted", name);
    CHECK(strstr(err, path) && strstr(err, want), "%s: error \"%s\" lacks \"%s\"", name, err, want);
    sprof_profile_free(&p);
}

static void test_malformed(void)
{
    /* a file where no line ends in a count is an error; one such line among
     * counted ones is skipped with a warning (below) */
    expect_error("nocount.folded", "a;b\n", ":1: no line ends in a count");
    expect_error("word.folded", "a;b 12x\n", ":1: no line ends in a count");
    expect_error("neg.folded", "a;b -3\n", ":1:");
    expect_error("emptyframe.folded", "a;;b 3\n", ":1: empty frame");
    expect_error("trailing.folded", "a;b 3 \n", ":1: no line ends in a count");
    expect_error("onlycount.folded", " 3\n", ":1:");
    expect_error("overflow.folded", "a 99999999999999999999999\n", ":1: count overflows");

    /* fractional counts are rounded (half up); a line without a count among
     * counted ones is skipped; flamegraph.pl's annotations stay in names */
    {
        const char *fpath = write_file("mixed.folded", "a;b 3\na;c 1.5\nlost line\na;d 0.25\nx;y_[j];z_[k] 4\n");
        sprof_profile q;
        sprof_profile_init(&q);
        char ferr[256] = "";
        CHECK(sprof_profile_add_folded(&q, fpath, ferr, sizeof ferr) == 0, "mixed.folded: %s", ferr);
        uint64_t total = 0;
        for (size_t i = 0; i < q.nstacks; i++)
            total += q.stacks[i].samples;
        CHECK(q.nstacks == 4 && total == 3 + 2 + 0 + 4, "mixed.folded: %zu stacks, %llu samples", q.nstacks,
              (unsigned long long)total);
        int annotated = 0;
        for (size_t i = 0; i < q.nframes; i++)
            annotated += !strcmp(q.frames[i].name, "y_[j]") || (!strcmp(q.frames[i].name, "z_[k]") &&
                                                                 q.frames[i].cost == SPROF_COST_KERNEL);
        CHECK(annotated == 2, "mixed.folded: annotations not kept in the names (%d)", annotated);
        sprof_profile_free(&q);
    }

    /* empty file: zero stacks, not an error; blank lines are skipped; CRLF ok */
    const char *path = write_file("empty.folded", "");
    sprof_profile p;
    sprof_profile_init(&p);
    char err[256] = "";
    CHECK(sprof_profile_add_folded(&p, path, err, sizeof err) == 0 && p.nstacks == 0, "empty: %s", err);
    path = write_file("crlf.folded", "a;b c 2\r\n\nflame graph;x 3\n");
    CHECK(sprof_profile_add_folded(&p, path, err, sizeof err) == 0 && p.nstacks == 2, "crlf: %s", err);
    sprof_fold_format plain = { 0 };
    char *out = folded_text(&p, &plain);
    CHECK(strcmp(out, "a;b c 2\nflame graph;x 3\n") == 0, "names with spaces:\n%s", out);
    free(out);
    sprof_profile_free(&p);

    CHECK(sprof_profile_add_folded(&p, "/nonexistent/x.folded", err, sizeof err) != 0 &&
              strstr(err, "/nonexistent/x.folded"),
          "missing file: %s", err);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/sprof-folded-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trip();
    test_malformed();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return check_report("test_folded");
}
