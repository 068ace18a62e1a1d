/* Minimal bounds-checked ELF64 reader for shared libraries (see elf_module.h). */
#define _GNU_SOURCE /* qsort_r */
#include "elf_module.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sprof/cfi.h"

/* Largest gap a size-0 symbol is assumed to extend over. */
#define SIZELESS_SYMBOL_MAX 4096

static int in_bounds(size_t total, uint64_t off, uint64_t len)
{
    return off <= total && len <= total - off;
}

static void *map_file(const char *path, size_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        snprintf(err, errlen, "%s: not an ELF file", path);
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        return NULL;
    }
    *size = (size_t)st.st_size;
    return p;
}

/* The parts of one ELF image we use, all validated against its size. */
typedef struct elf_view {
    const uint8_t *b;
    size_t n;
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh;
    size_t shnum;
    const char *shstr;
    size_t shstr_size;
} elf_view;

static int view_open(elf_view *v, const uint8_t *b, size_t n, const char *path, char *err,
                     size_t errlen)
{
    memset(v, 0, sizeof *v);
    v->b = b;
    v->n = n;
    if (n < sizeof(Elf64_Ehdr) || memcmp(b, ELFMAG, SELFMAG) != 0) {
        snprintf(err, errlen, "%s: not an ELF file", path);
        return -1;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
        snprintf(err, errlen, "%s: not a little-endian ELF64 file", path);
        return -1;
    }
    v->eh = eh;
    if (eh->e_phnum && (eh->e_phentsize != sizeof(Elf64_Phdr) || (eh->e_phoff & 7) ||
                        !in_bounds(n, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))) {
        snprintf(err, errlen, "%s: program headers out of bounds", path);
        return -1;
    }
    if (eh->e_shoff) {
        if (eh->e_shentsize != sizeof(Elf64_Shdr) || (eh->e_shoff & 7) ||
            !in_bounds(n, eh->e_shoff, sizeof(Elf64_Shdr))) {
            snprintf(err, errlen, "%s: section headers out of bounds", path);
            return -1;
        }
        const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
        uint64_t shnum = eh->e_shnum ? eh->e_shnum : sh[0].sh_size;
        if (shnum > n / sizeof(Elf64_Shdr) ||
            !in_bounds(n, eh->e_shoff, shnum * sizeof(Elf64_Shdr))) {
            snprintf(err, errlen, "%s: section headers out of bounds", path);
            return -1;
        }
        v->sh = sh;
        v->shnum = (size_t)shnum;
        size_t stri = eh->e_shstrndx == SHN_XINDEX ? sh[0].sh_link : eh->e_shstrndx;
        if (stri < shnum && sh[stri].sh_type == SHT_STRTAB &&
            in_bounds(n, sh[stri].sh_offset, sh[stri].sh_size)) {
            v->shstr = (const char *)b + sh[stri].sh_offset;
            v->shstr_size = sh[stri].sh_size;
        }
    }
    return 0;
}

static const char *section_name(const elf_view *v, const Elf64_Shdr *s)
{
    if (!v->shstr || s->sh_name >= v->shstr_size)
        return "";
    const char *name = v->shstr + s->sh_name;
    if (!memchr(name, 0, v->shstr_size - s->sh_name))
        return "";
    return name;
}

/* Build-id from a note area; 0 if found. */
static int notes_build_id(const uint8_t *p, size_t len, uint8_t *out, uint32_t *outlen)
{
    size_t off = 0;
    while (len - off >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        memcpy(&nh, p + off, sizeof nh);
        off += sizeof nh;
        size_t namesz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
        size_t descsz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
        if (namesz > len - off)
            return -1;
        const uint8_t *name = p + off;
        off += namesz;
        if (descsz > len - off)
            return -1;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
            nh.n_descsz > 0 && nh.n_descsz <= 32) {
            memcpy(out, p + off, nh.n_descsz);
            *outlen = nh.n_descsz;
            return 0;
        }
        off += descsz;
    }
    return -1;
}

static void read_build_id(const elf_view *v, uint8_t *out, uint32_t *outlen)
{
    *outlen = 0;
    for (size_t i = 0; i < v->shnum; i++) {
        const Elf64_Shdr *s = &v->sh[i];
        if (s->sh_type == SHT_NOTE && in_bounds(v->n, s->sh_offset, s->sh_size) &&
            notes_build_id(v->b + s->sh_offset, s->sh_size, out, outlen) == 0)
            return;
    }
    if (v->eh->e_phnum == 0)
        return;
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(v->b + v->eh->e_phoff);
    for (size_t i = 0; i < v->eh->e_phnum; i++) {
        if (ph[i].p_type == PT_NOTE && in_bounds(v->n, ph[i].p_offset, ph[i].p_filesz) &&
            notes_build_id(v->b + ph[i].p_offset, ph[i].p_filesz, out, outlen) == 0)
            return;
    }
}

enum { SYM_GLOBAL = 1, SYM_LABEL = 2, SYM_SIZELESS = 4 };

typedef struct sym_list {
    sprof_elf_symbol *v;
    unsigned char *flags; /* parallel: SYM_GLOBAL if STB_GLOBAL/WEAK, SYM_LABEL if STT_NOTYPE,
                           SYM_SIZELESS if its end is a guess */
    size_t n, cap;
} sym_list;

static int sym_push(sym_list *l, uint64_t lo, uint64_t hi, const char *name, unsigned flags)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        sprof_elf_symbol *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        unsigned char *g = realloc(l->flags, cap);
        if (!g)
            return -1;
        l->flags = g;
        l->cap = cap;
    }
    l->v[l->n] = (sprof_elf_symbol){ lo, hi, name };
    l->flags[l->n] = (unsigned char)flags;
    l->n++;
    return 0;
}

/* Function symbols of every symbol table of type `type` in the view. */
/* Function symbols into out; *links_runtime set when the sprof runtime's
 * anchor object (sprof_rt_link, lifecycle.c) is defined here (may be NULL). */
static int collect_symbols(const elf_view *v, uint32_t type, sym_list *out, int *links_runtime)
{
    for (size_t i = 0; i < v->shnum; i++) {
        const Elf64_Shdr *s = &v->sh[i];
        if (s->sh_type != type || s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= v->shnum)
            continue;
        const Elf64_Shdr *strs = &v->sh[s->sh_link];
        if (!in_bounds(v->n, s->sh_offset, s->sh_size) ||
            !in_bounds(v->n, strs->sh_offset, strs->sh_size) || strs->sh_size == 0)
            continue;
        const char *str = (const char *)v->b + strs->sh_offset;
        if (str[strs->sh_size - 1] != '\0')
            continue; /* names must be terminated inside the table */
        size_t count = s->sh_size / sizeof(Elf64_Sym);
        for (size_t k = 0; k < count; k++) {
            Elf64_Sym sym;
            memcpy(&sym, v->b + s->sh_offset + k * sizeof(Elf64_Sym), sizeof sym);
            unsigned t = ELF64_ST_TYPE(sym.st_info);
            if (links_runtime && t == STT_OBJECT && sym.st_shndx != SHN_UNDEF && sym.st_name < strs->sh_size &&
                strcmp(str + sym.st_name, "sprof_rt_link") == 0)
                *links_runtime = 1;
            /* A sizeless label in code is assembly's function: ld.so's
             * _start and _dl_start_user, the root of every constructor run
             * after the runtime's. Never in place of a function (below). */
            int label = t == STT_NOTYPE && sym.st_size == 0 && sym.st_shndx < v->shnum &&
                        (v->sh[sym.st_shndx].sh_flags & SHF_EXECINSTR) && sym.st_name < strs->sh_size &&
                        str[sym.st_name] != '.' && str[sym.st_name] != '$';
            if ((t != STT_FUNC && t != STT_GNU_IFUNC && !label) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0 || sym.st_name >= strs->sh_size || str[sym.st_name] == '\0')
                continue;
            unsigned bind = ELF64_ST_BIND(sym.st_info);
            uint64_t hi = sym.st_value + sym.st_size;
            if (sym.st_size == 0) {
                /* sizeless (assembly, _init): at most to the end of its
                 * section, so it never swallows the PLT that follows */
                hi = sym.st_value;
                if (sym.st_shndx < v->shnum) {
                    const Elf64_Shdr *sec = &v->sh[sym.st_shndx];
                    if (sym.st_value >= sec->sh_addr && sym.st_value - sec->sh_addr < sec->sh_size)
                        hi = sec->sh_addr + sec->sh_size;
                }
                if (hi == sym.st_value)
                    continue;
                if (hi - sym.st_value > SIZELESS_SYMBOL_MAX)
                    hi = sym.st_value + SIZELESS_SYMBOL_MAX;
            }
            if (sym_push(out, sym.st_value, hi, str + sym.st_name,
                         (bind == STB_GLOBAL || bind == STB_WEAK ? SYM_GLOBAL : 0u) | (label ? SYM_LABEL : 0u) |
                             (sym.st_size == 0 ? SYM_SIZELESS : 0u)) != 0)
                return -1;
        }
    }
    return 0;
}

/* Sort index: by address, then the preferred alias first (a function over a
 * label, longest, global, shorter name, then name) so the choice never
 * depends on table order. */
static int sym_order(const void *a, const void *b, void *ctx)
{
    const sym_list *l = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const sprof_elf_symbol *x = &l->v[i], *y = &l->v[j];
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    int xlabel = (l->flags[i] & SYM_LABEL) != 0, ylabel = (l->flags[j] & SYM_LABEL) != 0;
    if (xlabel != ylabel)
        return xlabel - ylabel;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    int xglobal = (l->flags[i] & SYM_GLOBAL) != 0, yglobal = (l->flags[j] & SYM_GLOBAL) != 0;
    if (xglobal != yglobal)
        return yglobal - xglobal;
    size_t xl = strlen(x->name), yl = strlen(y->name);
    if (xl != yl)
        return xl < yl ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sort, keep one symbol per address and clip overlaps so lookups are a
 * plain binary search. */
static int finish_symbols(sym_list *l, sprof_elf_symbol **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (l->n == 0)
        return 0;
    size_t *idx = malloc(l->n * sizeof *idx);
    sprof_elf_symbol *res = malloc(l->n * sizeof *res);
    if (!idx || !res) {
        free(idx);
        free(res);
        return -1;
    }
    for (size_t i = 0; i < l->n; i++)
        idx[i] = i;
    qsort_r(idx, l->n, sizeof *idx, sym_order, l);
    size_t n = 0;
    uint64_t func_end = 0; /* the furthest end of a function with a size so far */
    for (size_t i = 0; i < l->n; i++) {
        const sprof_elf_symbol *s = &l->v[idx[i]];
        if (n && res[n - 1].lo == s->lo)
            continue;
        int label = (l->flags[idx[i]] & SYM_LABEL) != 0;
        if (label && s->lo < func_end)
            continue; /* a label inside a function does not split it */
        if (!(l->flags[idx[i]] & SYM_SIZELESS) && s->hi > func_end)
            func_end = s->hi;
        res[n++] = *s;
    }
    free(idx);
    for (size_t i = 0; i < n; i++) {
        uint64_t next = i + 1 < n ? res[i + 1].lo : UINT64_MAX;
        if (res[i].hi > next)
            res[i].hi = next;
    }
    *out = res;
    *nout = n;
    return 0;
}

/* A relocation section that lies in the file, and the symbol table it
 * links to with that table's strings (in the file, ending in a NUL). */
static int rela_with_dynsym(const elf_view *v, const Elf64_Shdr *rela, const Elf64_Shdr **dynsym,
                            const Elf64_Shdr **strs)
{
    if (rela->sh_entsize != sizeof(Elf64_Rela) || rela->sh_link >= v->shnum ||
        !in_bounds(v->n, rela->sh_offset, rela->sh_size))
        return 0;
    const Elf64_Shdr *d = &v->sh[rela->sh_link];
    if (d->sh_entsize != sizeof(Elf64_Sym) || d->sh_link >= v->shnum || !in_bounds(v->n, d->sh_offset, d->sh_size))
        return 0;
    const Elf64_Shdr *t = &v->sh[d->sh_link];
    if (!in_bounds(v->n, t->sh_offset, t->sh_size) || t->sh_size == 0 || v->b[t->sh_offset + t->sh_size - 1] != '\0')
        return 0;
    *dynsym = d;
    *strs = t;
    return 1;
}

/* Names by address, sorted once and searched per stub (a hostile file's
 * sizes cost n log n, not stubs x symbols): GNU ifunc symbols by resolver
 * address (what an R_X86_64_IRELATIVE relocation's addend points at), and
 * GLOB_DAT relocations by GOT slot (collect_pltgot). */
typedef struct {
    uint64_t addr;
    uint32_t name;
} addr_name;
#define IFUNC_MAX 4096 /* glibc 2.36 has ~120 */

static int addr_name_cmp(const void *a, const void *b)
{
    uint64_t x = ((const addr_name *)a)->addr, y = ((const addr_name *)b)->addr;
    return x < y ? -1 : x > y;
}

static size_t collect_ifuncs(const elf_view *v, const Elf64_Shdr *dynsym, size_t str_size, addr_name *out,
                             size_t cap)
{
    size_t n = 0, nsyms = dynsym->sh_size / sizeof(Elf64_Sym);
    for (size_t i = 1; i < nsyms && n < cap; i++) {
        Elf64_Sym sym;
        memcpy(&sym, v->b + dynsym->sh_offset + i * sizeof sym, sizeof sym);
        if (ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC && sym.st_name > 0 && sym.st_name < str_size)
            out[n++] = (addr_name){sym.st_value, sym.st_name};
    }
    qsort(out, n, sizeof *out, addr_name_cmp);
    return n;
}

static const char *name_at(const addr_name *f, size_t n, const char *str, uint64_t addr)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f[mid].addr < addr) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && f[lo].addr == addr ? str + f[lo].name : NULL;
}

/* One stub: its address range and its name, or NULL to leave it unnamed;
 * tmp holds a name made up for it. */
typedef const char *(*stub_name_fn)(const void *ctx, size_t i, uint64_t *lo, uint64_t *hi, char tmp[40]);

/* Push "name@plt" for each of count stubs; the strings live in one buffer
 * (*names), sized by a first pass. */
static int push_stub_names(sym_list *out, char **names, size_t count, stub_name_fn stub, const void *ctx)
{
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        char *w = *names;
        for (size_t i = 0; i < count; i++) {
            uint64_t lo, hi;
            char tmp[40];
            const char *name = stub(ctx, i, &lo, &hi, tmp);
            if (!name)
                continue;
            size_t len = strlen(name) + sizeof "@plt";
            if (pass == 0) {
                total += len;
                continue;
            }
            snprintf(w, len, "%s@plt", name);
            if (sym_push(out, lo, hi, w, 0) != 0)
                return -1;
            w += len;
        }
        if (pass == 0 && (total == 0 || !(*names = malloc(total))))
            return total == 0 ? 0 : -1;
    }
    return 0;
}

/* What a stub's relocation and symbol are read from. */
typedef struct {
    const elf_view *v;
    const Elf64_Shdr *rela, *dynsym;
    const char *str;
    size_t str_size, nsyms;
    const addr_name *names; /* ifuncs by resolver, or GLOB_DAT slots by address */
    size_t nnames;
    uint64_t base;          /* the first stub's address */
    const Elf64_Shdr *got;  /* .plt.got (collect_pltgot) */
    size_t entry;           /* its entries' size */
} stub_ctx;

/* The i-th stub of .plt.sec, or of .plt after its 16-byte header: the i-th
 * relocation of .rela.plt. */
static const char *plt_stub(const void *ctx, size_t i, uint64_t *lo, uint64_t *hi, char tmp[40])
{
    const stub_ctx *c = ctx;
    Elf64_Rela r;
    memcpy(&r, c->v->b + c->rela->sh_offset + i * sizeof r, sizeof r);
    *lo = c->base + 16 * i;
    *hi = *lo + 16;
    if (ELF64_R_TYPE(r.r_info) == R_X86_64_IRELATIVE) {
        const char *name = name_at(c->names, c->nnames, c->str, (uint64_t)r.r_addend);
        if (name)
            return name;
        snprintf(tmp, 40, "*ABS*+0x%llx", (unsigned long long)r.r_addend);
        return tmp;
    }
    size_t si = ELF64_R_SYM(r.r_info);
    if (ELF64_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT || si == 0 || si >= c->nsyms)
        return NULL;
    Elf64_Sym sym;
    memcpy(&sym, c->v->b + c->dynsym->sh_offset + si * sizeof sym, sizeof sym);
    return sym.st_name < c->str_size ? c->str + sym.st_name : NULL;
}

/* PLT stubs have no symbols; name them "sym@plt" as binutils does: the
 * i-th R_X86_64_JUMP_SLOT relocation of .rela.plt is the i-th stub of
 * .plt.sec (IBT layout), or of .plt after its 16-byte header. A library's
 * calls to its own ifuncs (glibc's vfprintf calling memcpy, strlen) go
 * through stubs of R_X86_64_IRELATIVE relocations: named after the ifunc
 * ("memcpy@plt"), or "*ABS*+0xADDEND@plt" as objdump does. Unnamed, such
 * a stub had no CFI either (the "@plt" rule in profile_traces.c), and a
 * sample there lost the stack above the stub's caller. */
static int collect_plt_stubs(const elf_view *v, sprof_elf_module *m, sym_list *out, addr_name *ifuncs)
{
    const Elf64_Shdr *rela = NULL, *plt = NULL, *plt_sec = NULL;
    for (size_t i = 0; i < v->shnum; i++) {
        const char *name = section_name(v, &v->sh[i]);
        if (strcmp(name, ".rela.plt") == 0 && v->sh[i].sh_type == SHT_RELA)
            rela = &v->sh[i];
        else if (strcmp(name, ".plt") == 0)
            plt = &v->sh[i];
        else if (strcmp(name, ".plt.sec") == 0)
            plt_sec = &v->sh[i];
    }
    /* its 16-byte header (push GOT[1]; jmp *GOT[2]: every lazy binding
     * passes there) is ".plt", as perf names it; so are, with .plt.sec,
     * the lazy entries after it (push n; jmp to the header) */
    if (plt && plt->sh_type == SHT_PROGBITS && plt->sh_size >= 16) {
        uint64_t hi = plt_sec ? plt->sh_addr + plt->sh_size : plt->sh_addr + 16;
        if (sym_push(out, plt->sh_addr, hi, ".plt", 0) != 0)
            return -1;
    }
    const Elf64_Shdr *dynsym, *strs;
    if (!rela || !plt || !rela_with_dynsym(v, rela, &dynsym, &strs))
        return 0;
    stub_ctx c = { .v = v, .rela = rela, .dynsym = dynsym, .str = (const char *)v->b + strs->sh_offset,
                   .str_size = strs->sh_size, .nsyms = dynsym->sh_size / sizeof(Elf64_Sym), .names = ifuncs,
                   .base = plt_sec ? plt_sec->sh_addr : plt->sh_addr + 16 };
    c.nnames = collect_ifuncs(v, dynsym, strs->sh_size, ifuncs, IFUNC_MAX);
    uint64_t end = plt_sec ? plt_sec->sh_addr + plt_sec->sh_size : plt->sh_addr + plt->sh_size;
    size_t count = rela->sh_size / sizeof(Elf64_Rela), fit = end >= c.base ? (end - c.base) / 16 : 0;
    return push_stub_names(out, &m->plt_names, count < fit ? count : fit, plt_stub, &c);
}

/* collect_plt_stubs, with the memory of its ifunc table */
static int collect_plt(const elf_view *v, sprof_elf_module *m, sym_list *out)
{
    addr_name *ifuncs = malloc(IFUNC_MAX * sizeof *ifuncs);
    if (!ifuncs)
        return -1;
    int rc = collect_plt_stubs(v, m, out, ifuncs);
    free(ifuncs);
    return rc;
}

/* The e-th entry of .plt.got: "jmp *rel32(%rip)" (ff 25, after endbr64 and
 * a bnd prefix with IBT) through a GOT slot; named after the GLOB_DAT
 * relocation that fills the slot. */
static const char *pltgot_stub(const void *ctx, size_t e, uint64_t *lo, uint64_t *hi, char tmp[40])
{
    (void)tmp;
    const stub_ctx *c = ctx;
    const uint8_t *p = c->v->b + c->got->sh_offset + e * c->entry;
    size_t at = 0;
    while (at + 6 <= c->entry && !(p[at] == 0xff && p[at + 1] == 0x25))
        at++;
    if (at + 6 > c->entry)
        return NULL;
    int32_t rel;
    memcpy(&rel, p + at + 2, 4);
    *lo = c->got->sh_addr + e * c->entry;
    *hi = *lo + c->entry;
    return name_at(c->names, c->nnames, c->str, *lo + at + 6 + (uint64_t)(int64_t)rel);
}

/* .plt.got's stubs (functions whose address is also taken, or calls
 * bound at load time: libc's own free@plt and malloc@plt) jump through a
 * GOT slot that an R_X86_64_GLOB_DAT relocation in .rela.dyn fills: each
 * 8- or 16-byte entry holds "jmp *rel32(%rip)" (ff 25, after endbr64 and
 * a bnd prefix with IBT); named "sym@plt" as objdump does. */
static int collect_pltgot(const elf_view *v, sprof_elf_module *m, sym_list *out)
{
    const Elf64_Shdr *got = NULL, *rela = NULL;
    for (size_t i = 0; i < v->shnum; i++) {
        const char *name = section_name(v, &v->sh[i]);
        if (strcmp(name, ".plt.got") == 0)
            got = &v->sh[i];
        else if (strcmp(name, ".rela.dyn") == 0 && v->sh[i].sh_type == SHT_RELA)
            rela = &v->sh[i];
    }
    const Elf64_Shdr *dynsym, *strs;
    if (!got || !rela || got->sh_type != SHT_PROGBITS || !in_bounds(v->n, got->sh_offset, got->sh_size) ||
        !rela_with_dynsym(v, rela, &dynsym, &strs))
        return 0;
    const size_t entry = got->sh_entsize == 16 ? 16 : 8, nentries = got->sh_size / entry;
    const size_t nrela = rela->sh_size / sizeof(Elf64_Rela), nsyms = dynsym->sh_size / sizeof(Elf64_Sym);
    if (nentries == 0 || nentries > 4096)
        return 0;
    /* the GLOB_DAT slots, sorted: a hostile .rela.dyn costs n log n */
    addr_name *slots = malloc((nrela ? nrela : 1) * sizeof *slots);
    if (!slots)
        return -1;
    size_t nslots = 0;
    for (size_t i = 0; i < nrela; i++) {
        Elf64_Rela r;
        memcpy(&r, v->b + rela->sh_offset + i * sizeof r, sizeof r);
        size_t si = ELF64_R_SYM(r.r_info);
        if (ELF64_R_TYPE(r.r_info) != R_X86_64_GLOB_DAT || si == 0 || si >= nsyms)
            continue;
        Elf64_Sym sym;
        memcpy(&sym, v->b + dynsym->sh_offset + si * sizeof sym, sizeof sym);
        if (sym.st_name > 0 && sym.st_name < strs->sh_size)
            slots[nslots++] = (addr_name){r.r_offset, sym.st_name};
    }
    qsort(slots, nslots, sizeof *slots, addr_name_cmp);
    stub_ctx c = { .v = v, .str = (const char *)v->b + strs->sh_offset, .names = slots, .nnames = nslots,
                   .got = got, .entry = entry };
    int rc = push_stub_names(out, &m->pltgot_names, nentries, pltgot_stub, &c);
    free(slots);
    return rc;
}

/* Look for the separate debug file of this build-id and take its .symtab. */
static void load_debug_symbols(sprof_elf_module *m, sym_list *syms)
{
    if (m->build_id_len < 2)
        return;
    char path[128];
    int off = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", m->build_id[0]);
    for (uint32_t i = 1; i < m->build_id_len; i++)
        off += snprintf(path + off, sizeof path - (size_t)off, "%02x", m->build_id[i]);
    snprintf(path + off, sizeof path - (size_t)off, ".debug");
    char err[256];
    size_t size = 0;
    void *map = map_file(path, &size, err, sizeof err);
    if (!map)
        return;
    elf_view v;
    uint8_t id[32];
    uint32_t idlen = 0;
    if (view_open(&v, map, size, path, err, sizeof err) == 0) {
        read_build_id(&v, id, &idlen);
        if (idlen == m->build_id_len && memcmp(id, m->build_id, idlen) == 0) {
            size_t before = syms->n;
            if (collect_symbols(&v, SHT_SYMTAB, syms, NULL) == 0 && syms->n > before) {
                m->debug_map = map;
                m->debug_map_size = size;
                return;
            }
            syms->n = before;
        }
    }
    munmap(map, size);
}

static sprof_elf_module *parse(sprof_elf_module *m, const char *path, char *err, size_t errlen);

sprof_elf_module *sprof_elf_open(const char *path, char *err, size_t errlen)
{
    sprof_elf_module *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    m->map = map_file(path, &m->map_size, err, errlen);
    if (!m->map) {
        sprof_elf_close(m);
        return NULL;
    }
    return parse(m, path, err, errlen);
}

sprof_elf_module *sprof_elf_open_mem(const void *data, size_t size, const char *name, char *err,
                                     size_t errlen)
{
    sprof_elf_module *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(name))) {
        free(m);
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    m->map = (void *)data;
    m->map_size = size;
    m->borrowed = 1;
    return parse(m, name, err, errlen);
}

static sprof_elf_module *parse(sprof_elf_module *m, const char *path, char *err, size_t errlen)
{
    elf_view v;
    if (view_open(&v, m->map, m->map_size, path, err, errlen) != 0) {
        sprof_elf_close(m);
        return NULL;
    }
    read_build_id(&v, m->build_id, &m->build_id_len);

    const Elf64_Phdr *ph = v.eh->e_phnum ? (const Elf64_Phdr *)(v.b + v.eh->e_phoff) : NULL;
    m->segments = calloc(v.eh->e_phnum ? v.eh->e_phnum : 1, sizeof *m->segments);
    if (!m->segments) {
        snprintf(err, errlen, "%s: out of memory", path);
        sprof_elf_close(m);
        return NULL;
    }
    for (size_t i = 0; v.eh->e_phnum && i < v.eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        m->segments[m->nsegments++] = (sprof_segment){ ph[i].p_vaddr, ph[i].p_memsz,
                                                       ph[i].p_offset, ph[i].p_filesz, ph[i].p_flags };
    }

    for (size_t i = 0; i < v.shnum; i++) {
        const Elf64_Shdr *s = &v.sh[i];
        if (s->sh_type == SHT_PROGBITS && strcmp(section_name(&v, s), ".eh_frame") == 0 &&
            in_bounds(v.n, s->sh_offset, s->sh_size)) {
            m->eh_frame = v.b + s->sh_offset;
            m->eh_frame_size = s->sh_size;
            m->eh_frame_vaddr = s->sh_addr;
        }
        if (s->sh_type == SHT_PROGBITS && s->sh_size > 0 && strcmp(section_name(&v, s), ".debug_info") == 0)
            m->has_debug_info = 1;
    }

    sym_list syms = { 0 };
    int rc = collect_symbols(&v, SHT_SYMTAB, &syms, &m->links_sprof_runtime);
    if (rc == 0 && syms.n == 0)
        load_debug_symbols(m, &syms);
    if (rc == 0)
        rc = collect_symbols(&v, SHT_DYNSYM, &syms, &m->links_sprof_runtime);
    if (rc == 0)
        rc = collect_plt(&v, m, &syms);
    if (rc == 0)
        rc = collect_pltgot(&v, m, &syms);
    if (rc == 0)
        rc = finish_symbols(&syms, &m->symbols, &m->nsymbols);
    free(syms.v);
    free(syms.flags);
    if (rc != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
        sprof_elf_close(m);
        return NULL;
    }
    return m;
}

void sprof_elf_close(sprof_elf_module *m)
{
    if (!m)
        return;
    if (m->map && !m->borrowed)
        munmap(m->map, m->map_size);
    if (m->debug_map)
        munmap(m->debug_map, m->debug_map_size);
    free(m->segments);
    free(m->symbols);
    free(m->cfi);
    free(m->plt_names);
    free(m->pltgot_names);
    free(m->path);
    free(m);
}

int sprof_elf_offset_to_vaddr(const sprof_elf_module *m, uint64_t off, uint64_t *vaddr)
{
    for (size_t i = 0; i < m->nsegments; i++) {
        const sprof_segment *s = &m->segments[i];
        if (off >= s->file_offset && off - s->file_offset < s->filesz) {
            *vaddr = s->vaddr + (off - s->file_offset);
            return 0;
        }
    }
    return -1;
}

const sprof_elf_symbol *sprof_elf_symbol_at(const sprof_elf_module *m, uint64_t vaddr)
{
    size_t lo = 0, hi = m->nsymbols;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->symbols[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const sprof_elf_symbol *s = &m->symbols[lo - 1];
    return vaddr < s->hi ? s : NULL;
}

int sprof_elf_cfi_lookup(sprof_elf_module *m, uint64_t vaddr, sprof_cfi_row *row)
{
    if (m->cfi_state == 0) {
        char err[256];
        m->cfi_state = -1;
        if (m->eh_frame && sprof_cfi_compile(m->eh_frame, m->eh_frame_size, m->eh_frame_vaddr, 0,
                                             &m->cfi, &m->ncfi, err, sizeof err) == 0)
            m->cfi_state = 1;
    }
    if (m->cfi_state != 1)
        return -1;
    const sprof_cfi_row *r = sprof_cfi_find(m->cfi, m->ncfi, vaddr);
    if (!r)
        return -1;
    *row = *r;
    return 0;
}
