/* libFuzzer harness: the folded-stack parser (sprof_profile_add_folded) on
 * arbitrary bytes, and, when it accepts them, every consumer of hostile
 * frame names downstream of it: the flame tree and SVG renderer (XML
 * escaping, UTF-8 checks, label truncation), the diff table with its
 * statistics, the difffolded writer and the differential flame graph.
 * The parser reads a path, so the bytes go through a memfd.
 * Build with -DSPROF_FUZZ=ON (folded_fuzzer); ordinary builds replay
 * tests/fuzz/corpus/folded as the ctest test fuzz_replay_folded. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "fuzz_memfd.h"
#include "sprof/diff.h"
#include "sprof/flamegraph.h"
#include "sprof/profile.h"

static void render(const sprof_profile *p, FILE *sink)
{
    static const sprof_fold_format plain, lines = { .lines = 1, .classes = 1 };
    sprof_flame_tree t;
    if (sprof_flame_tree_init(&t) != 0)
        return;
    if (sprof_flame_tree_add_profile(&t, p, &lines, 0) == 0 && sprof_flame_tree_finish(&t) == 0) {
        sprof_flame_options o = { .width = 300, .inverted = 1, .minwidth = 0 };
        sprof_flame_write_svg(&t, &o, sink);
    }
    sprof_flame_tree_free(&t);

    char err[256];
    sprof_diff_table d;
    const sprof_diff_test test = { .alpha = 0.05, .floor_pp = SPROF_DIFF_DEFAULT_FLOOR_PP };
    if (sprof_diff_table_build(&d, p, 1, p, 1, 1, &test, err, sizeof err) == 0)
        sprof_diff_table_free(&d);
    if (sprof_diff_table_build(&d, p, 1, p, 1, 0, &test, err, sizeof err) == 0)
        sprof_diff_table_free(&d);
    const sprof_profile twice[2] = { *p, *p }; /* replicates: the runs test */
    if (sprof_diff_table_build(&d, twice, 2, twice, 2, 0, &test, err, sizeof err) == 0)
        sprof_diff_table_free(&d);
    sprof_diff_write_folded(p, p, 1, &plain, sink);
    if (sprof_diff_flame_tree(&t, p, p, &plain, SPROF_DIFF_DEFAULT_FLOOR_PP) == 0) {
        sprof_flame_options o = { .differential = 1, .minwidth = 0 };
        sprof_flame_write_svg(&t, &o, sink);
        sprof_flame_tree_free(&t);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_memfd("folded", data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    sprof_profile p;
    sprof_profile_init(&p);
    if (sprof_profile_add_folded(&p, path, err, sizeof err) == 0) {
        FILE *sink = fopen("/dev/null", "w");
        if (sink) {
            render(&p, sink);
            fclose(sink);
        }
    }
    sprof_profile_free(&p);
    close(fd);
    return 0;
}
