/* The shared test symmap (see fixture.h). Addresses:
 *   sp_C   [0x1000,0x1100)  C#c, inlines: B at 0x1010-0x1030 + 0x1060-0x1070 (call app.rb:12)
 *                                  A inside it at 0x1018-0x1020 (call app.rb:20)
 *                                  B at 0x1080-0x10a0 (call app.rb:14)
 *                                  A inside it at 0x1088-0x1090 (call app.rb:21)
 *   sp_B   [0x1200,0x1280)  B#b
 *   helper [0x1000,0x1300)  native, no debug: covers the gaps between the others
 *   nothing below 0x1000 or from 0x1300 on. */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

static const sprof_symmap_names C_NAMES = { "sp_C_c", "C#c", "app.rb", 10, SPROF_KIND_IMETH, SPROF_COST_USER, 0 };
static const sprof_symmap_names B_NAMES = { "sp_B_b", "B#b", "app.rb", 19, SPROF_KIND_IMETH, SPROF_COST_USER, 0 };
static const sprof_symmap_names A_NAMES = { "sp_A_cls_a", "A.a", "lib/a.rb", 29, SPROF_KIND_CMETH, SPROF_COST_USER, 0 };
static const sprof_symmap_names H_NAMES = { "helper", NULL, NULL, 0, SPROF_KIND_NATIVE, SPROF_COST_NATIVE,
                                            SPROF_FRAME_NO_DEBUG };

static const struct { uint64_t addr; const char *file; uint32_t line; } LINES[] = {
    { 0x1000, "app.rb", 10 }, { 0x1010, "app.rb", 20 }, { 0x1018, "lib/a.rb", 30 },
    { 0x1020, "app.rb", 21 }, { 0x1030, "app.rb", 11 }, { 0x1060, "app.rb", 22 },
    { 0x1070, "app.rb", 13 }, { 0x1080, "app.rb", 20 }, { 0x1088, "lib/a.rb", 31 },
    { 0x1090, "app.rb", 21 }, { 0x10a0, "app.rb", 15 }, { 0x1100, "", 0 },
    { 0x1200, "app.rb", 40 }, { 0x1240, "app.rb", 40 }, { 0x1280, "", 0 },
};

static const sprof_cfi_row CFI[] = {
    { 0x1000, 0x1001, SPROF_CFA_RSP, 8, -8, 0, 0, 0, 0 },
    { 0x1001, 0x1004, SPROF_CFA_RSP, 16, -8, 1, -16, 0, 0 },
    { 0x1004, 0x1100, SPROF_CFA_RBP, 16, -8, 1, -16, 0, 0 },
    { 0x1200, 0x1280, SPROF_CFA_RSP, 8, -8, 0, 0, 0, 0 },
};

static const sprof_segment SEGS[] = {
    { 0x0, 0x800, 0x0, 0x800, 4 },
    { 0x1000, 0x2000, 0x1000, 0x2000, 5 },
    { 0x4000, 0x300, 0x3000, 0x200, 6 },
};

static const uint8_t BUILD_ID[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

#define N(a) (sizeof(a) / sizeof((a)[0]))

sprof_symmap_writer *fixture_writer(unsigned order)
{
    sprof_symmap_writer *w = sprof_symmap_writer_new();
    CHECK(w);
    int rev = order != 0;
    if (rev) {
        for (size_t i = N(SEGS); i-- > 0;)
            sprof_symmap_writer_add_segment(w, &SEGS[i]);
        for (size_t i = N(CFI); i-- > 0;)
            sprof_symmap_writer_add_cfi(w, &CFI[i], 1);
        for (size_t i = N(LINES); i-- > 0;)
            if (LINES[i].line)
                sprof_symmap_writer_add_line(w, LINES[i].addr, LINES[i].file, LINES[i].line);
            else
                sprof_symmap_writer_end_line_sequence(w, LINES[i].addr);
        /* A redundant row at an address that already has one (same content). */
        sprof_symmap_writer_add_line(w, 0x1030, "app.rb", 11);
        sprof_symmap_writer_set_pie(w, 1);
        sprof_symmap_writer_set_binary_path(w, "/tmp/app");
        sprof_symmap_writer_set_build_id(w, BUILD_ID, sizeof(BUILD_ID));
    } else {
        sprof_symmap_writer_set_build_id(w, BUILD_ID, sizeof(BUILD_ID));
        sprof_symmap_writer_set_binary_path(w, "/tmp/app");
        sprof_symmap_writer_set_pie(w, 1);
        for (size_t i = 0; i < N(SEGS); i++)
            sprof_symmap_writer_add_segment(w, &SEGS[i]);
        sprof_symmap_writer_add_cfi(w, CFI, N(CFI));
        for (size_t i = 0; i < N(LINES); i++)
            if (LINES[i].line)
                sprof_symmap_writer_add_line(w, LINES[i].addr, LINES[i].file, LINES[i].line);
            else
                sprof_symmap_writer_end_line_sequence(w, LINES[i].addr);
    }

    static const uint64_t b1[2][2] = { { 0x1060, 0x1070 }, { 0x1010, 0x1030 } };
    static const uint64_t a1[1][2] = { { 0x1018, 0x1020 } };
    static const uint64_t b2[1][2] = { { 0x1080, 0x10a0 } };
    static const uint64_t a2[1][2] = { { 0x1088, 0x1090 } };
    long c, h, ib1, ib2;
    if (rev) {
        h = sprof_symmap_writer_add_function(w, 0x1000, 0x1300, &H_NAMES);
        CHECK(sprof_symmap_writer_add_function(w, 0x1200, 0x1280, &B_NAMES) >= 0);
        c = sprof_symmap_writer_add_function(w, 0x1000, 0x1100, &C_NAMES);
        ib2 = sprof_symmap_writer_add_inline(w, c, -1, b2, 1, &B_NAMES, "app.rb", 14);
        CHECK(sprof_symmap_writer_add_inline(w, c, ib2, a2, 1, &A_NAMES, "app.rb", 21) >= 0);
        ib1 = sprof_symmap_writer_add_inline(w, c, -1, b1, 2, &B_NAMES, "app.rb", 12);
        CHECK(sprof_symmap_writer_add_inline(w, c, ib1, a1, 1, &A_NAMES, "app.rb", 20) >= 0);
    } else {
        c = sprof_symmap_writer_add_function(w, 0x1000, 0x1100, &C_NAMES);
        ib1 = sprof_symmap_writer_add_inline(w, c, -1, b1, 2, &B_NAMES, "app.rb", 12);
        CHECK(sprof_symmap_writer_add_inline(w, c, ib1, a1, 1, &A_NAMES, "app.rb", 20) >= 0);
        ib2 = sprof_symmap_writer_add_inline(w, c, -1, b2, 1, &B_NAMES, "app.rb", 14);
        CHECK(sprof_symmap_writer_add_inline(w, c, ib2, a2, 1, &A_NAMES, "app.rb", 21) >= 0);
        CHECK(sprof_symmap_writer_add_function(w, 0x1200, 0x1280, &B_NAMES) >= 0);
        h = sprof_symmap_writer_add_function(w, 0x1000, 0x1300, &H_NAMES);
    }
    CHECK(c >= 0 && h >= 0 && ib1 >= 0 && ib2 >= 0);
    return w;
}

uint8_t *fixture_bytes(unsigned order, size_t *size)
{
    sprof_symmap_writer *w = fixture_writer(order);
    uint8_t *buf;
    char err[256];
    if (sprof_symmap_writer_to_memory(w, &buf, size, err, sizeof(err)) != 0) {
        fprintf(stderr, "fixture: %s\n", err);
        exit(1);
    }
    sprof_symmap_writer_free(w);
    return buf;
}
