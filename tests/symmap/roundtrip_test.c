/* Writer -> file -> reader: every lookup answer of the fixture, exactly;
 * determinism across insertion orders; open() error messages. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "sprof/symmap.h"

typedef struct want {
    const char *ruby, *c, *file;
    uint32_t line;
    int inlined;
} want;

static void expect(const sprof_symmap *m, uint64_t addr, size_t n, const want *w)
{
    sprof_frame f[8];
    size_t got = sprof_symmap_lookup(m, addr, f, 8);
    if (got != n) {
        fprintf(stderr, "lookup 0x%llx: %zu frames, want %zu\n", (unsigned long long)addr, got, n);
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f[i].ruby_name, w[i].ruby) || strcmp(f[i].c_name, w[i].c) ||
            strcmp(f[i].file, w[i].file) || f[i].line != w[i].line ||
            !!(f[i].flags & SPROF_FRAME_INLINED) != w[i].inlined) {
            fprintf(stderr, "lookup 0x%llx frame %zu: got %s (%s) %s:%u flags %u, want %s (%s) %s:%u inlined %d\n",
                    (unsigned long long)addr, i, f[i].ruby_name, f[i].c_name, f[i].file, f[i].line,
                    f[i].flags, w[i].ruby, w[i].c, w[i].file, w[i].line, w[i].inlined);
            exit(1);
        }
    }
}

static void check_lookups(const sprof_symmap *m)
{
    /* Innermost A, inside B (first call site, first range), inside C. */
    const want a_in_b1[] = { { "A.a", "sp_A_cls_a", "lib/a.rb", 30, 1 },
                             { "B#b", "sp_B_b", "app.rb", 20, 1 },
                             { "C#c", "sp_C_c", "app.rb", 12, 0 } };
    expect(m, 0x1018, 3, a_in_b1);
    expect(m, 0x101f, 3, a_in_b1);
    const want b1[] = { { "B#b", "sp_B_b", "app.rb", 20, 1 }, { "C#c", "sp_C_c", "app.rb", 12, 0 } };
    expect(m, 0x1010, 2, b1);
    const want b1_after_a[] = { { "B#b", "sp_B_b", "app.rb", 21, 1 }, { "C#c", "sp_C_c", "app.rb", 12, 0 } };
    expect(m, 0x1020, 2, b1_after_a);
    /* B's second range of the same inlined copy. */
    const want b1_r2[] = { { "B#b", "sp_B_b", "app.rb", 22, 1 }, { "C#c", "sp_C_c", "app.rb", 12, 0 } };
    expect(m, 0x1065, 2, b1_r2);
    /* Second call site. */
    const want a_in_b2[] = { { "A.a", "sp_A_cls_a", "lib/a.rb", 31, 1 },
                             { "B#b", "sp_B_b", "app.rb", 21, 1 },
                             { "C#c", "sp_C_c", "app.rb", 14, 0 } };
    expect(m, 0x108f, 3, a_in_b2);
    const want b2[] = { { "B#b", "sp_B_b", "app.rb", 21, 1 }, { "C#c", "sp_C_c", "app.rb", 14, 0 } };
    expect(m, 0x1090, 2, b2);
    const want c_only[] = { { "C#c", "sp_C_c", "app.rb", 11, 0 } };
    expect(m, 0x1030, 1, c_only);
    expect(m, 0x105f, 1, c_only);
    const want c_start[] = { { "C#c", "sp_C_c", "app.rb", 10, 0 } };
    expect(m, 0x1000, 1, c_start);
    const want c_end[] = { { "C#c", "sp_C_c", "app.rb", 15, 0 } };
    expect(m, 0x10ff, 1, c_end);
    /* The overlapping bigger function wins only where nothing smaller is. */
    const want helper[] = { { "helper", "helper", "", 0, 0 } };
    expect(m, 0x1100, 1, helper);
    expect(m, 0x11ff, 1, helper);
    expect(m, 0x1280, 1, helper);
    expect(m, 0x12ff, 1, helper);
    const want b_fn[] = { { "B#b", "sp_B_b", "app.rb", 40, 0 } };
    expect(m, 0x1200, 1, b_fn);
    expect(m, 0x127f, 1, b_fn);
    /* Gaps. */
    expect(m, 0x0, 0, NULL);
    expect(m, 0xfff, 0, NULL);
    expect(m, 0x1300, 0, NULL);
    expect(m, ~0ull, 0, NULL);

    /* Every frame carries its containing function's range; max is honoured. */
    sprof_frame f[3];
    memset(f, 0, sizeof(f));
    CHECK(sprof_symmap_lookup(m, 0x1088, f, 1) == 3);
    CHECK(f[1].c_name == NULL);
    CHECK(sprof_symmap_lookup(m, 0x1088, f, 3) == 3);
    for (int i = 0; i < 3; i++)
        CHECK(f[i].func_lo == 0x1000 && f[i].func_hi == 0x1100);
    CHECK(f[0].kind == SPROF_KIND_CMETH && f[0].def_line == 29 && f[2].def_line == 10);
    CHECK(sprof_symmap_lookup(m, 0x1088, NULL, 0) == 3);

    /* CFI. */
    sprof_cfi_row r;
    CHECK(sprof_symmap_cfi_lookup(m, 0x1000, &r) == 0 && r.cfa_reg == SPROF_CFA_RSP && r.cfa_offset == 8);
    CHECK(sprof_symmap_cfi_lookup(m, 0x1002, &r) == 0 && r.cfa_offset == 16 && r.rbp_saved && r.rbp_offset == -16);
    CHECK(sprof_symmap_cfi_lookup(m, 0x10ff, &r) == 0 && r.cfa_reg == SPROF_CFA_RBP && r.ra_offset == -8);
    CHECK(sprof_symmap_cfi_lookup(m, 0x1100, &r) == -1);
    CHECK(sprof_symmap_cfi_lookup(m, 0x1250, &r) == 0 && r.lo == 0x1200 && r.hi == 0x1280);
    CHECK(sprof_symmap_cfi_count(m) == 4);

    /* Layout, identity. */
    size_t idlen;
    const uint8_t *id = sprof_symmap_build_id(m, &idlen);
    CHECK(idlen == 20 && id[0] == 0xde && id[19] == 16);
    CHECK(strcmp(sprof_symmap_binary_path(m), "/tmp/app") == 0);
    CHECK(sprof_symmap_is_pie(m) == 1);
    CHECK(sprof_symmap_segment_count(m) == 3);
    CHECK(sprof_symmap_segment(m, 1)->vaddr == 0x1000 && sprof_symmap_segment(m, 1)->flags == 5);
    CHECK(sprof_symmap_segment(m, 3) == NULL);
    uint64_t va;
    CHECK(sprof_symmap_file_offset_to_vaddr(m, 0x1234, &va) == 0 && va == 0x1234);
    CHECK(sprof_symmap_file_offset_to_vaddr(m, 0x3010, &va) == 0 && va == 0x4010);
    CHECK(sprof_symmap_file_offset_to_vaddr(m, 0x3200, &va) == -1);

    /* Iteration. */
    CHECK(sprof_symmap_function_count(m) == 3);
    sprof_frame fn;
    sprof_symmap_function(m, 0, &fn);
    CHECK(strcmp(fn.c_name, "sp_C_c") == 0 && fn.func_lo == 0x1000 && fn.line == 10);
    sprof_symmap_function(m, 1, &fn);
    CHECK(strcmp(fn.c_name, "helper") == 0 && (fn.flags & SPROF_FRAME_NO_DEBUG));
    sprof_symmap_function(m, 2, &fn);
    CHECK(strcmp(fn.c_name, "sp_B_b") == 0);
    /* 15 rows minus the redundant 0x1240 one. */
    CHECK(sprof_symmap_line_count(m) == 14);
    uint64_t la;
    const char *lf;
    uint32_t ll;
    sprof_symmap_line_at(m, 2, &la, &lf, &ll);
    CHECK(la == 0x1018 && strcmp(lf, "lib/a.rb") == 0 && ll == 30);
    CHECK(sprof_symmap_inline_count(m) == 4);
    size_t parent, fi;
    const char *cf;
    uint32_t cl;
    sprof_symmap_inline_at(m, 0, &fn, &parent, &fi, &cf, &cl);
    CHECK(parent == SPROF_SYMMAP_NO_PARENT && fi == 0 && cl == 12 && strcmp(fn.ruby_name, "B#b") == 0);
    sprof_symmap_inline_at(m, 1, &fn, &parent, &fi, &cf, &cl);
    CHECK(parent == 0 && cl == 20 && strcmp(fn.ruby_name, "A.a") == 0);
    CHECK(sprof_symmap_interval_count(m) == 7);
}

static void check_open_errors(const char *dir)
{
    char err[512], path[512];
    CHECK(sprof_symmap_open(dir, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "is a directory") != NULL);
    snprintf(path, sizeof(path), "%s/empty.symmap", dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0);
    close(fd);
    CHECK(sprof_symmap_open(path, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "empty file") != NULL && strncmp(err, path, strlen(path)) == 0);
    snprintf(path, sizeof(path), "%s/junk.symmap", dir);
    fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "this is not a symmap at all", 27) == 27);
    close(fd);
    CHECK(sprof_symmap_open(path, err, sizeof(err)) == NULL);
    printf("junk file error: %s\n", err);
    CHECK(strstr(err, "not a symmap (bad magic)") != NULL && strchr(err, '\n') == NULL);
    snprintf(path, sizeof(path), "%s/missing.symmap", dir);
    CHECK(sprof_symmap_open(path, err, sizeof(err)) == NULL);
    CHECK(strstr(err, "No such file") != NULL);
    snprintf(path, sizeof(path), "%s/fifo.symmap", dir);
    CHECK(mkfifo(path, 0644) == 0);
    CHECK(sprof_symmap_open(path, err, sizeof(err)) == NULL); /* must not block either */
    CHECK(strstr(err, "not a regular file") != NULL);
}

int main(void)
{
    char dir[] = "/tmp/symmap-rt-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[512], err[512];
    snprintf(path, sizeof(path), "%s/app.symmap", dir);

    sprof_symmap_writer *w = fixture_writer(0);
    CHECK(sprof_symmap_writer_write(w, path, err, sizeof(err)) == 0);
    sprof_symmap_writer_free(w);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);

    sprof_symmap *m = sprof_symmap_open(path, err, sizeof(err));
    if (!m) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    check_lookups(m);
    sprof_symmap_close(m);

    /* Determinism: other insertion order, same bytes. */
    size_t n0, n1;
    uint8_t *b0 = fixture_bytes(0, &n0), *b1 = fixture_bytes(1, &n1);
    CHECK(n0 == n1 && memcmp(b0, b1, n0) == 0);
    CHECK((size_t)st.st_size == n0);
    /* Bytes at an odd address still work (the reader takes an aligned copy). */
    uint8_t *odd = malloc(n0 + 1);
    memcpy(odd + 1, b0, n0);
    m = sprof_symmap_open_mem(odd + 1, n0, "odd", err, sizeof(err));
    CHECK(m != NULL);
    check_lookups(m);
    sprof_symmap_close(m);
    free(odd);
    free(b0);
    free(b1);

    /* Empty writer: a valid, empty map. */
    w = sprof_symmap_writer_new();
    uint8_t *eb;
    size_t en;
    CHECK(sprof_symmap_writer_to_memory(w, &eb, &en, err, sizeof(err)) == 0);
    sprof_symmap_writer_free(w);
    m = sprof_symmap_open_mem(eb, en, "empty", err, sizeof(err));
    CHECK(m != NULL && sprof_symmap_lookup(m, 0x1000, NULL, 0) == 0 && sprof_symmap_function_count(m) == 0);
    sprof_symmap_close(m);
    free(eb);

    /* Writer argument checks. */
    w = sprof_symmap_writer_new();
    sprof_symmap_names bad = { NULL, NULL, NULL, 0, 0, 0, 0 };
    CHECK(sprof_symmap_writer_add_function(w, 0, 1, &bad) == -1);
    sprof_symmap_names ok = { "f", NULL, NULL, 0, SPROF_KIND_NATIVE, SPROF_COST_NATIVE, 0 };
    CHECK(sprof_symmap_writer_add_function(w, 2, 1, &ok) == -1);
    long f = sprof_symmap_writer_add_function(w, 1, 2, &ok);
    CHECK(f == 0);
    CHECK(sprof_symmap_writer_add_inline(w, 1, -1, NULL, 0, &ok, NULL, 0) == -1);
    CHECK(sprof_symmap_writer_add_inline(w, 0, 5, NULL, 0, &ok, NULL, 0) == -1);
    /* A device target is written in place, never replaced by a regular file. */
    struct stat dn;
    if (stat("/dev/null", &dn) == 0 && S_ISCHR(dn.st_mode)) {
        CHECK(sprof_symmap_writer_write(w, "/dev/null", err, sizeof(err)) == 0);
        CHECK(stat("/dev/null", &dn) == 0 && S_ISCHR(dn.st_mode));
    }
    CHECK(sprof_symmap_writer_write(w, dir, err, sizeof(err)) == -1 && strstr(err, "is a directory"));
    snprintf(path, sizeof(path), "%s/no/such/dir/x.symmap", dir);
    CHECK(sprof_symmap_writer_write(w, path, err, sizeof(err)) == -1);
    printf("unwritable path error: %s\n", err);
    sprof_symmap_writer_free(w);

    /* Several rows at one address: the last one added wins (DWARF), and a
     * row with a line beats an end-of-sequence marker at the same address. */
    w = sprof_symmap_writer_new();
    sprof_symmap_names lf = { "lf", NULL, "d.c", 1, SPROF_KIND_NATIVE, SPROF_COST_NATIVE, 0 };
    CHECK(sprof_symmap_writer_add_function(w, 0x10, 0x40, &lf) == 0);
    sprof_symmap_writer_add_line(w, 0x10, "z.c", 5);
    sprof_symmap_writer_add_line(w, 0x10, "a.c", 9);
    sprof_symmap_writer_add_line(w, 0x10, "m.c", 7);
    sprof_symmap_writer_add_line(w, 0x18, "m.c", 8);
    sprof_symmap_writer_add_line(w, 0x20, "b.c", 3);
    sprof_symmap_writer_end_line_sequence(w, 0x20);
    sprof_symmap_writer_end_line_sequence(w, 0x30);
    CHECK(sprof_symmap_writer_to_memory(w, &eb, &en, err, sizeof(err)) == 0);
    sprof_symmap_writer_free(w);
    m = sprof_symmap_open_mem(eb, en, "lines", err, sizeof(err));
    CHECK(m != NULL);
    sprof_frame lfr;
    CHECK(sprof_symmap_lookup(m, 0x10, &lfr, 1) == 1 && strcmp(lfr.file, "m.c") == 0 && lfr.line == 7);
    CHECK(sprof_symmap_lookup(m, 0x1f, &lfr, 1) == 1 && strcmp(lfr.file, "m.c") == 0 && lfr.line == 8);
    CHECK(sprof_symmap_lookup(m, 0x20, &lfr, 1) == 1 && strcmp(lfr.file, "b.c") == 0 && lfr.line == 3);
    CHECK(sprof_symmap_lookup(m, 0x30, &lfr, 1) == 1 && strcmp(lfr.file, "d.c") == 0 && lfr.line == 0);
    CHECK(sprof_symmap_line_count(m) == 4);
    sprof_symmap_close(m);
    free(eb);

    check_open_errors(dir);

    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    printf("symmap round trip: ok\n");
    return 0;
}
