/* libFuzzer harness: the `perf script` and Spinel allocation report parsers
 * (offline-tools/lib/src/perf_script*.c, alloc_report.c) on arbitrary text.
 *
 * The first byte chooses the parser and its options:
 *   bit 0 --pid, bit 1 --tid, bits 2-3 kernel mode (0 drop, 1 _[k], 2 plain),
 *   bit 4 --addrs, bit 5 --strict, bit 6 resolve through a small in-memory
 *   symmap of "/opt/app/bin/app" (functions main, sp_Foo_bar with Foo#baz
 *   inlined, sp_Foo_bar.isra.0), bit 7 allocation report instead of perf script.
 * The rest is the input text. Contract checked: never a crash; a failure has
 * a one-line message; the profile can be written as folded text.
 * Build: tests/fuzz/run.sh 30 perf_script (CMake -DSPROF_FUZZ=ON, clang). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/alloc_report.h"
#include "sprof/perf_script.h"
#include "sprof/profile.h"
#include "sprof/symmap.h"
#include "sprof/symmap_writer.h"

static sprof_symmap *fixture_symmap(void)
{
    static sprof_symmap *m;
    static uint8_t *bytes;
    if (m || bytes)
        return m;
    sprof_symmap_writer *w = sprof_symmap_writer_new();
    if (!w)
        abort();
    sprof_symmap_writer_set_binary_path(w, "/opt/app/bin/app");
    sprof_symmap_writer_set_pie(w, 1);
    sprof_segment seg = { .vaddr = 0, .memsz = 0x3000, .file_offset = 0, .filesz = 0x3000, .flags = 5 };
    sprof_symmap_writer_add_segment(w, &seg);
    sprof_symmap_names main_n = { .c_name = "main", .kind = SPROF_KIND_NATIVE, .cost = SPROF_COST_NATIVE };
    sprof_symmap_names bar = { .c_name = "sp_Foo_bar", .ruby_name = "Foo#bar", .file = "app.rb",
                               .def_line = 3, .kind = SPROF_KIND_IMETH, .cost = SPROF_COST_USER };
    sprof_symmap_names baz = { .c_name = "sp_Foo_baz", .ruby_name = "Foo#baz", .file = "app.rb",
                               .def_line = 8, .kind = SPROF_KIND_IMETH, .cost = SPROF_COST_USER };
    sprof_symmap_names clone = bar;
    clone.c_name = "sp_Foo_bar.isra.0";
    sprof_symmap_writer_add_function(w, 0x1000, 0x1100, &main_n);
    long f = sprof_symmap_writer_add_function(w, 0x1100, 0x1200, &bar);
    const uint64_t r[1][2] = { { 0x1120, 0x1140 } };
    sprof_symmap_writer_add_inline(w, f, -1, r, 1, &baz, "app.rb", 5);
    sprof_symmap_writer_add_function(w, 0x1200, 0x1300, &clone);
    sprof_symmap_writer_add_line(w, 0x1000, "app.rb", 20);
    sprof_symmap_writer_add_line(w, 0x1100, "app.rb", 4);
    sprof_symmap_writer_add_line(w, 0x1120, "app.rb", 9);
    sprof_symmap_writer_add_line(w, 0x1140, "app.rb", 6);
    sprof_symmap_writer_end_line_sequence(w, 0x1300);
    size_t size;
    char err[256];
    if (sprof_symmap_writer_to_memory(w, &bytes, &size, err, sizeof err) != 0)
        abort();
    sprof_symmap_writer_free(w);
    m = sprof_symmap_open_mem(bytes, size, "fixture.symmap", err, sizeof err);
    if (!m)
        abort();
    return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    if (size < 2 || !devnull)
        return 0;
    uint8_t mode = data[0];
    sprof_perf_options opt;
    memset(&opt, 0, sizeof opt);
    opt.pid = mode & 1;
    opt.tid = (mode >> 1) & 1;
    opt.kernel = (mode >> 2) & 3;
    if (opt.kernel > SPROF_PERF_KERNEL_PLAIN)
        opt.kernel = SPROF_PERF_KERNEL_DROP;
    opt.addrs = (mode >> 4) & 1;
    opt.strict = (mode >> 5) & 1;
    opt.warn = devnull;
    const sprof_symmap *m = (mode & 0x40) ? fixture_symmap() : NULL;

    /* a private, seekable copy (the allocation parser rewinds once) */
    char *text = malloc(size - 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    FILE *in = fmemopen(text, size - 1, "r");
    if (!in) {
        free(text);
        return 0;
    }
    sprof_profile p;
    sprof_profile_init(&p);
    char err[512] = "";
    int rc = (mode & 0x80)
                 ? sprof_profile_add_alloc_report_stream(&p, in, "fuzz", m, &opt, err, sizeof err)
                 : sprof_profile_add_perf_script_stream(&p, in, "fuzz", m, &opt, err, sizeof err);
    fclose(in);
    if (rc != 0) {
        if (err[0] == '\0' || strchr(err, '\n'))
            abort(); /* failures must say why, in one line */
    } else {
        sprof_fold_format fmt = { .lines = 1 };
        if (sprof_profile_write_folded(&p, devnull, &fmt) < 0)
            abort();
    }
    /* the detectors see the same bytes */
    (void)sprof_perf_script_detect(text, size - 1);
    (void)sprof_alloc_report_detect(text, size - 1);
    sprof_profile_free(&p);
    free(text);
    return 0;
}
