/* libFuzzer harness: sprof_symmap_open_mem on arbitrary bytes; when it
 * accepts, look up addresses around every function, interval, line and CFI
 * row and iterate the whole map. Build (not wired into CMake):
 *   clang -g -fsanitize=fuzzer,address,undefined -Isymmap/include \
 *         tests/fuzz/symmap_fuzz.c symmap/src/\*.c -o symmap_fuzz
 *   ./symmap_fuzz tests/fuzz/corpus/symmap */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sprof/symmap.h"

static volatile size_t sink;

static void use(const char *s)
{
    sink += strlen(s);
}

static void probe(const sprof_symmap *m, uint64_t a)
{
    sprof_frame f[8];
    size_t n = sprof_symmap_lookup(m, a, f, 8);
    for (size_t i = 0; i < n && i < 8; i++) {
        use(f[i].c_name);
        use(f[i].ruby_name);
        use(f[i].file);
    }
    sprof_cfi_row r;
    if (sprof_symmap_cfi_lookup(m, a, &r) == 0)
        sink += (size_t)r.lo;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    sprof_symmap *m = sprof_symmap_open_mem(data, size, "fuzz.symmap", err, sizeof(err));
    if (!m)
        return 0;
    sprof_frame f;
    for (size_t i = 0; i < sprof_symmap_function_count(m); i++) {
        sprof_symmap_function(m, i, &f);
        use(f.c_name);
        use(f.ruby_name);
        use(f.file);
        probe(m, f.func_lo);
        probe(m, f.func_lo - 1);
        probe(m, f.func_hi - 1);
        probe(m, f.func_hi);
        probe(m, f.func_lo + (f.func_hi - f.func_lo) / 2);
    }
    for (size_t i = 0; i < sprof_symmap_inline_count(m); i++) {
        size_t parent, fi;
        const char *cf;
        uint32_t cl;
        sprof_symmap_inline_at(m, i, &f, &parent, &fi, &cf, &cl);
        use(f.c_name);
        use(cf);
    }
    for (size_t i = 0; i < sprof_symmap_interval_count(m); i++) {
        uint64_t lo, hi;
        size_t node;
        sprof_symmap_interval_at(m, i, &lo, &hi, &node);
        probe(m, lo);
        probe(m, hi - 1);
    }
    for (size_t i = 0; i < sprof_symmap_line_count(m); i++) {
        uint64_t a;
        const char *file;
        uint32_t line;
        sprof_symmap_line_at(m, i, &a, &file, &line);
        use(file);
        probe(m, a);
    }
    for (size_t i = 0; i < sprof_symmap_cfi_count(m); i++) {
        sprof_cfi_row r;
        sprof_symmap_cfi_row_at(m, i, &r);
        probe(m, r.lo);
    }
    for (size_t i = 0; i < sprof_symmap_segment_count(m); i++) {
        const sprof_segment *s = sprof_symmap_segment(m, i);
        uint64_t va;
        if (sprof_symmap_file_offset_to_vaddr(m, s->file_offset, &va) == 0)
            probe(m, va);
    }
    size_t idlen;
    const uint8_t *id = sprof_symmap_build_id(m, &idlen);
    for (size_t i = 0; i < idlen; i++)
        sink += id[i];
    use(sprof_symmap_binary_path(m));
    sink += (size_t)sprof_symmap_is_pie(m);
    sprof_symmap_close(m);
    return 0;
}
