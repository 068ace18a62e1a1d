/* Writes fuzz seeds (tests/fuzz/corpus/{symmap,cfi}) from real data:
 * symmaps built with the writer (the test fixture, an empty map, a map with
 * a deep inline chain, a lines+CFI-only map) and CFI sections cut from this
 * program's own .eh_frame. Usage: make_fuzz_seeds <corpus-dir> */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sprof/symmap.h"

static void save(const char *dir, const char *name, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f);
    CHECK(fwrite(a, 1, na, f) == na);
    CHECK(nb == 0 || fwrite(b, 1, nb, f) == nb);
    CHECK(fclose(f) == 0);
}

static void save_writer(const char *dir, const char *name, sprof_symmap_writer *w)
{
    uint8_t *buf;
    size_t n;
    char err[256];
    CHECK(sprof_symmap_writer_to_memory(w, &buf, &n, err, sizeof(err)) == 0);
    save(dir, name, buf, n, NULL, 0);
    free(buf);
    sprof_symmap_writer_free(w);
}

/* Length of the first k records of an .eh_frame section. */
static size_t records_prefix(const uint8_t *p, size_t n, int k)
{
    size_t off = 0;
    while (k-- > 0 && off + 4 <= n) {
        uint32_t len;
        memcpy(&len, p + off, 4);
        if (len == 0 || len == 0xffffffffu || len > n - off - 4)
            break;
        off += 4 + len;
    }
    return off;
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/symmap", argv[1]);
    save_writer(dir, "fixture.symmap", fixture_writer(0));
    save_writer(dir, "empty.symmap", sprof_symmap_writer_new());

    sprof_symmap_writer *w = sprof_symmap_writer_new();
    sprof_symmap_names nm = { "sp_deep", "deep", "deep.rb", 1, SPROF_KIND_TOPLEVEL, SPROF_COST_USER, 0 };
    long f = sprof_symmap_writer_add_function(w, 0x400, 0x500, &nm);
    long parent = -1;
    for (int d = 0; d < 8; d++) {
        uint64_t r[2][2] = { { 0x400 + 8 * d, 0x480 - 8 * d }, { 0x490, 0x4a0 - d } };
        parent = sprof_symmap_writer_add_inline(w, f, parent, (const uint64_t(*)[2])r, d ? 1 : 2, &nm, "deep.rb",
                                                (uint32_t)(10 + d));
        CHECK(parent >= 0);
        sprof_symmap_writer_add_line(w, 0x400 + 8 * d, "deep.rb", (uint32_t)(20 + d));
    }
    sprof_symmap_writer_end_line_sequence(w, 0x500);
    save_writer(dir, "deep-inline.symmap", w);

    w = sprof_symmap_writer_new();
    sprof_symmap_writer_add_line(w, 0x10, "x.c", 3);
    sprof_symmap_writer_add_line(w, 0x20, "y.c", 4);
    sprof_cfi_row rows[2] = { { 0x10, 0x11, 7, 8, -8, 0, 0, 0, 0 }, { 0x11, 0x30, 6, 16, -8, 1, -16, 0, 0 } };
    sprof_symmap_writer_add_cfi(w, rows, 2);
    sprof_segment seg = { 0, 0x1000, 0, 0x1000, 5 };
    sprof_symmap_writer_add_segment(w, &seg);
    save_writer(dir, "lines-cfi.symmap", w);

    /* CFI seeds: byte 0 selects .eh_frame (0) or .debug_frame (1). */
    FILE *self = fopen("/proc/self/exe", "rb");
    CHECK(self);
    fseek(self, 0, SEEK_END);
    long size = ftell(self);
    fseek(self, 0, SEEK_SET);
    uint8_t *img = malloc((size_t)size);
    CHECK(fread(img, 1, (size_t)size, self) == (size_t)size);
    fclose(self);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (strcmp(names + sh[i].sh_name, ".eh_frame") != 0)
            continue;
        const uint8_t *p = img + sh[i].sh_offset;
        size_t n = sh[i].sh_size;
        uint8_t tag = 0;
        snprintf(dir, sizeof(dir), "%s/cfi", argv[1]);
        save(dir, "eh_frame-full", &tag, 1, p, n);
        save(dir, "eh_frame-2-records", &tag, 1, p, records_prefix(p, n, 2));
        save(dir, "eh_frame-8-records", &tag, 1, p, records_prefix(p, n, 8));
    }
    free(img);

    /* A .debug_frame (tag 1): a version-4 CIE (address size 8) and one FDE
     * whose CIE pointer is a section offset, with set_loc, remember/restore
     * and a CFA expression in its program. */
    static const uint8_t debug_frame[] = {
        1,                                    /* tag: .debug_frame */
        20, 0, 0, 0,                          /* CIE length */
        0xff, 0xff, 0xff, 0xff,               /* CIE id */
        4, 0,                                 /* version 4, no augmentation */
        8, 0,                                 /* address size, segment size */
        1, 0x78, 16,                          /* code align 1, data align -8, ra 16 */
        0x0c, 7, 8, 0x90, 1,                  /* def_cfa rsp+8; ra at cfa-8 */
        0, 0, 0, 0,                           /* padding (nops) */
        43, 0, 0, 0,                          /* FDE length */
        0, 0, 0, 0,                           /* CIE pointer: offset 0 */
        0x00, 0x10, 0x40, 0, 0, 0, 0, 0,      /* initial location 0x401000 */
        0x40, 0, 0, 0, 0, 0, 0, 0,            /* range 0x40 */
        0x41, 0x0e, 16, 0x86, 2,              /* +1: cfa rsp+16, rbp at cfa-16 */
        0x43, 0x0d, 6, 0x0a,                  /* +3: cfa rbp; remember */
        0x01, 0x30, 0x10, 0x40, 0, 0, 0, 0, 0,/* set_loc 0x401030 */
        0x0f, 2, 0x77, 8, 0x0b,               /* def_cfa_expression; restore_state */
    };
    snprintf(dir, sizeof(dir), "%s/cfi", argv[1]);
    save(dir, "debug_frame-v4", debug_frame, sizeof(debug_frame), NULL, 0);
    printf("seeds written under %s\n", argv[1]);
    return 0;
}
