/* libFuzzer harness: the folded-stack parser alone, fast enough for long
 * runs (folded_fuzz also renders flame graphs and diffs from what it
 * accepts, 3-6 ms an input). Bytes are read through fmemopen, and what the
 * parser accepts is written back out as folded lines, both plain and with
 * lines and class suffixes, so the writer sees hostile names too.
 * Build with -DSPROF_FUZZ=ON (folded_parse_fuzzer); ordinary builds replay
 * tests/fuzz/corpus/folded_parse as the ctest test fuzz_replay_folded_parse. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer; folded_fuzz covers empty files */
    FILE *in = fmemopen((void *)data, size, "r");
    if (!in)
        return 0;
    char err[512];
    sprof_profile p;
    sprof_profile_init(&p);
    if (sprof_profile_add_folded_stream(&p, in, "fuzz.folded", err, sizeof err) == 0) {
        static const sprof_fold_format plain, lines = { .lines = 1, .classes = 1 };
        FILE *sink = fopen("/dev/null", "w");
        if (sink) {
            sprof_profile_write_folded(&p, sink, &plain);
            sprof_profile_write_folded(&p, sink, &lines);
            fclose(sink);
        }
    }
    sprof_profile_free(&p);
    fclose(in);
    return 0;
}
