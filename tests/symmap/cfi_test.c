/* The CFI compiler: this test program's own .eh_frame (a frame-pointer
 * function's prologue rows, and a sample checked against readelf), crafted
 * sections covering the pointer encodings, augmentations and CFA opcodes,
 * and garbage that must fail cleanly. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "sprof/cfi.h"

/* ---------- a function built with frame pointers, and a probe inside it ---------- */

static volatile uintptr_t probe_ra;

__attribute__((noinline)) static int probe_callee(int x)
{
    probe_ra = (uintptr_t)__builtin_return_address(0);
    return x * 3;
}

/* built with -fno-omit-frame-pointer, like everything in this project */
__attribute__((noinline)) int cfi_test_fp_function(int x)
{
    volatile int keep = probe_callee(x);
    return keep + 1; /* work after the call: no tail call, so a real frame */
}

/* ---------- the executable's .eh_frame, via a tiny ELF reader ---------- */

typedef struct elf_image {
    uint8_t *bytes;
    size_t size;
} elf_image;

static int read_file(const char *path, elf_image *img)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 20, n = 0;
    img->bytes = malloc(cap);
    for (size_t k; (k = fread(img->bytes + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap)
            img->bytes = realloc(img->bytes, cap *= 2);
    }
    fclose(f);
    img->size = n;
    return 0;
}

static const Elf64_Shdr *find_section(const elf_image *img, const char *name)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->bytes;
    CHECK(img->size >= sizeof(*eh) && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
    CHECK(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) <= img->size);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img->bytes + eh->e_shoff);
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_name < strs->sh_size &&
            strcmp((const char *)img->bytes + strs->sh_offset + sh[i].sh_name, name) == 0)
            return &sh[i];
    return NULL;
}

static int main_bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = info->dlpi_addr;
    return 1; /* the first object is the executable */
}

static void expect_row(const sprof_cfi_row *rows, size_t n, uint64_t addr, int reg, int off, int ra,
                       int rbp_saved, int rbp_off)
{
    const sprof_cfi_row *r = sprof_cfi_find(rows, n, addr);
    if (!r || r->cfa_reg != reg || r->cfa_offset != off || r->ra_offset != ra || r->rbp_saved != rbp_saved ||
        (rbp_saved && r->rbp_offset != rbp_off)) {
        fprintf(stderr, "row at 0x%llx: ", (unsigned long long)addr);
        if (r)
            fprintf(stderr, "[0x%llx,0x%llx) reg %d%+d ra %d rbp %d/%d", (unsigned long long)r->lo,
                    (unsigned long long)r->hi, r->cfa_reg, r->cfa_offset, r->ra_offset, r->rbp_saved,
                    r->rbp_offset);
        else
            fprintf(stderr, "none");
        fprintf(stderr, ", want reg %d%+d ra %d rbp %d/%d\n", reg, off, ra, rbp_saved, rbp_off);
        exit(1);
    }
}

/* Compare our rows with readelf's interpretation at every row it prints. */
static void compare_with_readelf(const char *exe, const sprof_cfi_row *rows, size_t n)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s' 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    char line[512];
    if (!p || !fgets(line, sizeof(line), p)) {
        printf("readelf not available: skipping the comparison with readelf\n");
        if (p)
            pclose(p);
        return;
    }
    int col_cfa = -1, col_rbp = -1, col_ra = -1, in_eh = 0, in_cie = 0;
    uint64_t fde_end = ~0ull;
    size_t compared = 0;
    do {
        if (strstr(line, "Contents of the .eh_frame section"))
            in_eh = 1;
        else if (strstr(line, "Contents of the"))
            in_eh = 0;
        if (!in_eh)
            continue;
        if (strstr(line, " CIE ")) { /* rows under a CIE header are its initial state at LOC 0 */
            in_cie = 1;
        } else if (strstr(line, " FDE ")) {
            in_cie = 0;
            /* readelf may print a row at the FDE's end address (a rule set by the
             * last instruction, covering nothing): rows from there on are skipped. */
            const char *pc = strstr(line, "pc=");
            const char *dots = pc ? strstr(pc, "..") : NULL;
            fde_end = dots ? strtoull(dots + 2, NULL, 16) : ~0ull;
        }
        if (in_cie)
            continue;
        char *tok[32];
        int nt = 0;
        for (char *save, *t = strtok_r(line, " \t\n", &save); t && nt < 32; t = strtok_r(NULL, " \t\n", &save))
            if (t[0] != '(') /* "r10 (r10)": the name in parentheses is not a column */
                tok[nt++] = t;
        if (nt >= 2 && strcmp(tok[0], "LOC") == 0) {
            col_cfa = col_rbp = col_ra = -1;
            for (int i = 0; i < nt; i++) {
                if (!strcmp(tok[i], "CFA"))
                    col_cfa = i;
                else if (!strcmp(tok[i], "rbp"))
                    col_rbp = i;
                else if (!strcmp(tok[i], "ra"))
                    col_ra = i;
            }
            continue;
        }
        if (nt < 2 || col_cfa < 0 || col_ra < 0 || strlen(tok[0]) != 16 || nt <= col_ra ||
            (col_rbp >= 0 && nt <= col_rbp))
            continue;
        char *endp;
        uint64_t loc = strtoull(tok[0], &endp, 16);
        if (*endp || loc >= fde_end)
            continue;
        const char *cfa = tok[col_cfa], *ra = tok[col_ra], *rbp = col_rbp >= 0 ? tok[col_rbp] : "u";
        int reg = -1, off = 0, ra_off = 0, rbp_saved = 0, rbp_off = 0, defined = 1;
        if (!strncmp(cfa, "rsp+", 4))
            reg = 7, off = atoi(cfa + 4);
        else if (!strncmp(cfa, "rbp+", 4))
            reg = 6, off = atoi(cfa + 4);
        else
            defined = 0;
        if (!strncmp(ra, "c", 1) && (ra[1] == '-' || ra[1] == '+'))
            ra_off = atoi(ra + 1);
        else
            defined = 0;
        if (rbp[0] == 'c' && (rbp[1] == '-' || rbp[1] == '+'))
            rbp_saved = 1, rbp_off = atoi(rbp + 1);
        else if (strcmp(rbp, "u") != 0)
            defined = 0;
        if (defined)
            expect_row(rows, n, loc, reg, off, ra_off, rbp_saved, rbp_off);
        else
            expect_row(rows, n, loc, SPROF_CFA_UNDEFINED, 0, 0, 0, 0);
        compared++;
    } while (fgets(line, sizeof(line), p));
    pclose(p);
    CHECK(compared > 10);
    printf("compared %zu rows with readelf --debug-dump=frames-interp: all equal\n", compared);
}

static void test_own_eh_frame(void)
{
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    CHECK(k > 0);
    exe[k] = 0;
    elf_image img;
    CHECK(read_file(exe, &img) == 0);
    const Elf64_Shdr *sh = find_section(&img, ".eh_frame");
    CHECK(sh && sh->sh_offset + sh->sh_size <= img.size);
    sprof_cfi_row *rows;
    size_t n;
    char err[256];
    if (sprof_cfi_compile(img.bytes + sh->sh_offset, sh->sh_size, sh->sh_addr, 0, &rows, &n, err,
                          sizeof(err)) != 0) {
        fprintf(stderr, "compile own .eh_frame: %s\n", err);
        exit(1);
    }
    CHECK(n > 10);
    for (size_t i = 1; i < n; i++)
        CHECK(rows[i - 1].hi <= rows[i].lo && rows[i].lo < rows[i].hi);

    uintptr_t bias = 0;
    dl_iterate_phdr(main_bias_cb, &bias);
    probe_ra = 0;
    CHECK(cfi_test_fp_function(2) == 7);
    uint64_t fn = (uint64_t)(uintptr_t)&cfi_test_fp_function - bias;
    uint64_t inside = (uint64_t)probe_ra - bias; /* after the prologue, at the call's return */
    CHECK(inside > fn && inside < fn + 256);
    expect_row(rows, n, fn, SPROF_CFA_RSP, 8, -8, 0, 0);
    expect_row(rows, n, inside - 1, SPROF_CFA_RBP, 16, -8, 1, -16);
    printf("own .eh_frame: %zu rows; cfi_test_fp_function at 0x%llx: CFA=rsp+8 at entry, "
           "CFA=rbp+16 ra@-8 rbp@-16 at 0x%llx\n",
           n, (unsigned long long)fn, (unsigned long long)inside - 1);

    compare_with_readelf(exe, rows, n);

    /* Every truncation and many corruptions of a real section: no crash. */
    const uint8_t *eh = img.bytes + sh->sh_offset;
    size_t ehn = sh->sh_size;
    uint8_t *copy = malloc(ehn);
    size_t failures = 0, step = ehn > 4000 ? ehn / 4000 : 1;
    for (size_t len = 0; len < ehn; len += step) {
        memcpy(copy, eh, len);
        sprof_cfi_row *r2;
        size_t n2;
        err[0] = 0;
        /* an exact-size heap copy so ASan sees any read past the end */
        uint8_t *exact = malloc(len ? len : 1);
        memcpy(exact, eh, len);
        if (sprof_cfi_compile(exact, len, sh->sh_addr, 0, &r2, &n2, err, sizeof(err)) != 0) {
            CHECK(err[0] && strchr(err, '\n') == NULL);
            failures++;
        } else {
            free(r2);
        }
        free(exact);
    }
    uint64_t rng = 12345;
    for (int i = 0; i < 2000; i++) {
        memcpy(copy, eh, ehn);
        for (int j = 0; j < 3; j++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            copy[(rng >> 20) % ehn] = (uint8_t)(rng >> 8);
        }
        sprof_cfi_row *r2;
        size_t n2;
        if (sprof_cfi_compile(copy, ehn, sh->sh_addr, 0, &r2, &n2, err, sizeof(err)) == 0)
            free(r2);
        else
            failures++;
    }
    printf("truncated/corrupted copies of .eh_frame: %zu refused cleanly, none crashed\n", failures);
    free(copy);
    free(rows);
    free(img.bytes);
}

/* ---------- crafted sections ---------- */

typedef struct sec {
    uint8_t b[2048];
    size_t n;
} sec;

static void put(sec *s, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        s->b[s->n++] = (uint8_t)(v >> (8 * i));
}
static void put_bytes(sec *s, const void *p, size_t n)
{
    memcpy(s->b + s->n, p, n);
    s->n += n;
}
static void uleb(sec *s, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        s->b[s->n++] = b | (v ? 0x80 : 0);
    } while (v);
}
static void sleb(sec *s, int64_t v)
{
    for (;;) {
        uint8_t b = v & 0x7f;
        v >>= 7;
        if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
            s->b[s->n++] = b;
            return;
        }
        s->b[s->n++] = b | 0x80;
    }
}
/* Start a 32-bit-length record; returns the length field's offset. */
static size_t begin(sec *s)
{
    size_t at = s->n;
    put(s, 0, 4);
    return at;
}
static void end(sec *s, size_t at)
{
    uint32_t len = (uint32_t)(s->n - at - 4);
    memcpy(s->b + at, &len, 4);
}

/* x86-64-style CIE with augmentation `aug`; aug data bytes given raw. */
static size_t cie(sec *s, const char *aug, const uint8_t *augdata, size_t naug, int debug_frame)
{
    size_t at = begin(s);
    put(s, debug_frame ? 0xffffffffu : 0, 4);
    put(s, 1, 1); /* version */
    put_bytes(s, aug, strlen(aug) + 1);
    uleb(s, 1);  /* code alignment */
    sleb(s, -8); /* data alignment */
    put(s, 16, 1);
    if (aug[0] == 'z') {
        uleb(s, naug);
        put_bytes(s, augdata, naug);
    }
    static const uint8_t init[] = { 0x0c, 7, 8, 0x90, 1 }; /* def_cfa rsp+8; r16 at cfa-8 */
    put_bytes(s, init, sizeof(init));
    end(s, at);
    return at;
}

static void compile_ok(const sec *s, uint64_t vaddr, int debug_frame, sprof_cfi_row **rows, size_t *n)
{
    char err[256];
    uint8_t *exact = malloc(s->n ? s->n : 1);
    memcpy(exact, s->b, s->n);
    if (sprof_cfi_compile(exact, s->n, vaddr, debug_frame, rows, n, err, sizeof(err)) != 0) {
        fprintf(stderr, "crafted section refused: %s\n", err);
        exit(1);
    }
    free(exact);
}

static void compile_fails(const sec *s, int debug_frame, const char *what)
{
    char err[256] = "";
    sprof_cfi_row *rows = NULL;
    size_t n = 99;
    CHECK(sprof_cfi_compile(s->b, s->n, 0x10000, debug_frame, &rows, &n, err, sizeof(err)) == -1);
    CHECK(rows == NULL && n == 0 && err[0]);
    printf("%s -> %s\n", what, err);
}

static void test_crafted(void)
{
    const uint64_t vaddr = 0x10000;
    sec s = { .n = 0 };
    /* 1. pcrel|sdata4 ("zR"), a prologue, remember/restore state. */
    uint8_t r_pcrel = 0x1b;
    size_t c1 = cie(&s, "zR", &r_pcrel, 1, 0);
    size_t f = begin(&s);
    put(&s, s.n - c1, 4); /* CIE pointer: back from this field */
    put(&s, (uint32_t)(int32_t)(0x2000 - (int64_t)(vaddr + s.n)), 4);
    put(&s, 0x30, 4);
    uleb(&s, 0);
    static const uint8_t prog1[] = {
        0x41, 0x0e, 16, 0x86, 2, /* +1: cfa rsp+16, rbp at cfa-16 */
        0x43, 0x0d, 6,           /* +3: cfa = rbp (+16) */
        0x02, 0x20, 0x0a,        /* +0x20: remember */
        0x0c, 7, 8, 0xc6,        /* def_cfa rsp+8, restore rbp */
        0x41, 0x0b,              /* +1: restore_state */
        0x00, 0x00,              /* nops */
    };
    put_bytes(&s, prog1, sizeof(prog1));
    end(&s, f);

    /* 2. "zPLR": indirect personality, LSDA, absolute udata4 addresses;
     *    def_cfa_expression later, then expression for rbp, args_size, same_value. */
    uint8_t aug2[] = { 0x9b, 0, 0, 0, 0, 0x1b, 0x03 };
    size_t c2 = cie(&s, "zPLR", aug2, sizeof(aug2), 0);
    f = begin(&s);
    put(&s, s.n - c2, 4);
    put(&s, 0x3000, 4);
    put(&s, 0x40, 4);
    uleb(&s, 4);
    put(&s, 0, 4); /* LSDA pointer */
    static const uint8_t prog2[] = {
        0x44, 0x0e, 16, 0x2e, 8,   /* +4: rsp+16, args_size */
        0x44, 0x0f, 2, 0x77, 0x08, /* +4: def_cfa_expression (breg7 +8) */
        0x44, 0x0c, 7, 16,         /* +4: back to rsp+16 */
        0x10, 6, 2, 0x76, 0x00,    /* expression for rbp */
        0x44, 0x08, 6,             /* +4: rbp same_value */
        0x03, 0x10, 0x00,          /* advance_loc2 16 */
        0x11, 6, 0x7e,             /* offset_extended_sf rbp, -2 * -8 = +16 */
    };
    put_bytes(&s, prog2, sizeof(prog2));
    end(&s, f);

    /* 3. datarel address: skipped, not an error. */
    uint8_t r_datarel = 0x33;
    size_t c3 = cie(&s, "zR", &r_datarel, 1, 0);
    f = begin(&s);
    put(&s, s.n - c3, 4);
    put(&s, 0x5000, 4);
    put(&s, 0x10, 4);
    uleb(&s, 0);
    end(&s, f);

    /* 4. Unknown augmentation without 'z': its FDEs are skipped. */
    size_t c4 = cie(&s, "xyz", NULL, 0, 0);
    f = begin(&s);
    put(&s, s.n - c4, 4);
    put(&s, 0x6000, 8);
    put(&s, 0x10, 8);
    end(&s, f);

    /* 5. Two overlapping FDEs (absptr): the first by address keeps its range. */
    size_t c5 = cie(&s, "", NULL, 0, 0);
    f = begin(&s);
    put(&s, s.n - c5, 4);
    put(&s, 0x7080, 8);
    put(&s, 0x100, 8);
    static const uint8_t prog5[] = { 0x0e, 32 };
    put_bytes(&s, prog5, sizeof(prog5));
    end(&s, f);
    f = begin(&s);
    put(&s, s.n - c5, 4);
    put(&s, 0x7000, 8);
    put(&s, 0x100, 8);
    end(&s, f);

    /* 6. A 64-bit-length FDE using the "zR" udata4 CIE... with a uleb address. */
    uint8_t r_uleb = 0x01;
    size_t c6 = cie(&s, "zR", &r_uleb, 1, 0);
    size_t at = s.n;
    put(&s, 0xffffffffu, 4);
    put(&s, 0, 8);
    size_t idpos = s.n;
    put(&s, idpos - c6, 8);
    uleb(&s, 0x8000);
    uleb(&s, 0x20);
    uleb(&s, 0);
    uint64_t len = s.n - at - 12;
    memcpy(s.b + at + 4, &len, 8);
    put(&s, 0, 4); /* terminator */
    put(&s, 0xdeadbeef, 4); /* after the terminator: ignored */

    sprof_cfi_row *rows;
    size_t n;
    compile_ok(&s, vaddr, 0, &rows, &n);
    expect_row(rows, n, 0x2000, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x2001, 7, 16, -8, 1, -16);
    expect_row(rows, n, 0x2003, 7, 16, -8, 1, -16);
    expect_row(rows, n, 0x2004, 6, 16, -8, 1, -16);
    expect_row(rows, n, 0x2023, 6, 16, -8, 1, -16);
    expect_row(rows, n, 0x2024, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x2025, 6, 16, -8, 1, -16);
    expect_row(rows, n, 0x202f, 6, 16, -8, 1, -16);
    CHECK(sprof_cfi_find(rows, n, 0x2030) == NULL);
    expect_row(rows, n, 0x3000, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x3004, 7, 16, -8, 0, 0);
    expect_row(rows, n, 0x3008, SPROF_CFA_UNDEFINED, 0, 0, 0, 0);
    expect_row(rows, n, 0x300c, SPROF_CFA_UNDEFINED, 0, 0, 0, 0); /* rbp by expression */
    expect_row(rows, n, 0x3010, 7, 16, -8, 0, 0);
    expect_row(rows, n, 0x3020, 7, 16, -8, 1, 16);
    expect_row(rows, n, 0x303f, 7, 16, -8, 1, 16);
    CHECK(sprof_cfi_find(rows, n, 0x5000) == NULL);
    CHECK(sprof_cfi_find(rows, n, 0x6000) == NULL);
    expect_row(rows, n, 0x7000, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x707f, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x7080, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x70ff, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x7100, 7, 32, -8, 0, 0);
    expect_row(rows, n, 0x717f, 7, 32, -8, 0, 0);
    CHECK(sprof_cfi_find(rows, n, 0x7180) == NULL);
    expect_row(rows, n, 0x8000, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x801f, 7, 8, -8, 0, 0);
    for (size_t i = 1; i < n; i++)
        CHECK(rows[i - 1].hi <= rows[i].lo);
    free(rows);

    /* .debug_frame: CIE id 0xffffffff, FDE CIE pointer is a section offset. */
    sec d = { .n = 0 };
    size_t dc = cie(&d, "", NULL, 0, 1);
    f = begin(&d);
    put(&d, dc, 4);
    put(&d, 0x9000, 8);
    put(&d, 0x10, 8);
    static const uint8_t progd[] = { 0x01, 0x08, 0x90, 0, 0, 0, 0, 0, 0, 0x0e, 24 }; /* set_loc 0x9008 */
    put_bytes(&d, progd, sizeof(progd));
    end(&d, f);
    compile_ok(&d, 0, 1, &rows, &n);
    expect_row(rows, n, 0x9007, 7, 8, -8, 0, 0);
    expect_row(rows, n, 0x9008, 7, 24, -8, 0, 0);
    free(rows);

    /* Malformed. */
    sec b = { .n = 0 };
    size_t bc = cie(&b, "", NULL, 0, 0);
    f = begin(&b);
    put(&b, b.n - bc, 4);
    put(&b, 0x1000, 8);
    put(&b, 0x10, 8);
    put(&b, 0x0b, 1); /* restore_state with nothing remembered */
    end(&b, f);
    compile_fails(&b, 0, "restore_state underflow");
    b.n -= 3; /* the FDE's length now runs past the end */
    compile_fails(&b, 0, "record past the end");
    b.n = 0;
    bc = cie(&b, "", NULL, 0, 0);
    f = begin(&b);
    put(&b, 0x7fff, 4); /* CIE pointer before the section start */
    put(&b, 0x1000, 8);
    put(&b, 0x10, 8);
    end(&b, f);
    compile_fails(&b, 0, "CIE pointer out of range");
    b.n = 0;
    f = begin(&b);
    put(&b, 4, 4); /* points at itself: an FDE, not a CIE */
    put(&b, 0x1000, 8);
    put(&b, 0x10, 8);
    end(&b, f);
    compile_fails(&b, 0, "CIE pointer at an FDE");
    b.n = 0;
    f = begin(&b);
    put(&b, 0, 4);
    put(&b, 1, 1);
    put_bytes(&b, "zR", 2); /* unterminated augmentation */
    end(&b, f);
    compile_fails(&b, 0, "unterminated augmentation");

    /* Empty input: fine, no rows. */
    CHECK(sprof_cfi_compile(NULL, 0, 0, 0, &rows, &n, NULL, 0) == 0 && n == 0 && rows == NULL);
}

static void test_garbage(void)
{
    uint64_t rng = 99;
    size_t refused = 0, accepted = 0;
    for (int i = 0; i < 20000; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = (rng >> 33) % 300;
        uint8_t *buf = malloc(len ? len : 1);
        for (size_t j = 0; j < len; j++) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            buf[j] = (uint8_t)(rng >> 40);
        }
        /* Half the time make the first length field plausible so parsing goes deeper. */
        if (len >= 8 && (i & 1)) {
            uint32_t l = (uint32_t)((rng >> 13) % (len - 3));
            memcpy(buf, &l, 4);
            if (i & 2)
                memset(buf + 4, 0, 4);
        }
        sprof_cfi_row *rows;
        size_t n;
        char err[200];
        if (sprof_cfi_compile(buf, len, 0x400000, i & 4 ? 1 : 0, &rows, &n, err, sizeof(err)) == 0) {
            accepted++;
            free(rows);
        } else {
            refused++;
        }
        free(buf);
    }
    printf("random sections: %zu refused, %zu accepted, no crash\n", refused, accepted);
    CHECK(refused > 0);
}

int main(void)
{
    test_crafted();
    test_own_eh_frame();
    test_garbage();
    printf("cfi: ok\n");
    return 0;
}
