/* The ELF reader for shared libraries (offline-tools/lib/src/elf_module.c):
 * reads its own executable and libc correctly (symbols, segments,
 * build-id, .eh_frame rows), then survives thousands of truncated and
 * byte-flipped copies (run it under -DSPROF_SANITIZE=ON to see any
 * out-of-bounds read). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_module.h"
#include "fold_check.h"

static volatile uint64_t sink;

__attribute__((noinline)) int test_elf_marker_function(int x)
{
    return x * 3 + 1;
}

/* Assembly's functions: a sizeless label (ld.so's _start, _dl_start_user),
 * and a sized function with a label inside it. */
__asm__(".text\n"
        "test_elf_asm_entry:\n"
        "  nop; nop; nop; nop; nop; nop; nop; nop\n"
        "  ret\n"
        ".type test_elf_asm_func, @function\n"
        "test_elf_asm_func:\n"
        "  nop; nop; nop; nop; nop; nop; nop; nop\n"
        "test_elf_asm_inner_label:\n"
        "  nop; nop; nop; nop; nop; nop; nop; nop\n"
        "  ret\n"
        ".size test_elf_asm_func, .-test_elf_asm_func\n");

static const sprof_elf_symbol *symbol_named(const sprof_elf_module *m, const char *name)
{
    for (size_t i = 0; i < m->nsymbols; i++)
        if (strcmp(m->symbols[i].name, name) == 0)
            return &m->symbols[i];
    return NULL;
}

static void touch(sprof_elf_module *m)
{
    for (size_t i = 0; i < m->nsymbols; i++)
        sink += strlen(m->symbols[i].name);
    for (size_t i = 0; i < m->nsegments; i++) {
        uint64_t v;
        for (uint64_t off = m->segments[i].file_offset; off < m->segments[i].file_offset + 0x3000; off += 0x400) {
            if (sprof_elf_offset_to_vaddr(m, off, &v) == 0) {
                sprof_cfi_row row;
                sink += (uint64_t)sprof_elf_cfi_lookup(m, v, &row);
                const sprof_elf_symbol *s = sprof_elf_symbol_at(m, v);
                if (s)
                    sink += strlen(s->name);
            }
        }
    }
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(void)
{
    char err[512];
    sprof_elf_module *self = sprof_elf_open("/proc/self/exe", err, sizeof err);
    CHECK(self != NULL, "open self: %s", err);
    if (!self)
        return 1;
    CHECK(self->build_id_len >= 8, "self build-id length %u", self->build_id_len);
    CHECK(self->nsegments >= 2, "self segments %zu", self->nsegments);
    /* the marker function is found by address, and its CFI exists */
    const sprof_elf_symbol *found = NULL;
    for (size_t i = 0; i < self->nsymbols; i++)
        if (strcmp(self->symbols[i].name, "test_elf_marker_function") == 0)
            found = &self->symbols[i];
    CHECK(found != NULL, "marker function not among %zu symbols", self->nsymbols);
    if (found) {
        const sprof_elf_symbol *at = sprof_elf_symbol_at(self, found->lo + 1);
        CHECK(at == found, "symbol_at(marker+1)");
        sprof_cfi_row row;
        CHECK(sprof_elf_cfi_lookup(self, found->lo, &row) == 0 && row.cfa_reg == SPROF_CFA_RSP &&
                  row.cfa_offset == 8,
              "CFI at function entry: CFA = rsp+8");
    }
    CHECK(sprof_elf_symbol_at(self, 0) == NULL, "no symbol at 0");
    /* a label in code names the code after it, up to the next symbol; a
     * label inside a function never splits it */
    const sprof_elf_symbol *entry = symbol_named(self, "test_elf_asm_entry");
    const sprof_elf_symbol *func = symbol_named(self, "test_elf_asm_func");
    CHECK(entry && sprof_elf_symbol_at(self, entry->lo + 5) == entry, "the label test_elf_asm_entry names no code");
    CHECK(func && entry && entry->hi == func->lo, "the label ends where the next function starts");
    CHECK(func && func->hi - func->lo == 17 && sprof_elf_symbol_at(self, func->lo + 12) == func,
          "the function with a label inside is split");
    CHECK(symbol_named(self, "test_elf_asm_inner_label") == NULL, "a label inside a function is a symbol");
    /* PLT stubs are named sym@plt (we call malloc through the PLT) */
    int plt = 0;
    for (size_t i = 0; i < self->nsymbols; i++)
        plt |= strcmp(self->symbols[i].name, "malloc@plt") == 0;
    CHECK(plt, "malloc@plt not synthesized");
    /* and the PLT's header, where every lazy binding passes, is ".plt" */
    const sprof_elf_symbol *header = NULL;
    for (size_t i = 0; i < self->nsymbols; i++)
        if (strcmp(self->symbols[i].name, ".plt") == 0)
            header = &self->symbols[i];
    CHECK(header && header->hi - header->lo >= 16 && sprof_elf_symbol_at(self, header->lo + 6) == header,
          "the PLT header is not named .plt");

    /* libc: stripped of .symtab on Debian, named through .dynsym (and the
     * debug file when installed) */
    sprof_elf_module *libc = sprof_elf_open("/lib/x86_64-linux-gnu/libc.so.6", err, sizeof err);
    if (libc) {
        int has_malloc = 0;
        for (size_t i = 0; i < libc->nsymbols; i++)
            has_malloc |= strcmp(libc->symbols[i].name, "malloc") == 0;
        CHECK(has_malloc, "libc: malloc not found among %zu symbols", libc->nsymbols);
        /* its calls to its own ifuncs go through R_X86_64_IRELATIVE stubs:
         * named after the ifunc (vfprintf's memcpy@plt) */
        int ifunc_plt = 0;
        for (size_t i = 0; i < libc->nsymbols; i++)
            ifunc_plt |= strcmp(libc->symbols[i].name, "memcpy@plt") == 0 ||
                         strcmp(libc->symbols[i].name, "strlen@plt") == 0;
        CHECK(ifunc_plt, "libc: no memcpy@plt or strlen@plt among its IRELATIVE stubs");
        /* and its .plt.got stubs (GLOB_DAT slots): free@plt, malloc@plt */
        int got_plt = 0;
        for (size_t i = 0; i < libc->nsymbols; i++)
            got_plt |= strcmp(libc->symbols[i].name, "free@plt") == 0;
        CHECK(got_plt, "libc: no free@plt among its .plt.got stubs");
        touch(libc);
        sprof_elf_close(libc);
    }

    /* not ELF, missing file */
    CHECK(sprof_elf_open("/nonexistent/lib.so", err, sizeof err) == NULL && strstr(err, "/nonexistent/lib.so"),
          "missing file: %s", err);
    CHECK(sprof_elf_open_mem("hello", 5, "text", err, sizeof err) == NULL && strstr(err, "text"),
          "not ELF: %s", err);

    /* hostile copies of our own executable */
    size_t size = self->map_size;
    uint8_t *orig = malloc(size), *buf = malloc(size);
    memcpy(orig, self->map, size);
    sprof_elf_close(self);
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = size;
        memcpy(buf, orig, size);
        switch (iter % 3) {
        case 0: /* truncated */
            n = (size_t)(next_rand() % size);
            break;
        case 1: /* bytes flipped in the headers */
            for (int k = 0; k < 8; k++)
                buf[next_rand() % 256] ^= (uint8_t)next_rand();
            break;
        default: { /* a header field set to a hostile value */
            static const uint64_t vals[] = { 0, 1, 0xffffffffffffffffull, 0x7fffffff, 0x8000000000000000ull };
            size_t at = (size_t)(next_rand() % 64) & ~(size_t)7;
            uint64_t v = vals[next_rand() % 5];
            memcpy(buf + at, &v, 8);
            break;
        }
        }
        sprof_elf_module *m = sprof_elf_open_mem(buf, n, "hostile", err, sizeof err);
        if (m) {
            touch(m);
            sprof_elf_close(m);
        }
    }
    free(orig);
    free(buf);
    return check_report("test_elf");
}
