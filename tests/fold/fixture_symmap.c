/* The symmap the fold tests share, written with the writer API:
 *   0x1100-0x1200 sp_Foo_bar  "Foo#bar" (app.rb:10), with inlined
 *     0x1110-0x1130 sp_Baz_qux "Baz#qux" called at app.rb:12, and
 *     0x1130-0x1138 sp_gc_cleanup (GC-root helper) at app.rb:12
 *   0x1300-0x1400 main; 0x1400 _fiber_body_1 "block in Foo#bar";
 *   0x1480-0x14b0 sp_fiber_trampoline; 0x14c0 __start_context (a gap before it);
 *   0x1500-0x1540 sp_Foo_leaf "Foo#leaf", a frameless leaf (CFA = rsp+8)
 * One PT_LOAD: vaddr 0x1000 = file offset 0x1000. CFI: CFA = rbp+16 over
 * 0x1100-0x1500 (frame-pointer code). */
#include "fixture_symmap.h"

#include <stdio.h>
#include <stdlib.h>

#include "sprof/symmap_writer.h"

static sprof_symmap *build(uint8_t **bytes, const char *path)
{
    sprof_symmap_writer *w = sprof_symmap_writer_new();
    uint8_t id[4] = { FIXTURE_BUILD_ID };
    sprof_symmap_writer_set_build_id(w, id, 4);
    sprof_symmap_writer_set_binary_path(w, "/nonexistent/app");
    sprof_symmap_writer_set_pie(w, 1);
    sprof_segment seg = { 0x1000, 0x10000, 0x1000, 0x10000, 5 };
    sprof_symmap_writer_add_segment(w, &seg);

    sprof_symmap_names foo = { "sp_Foo_bar", "Foo#bar", "app.rb", 10, SPROF_KIND_IMETH,
                               SPROF_COST_USER, 0 };
    long f = sprof_symmap_writer_add_function(w, 0x1100, 0x1200, &foo);
    sprof_symmap_names qux = { "sp_Baz_qux", "Baz#qux", "app.rb", 2, SPROF_KIND_IMETH,
                               SPROF_COST_USER, 0 };
    const uint64_t qr[1][2] = { { 0x1110, 0x1130 } };
    sprof_symmap_writer_add_inline(w, f, -1, qr, 1, &qux, "app.rb", 12);
    sprof_symmap_names gc = { "sp_gc_cleanup", "sp_gc_cleanup", "sp_runtime.h", 50,
                              SPROF_KIND_RUNTIME, SPROF_COST_GC, 0 };
    const uint64_t gr[1][2] = { { 0x1130, 0x1138 } };
    sprof_symmap_writer_add_inline(w, f, -1, gr, 1, &gc, "app.rb", 12);
    sprof_symmap_names mainn = { "main", "main", "app.c", 1, SPROF_KIND_NATIVE, SPROF_COST_NATIVE, 0 };
    sprof_symmap_writer_add_function(w, 0x1300, 0x1400, &mainn);
    sprof_symmap_names body = { "_fiber_body_1", "block in Foo#bar", "app.rb", 20,
                                SPROF_KIND_BLOCK, SPROF_COST_USER, 0 };
    sprof_symmap_writer_add_function(w, 0x1400, 0x1480, &body);
    sprof_symmap_names tramp = { "sp_fiber_trampoline", "sp_fiber_trampoline", "", 0,
                                 SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME, 0 };
    sprof_symmap_writer_add_function(w, 0x1480, 0x14b0, &tramp);
    sprof_symmap_names sc = { "__start_context", "__start_context", "", 0, SPROF_KIND_NATIVE,
                              SPROF_COST_NATIVE, 0 };
    sprof_symmap_writer_add_function(w, 0x14c0, 0x1500, &sc);

    sprof_symmap_names leaf = { "sp_Foo_leaf", "Foo#leaf", "app.rb", 30, SPROF_KIND_IMETH,
                                SPROF_COST_USER, 0 };
    sprof_symmap_writer_add_function(w, 0x1500, 0x1540, &leaf);
    sprof_cfi_row rows[2] = {
        { 0x1100, 0x1500, SPROF_CFA_RBP, 16, -8, 1, -16, 0, 0 },
        { 0x1500, 0x1540, SPROF_CFA_RSP, 8, -8, 0, 0, 0, 0 },
    };
    sprof_symmap_writer_add_cfi(w, rows, 2);

    sprof_symmap_writer_add_line(w, 0x1100, "app.rb", 11);
    sprof_symmap_writer_add_line(w, 0x1110, "app.rb", 3);
    sprof_symmap_writer_add_line(w, 0x1130, "app.rb", 12);
    sprof_symmap_writer_add_line(w, 0x1138, "app.rb", 13);
    sprof_symmap_writer_end_line_sequence(w, 0x1200);

    size_t size;
    char err[256];
    if (path) {
        if (sprof_symmap_writer_write(w, path, err, sizeof err) != 0) {
            fprintf(stderr, "writer: %s\n", err);
            exit(1);
        }
    }
    if (sprof_symmap_writer_to_memory(w, bytes, &size, err, sizeof err) != 0) {
        fprintf(stderr, "writer: %s\n", err);
        exit(1);
    }
    sprof_symmap_writer_free(w);
    sprof_symmap *m = sprof_symmap_open_mem(*bytes, size, "test.symmap", err, sizeof err);
    if (!m) {
        fprintf(stderr, "open: %s\n", err);
        exit(1);
    }
    return m;
}

sprof_symmap *fixture_symmap(uint8_t **bytes)
{
    return build(bytes, NULL);
}

void fixture_symmap_write(const char *path)
{
    uint8_t *bytes;
    sprof_symmap *m = build(&bytes, path);
    sprof_symmap_close(m);
    free(bytes);
}
