/* ELF input for sprof-symmap (libelf). See elf_input.h. */
#include "elf_input.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sprof/cfi.h"

typedef struct raw_sym {
    const char *name;
    uint64_t lo, size;
    int shndx;
    int rank; /* lower is a better name for an alias group */
} raw_sym;

static int cmp_raw(const void *a, const void *b)
{
    const raw_sym *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

static int leading_underscores(const char *s)
{
    int n = 0;
    while (s[n] == '_')
        n++;
    return n;
}

/* Alias preference, deterministic: .symtab over .dynsym, fewer leading
 * underscores, GLOBAL over WEAK over LOCAL, then shorter, then strcmp. */
static int alias_rank(const char *name, int bind, int from_dynsym)
{
    int b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
    int u = leading_underscores(name);
    return from_dynsym * 1000000 + (u > 9 ? 9 : u) * 100000 + b * 10000 +
           (int)(strlen(name) > 9999 ? 9999 : strlen(name));
}

typedef struct sym_vec {
    raw_sym *v;
    size_t n, cap;
} sym_vec;

static int push_sym(sym_vec *s, raw_sym r)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        raw_sym *nv = realloc(s->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = r;
    return 0;
}

static int collect_symbols(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, int from_dynsym, sym_vec *out,
                           size_t *defined_funcs)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return 0;
    size_t count = sh->sh_size / sh->sh_entsize;
    for (size_t i = 0; i < count; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym))
            break;
        int type = GELF_ST_TYPE(sym.st_info);
        if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
            sym.st_shndx >= SHN_LORESERVE || sym.st_value == 0)
            continue;
        const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        raw_sym r = { name, sym.st_value, sym.st_size, sym.st_shndx,
                      alias_rank(name, GELF_ST_BIND(sym.st_info), from_dynsym) };
        if (push_sym(out, r) < 0)
            return -1;
        (*defined_funcs)++;
    }
    return 0;
}

/* The end of the section `shndx` (for zero-size symbols). */
static uint64_t section_end(Elf *elf, int shndx)
{
    Elf_Scn *scn = elf_getscn(elf, (size_t)shndx);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh))
        return 0;
    return sh.sh_addr + sh.sh_size;
}

static int build_funcs(Elf *elf, sym_vec *syms, sprof_elf_info *out)
{
    if (syms->n)
        qsort(syms->v, syms->n, sizeof *syms->v, cmp_raw);
    out->funcs = calloc(syms->n ? syms->n : 1, sizeof *out->funcs);
    if (!out->funcs)
        return -1;
    for (size_t i = 0; i < syms->n; i++) {
        raw_sym *r = &syms->v[i];
        uint64_t size = r->size;
        if (size == 0) { /* hand-written asm (_start...): extend to the next symbol */
            uint64_t end = section_end(elf, r->shndx);
            for (size_t j = i + 1; j < syms->n; j++)
                if (syms->v[j].lo > r->lo) {
                    if (syms->v[j].lo < end || end == 0)
                        end = syms->v[j].lo;
                    break;
                }
            if (end <= r->lo)
                continue;
            size = end - r->lo;
        }
        uint64_t hi = r->lo + size;
        if (hi < r->lo)
            continue;
        /* Aliases: same [lo, hi) keeps the best-ranked name (sorted first). */
        if (out->nfuncs && out->funcs[out->nfuncs - 1].lo == r->lo &&
            out->funcs[out->nfuncs - 1].hi == hi) {
            sprof_elf_func *prev = &out->funcs[out->nfuncs - 1];
            int seen = strcmp(prev->name, r->name) == 0; /* .symtab + .dynsym */
            for (size_t k = 0; k < prev->naliases && !seen; k++)
                seen = strcmp(prev->aliases[k], r->name) == 0;
            if (seen)
                continue;
            char **na = realloc(prev->aliases, (prev->naliases + 1) * sizeof *na);
            if (!na)
                return -1;
            prev->aliases = na;
            if (!(na[prev->naliases] = strdup(r->name)))
                return -1;
            prev->naliases++;
            continue;
        }
        char *name = strdup(r->name);
        if (!name)
            return -1;
        out->funcs[out->nfuncs++] = (sprof_elf_func){ name, r->lo, hi, NULL, 0 };
    }
    return 0;
}

/* libdwarf 20210528 frees twice on some malformed .debug_rnglists /
 * .debug_loclists unit headers (found by mutating the test fixture), so
 * their headers are checked here before libdwarf ever sees them. DWARF 5
 * section 7.28/7.29: unit_length (4, or 0xffffffff + 8), version 2 bytes = 5,
 * address_size 1 (4 or 8), segment_selector_size 1 (0), offset_entry_count 4. */
static const char *check_list_section(const uint8_t *p, size_t size)
{
    size_t off = 0;
    while (off < size) {
        if (size - off < 4)
            return "truncated unit header";
        uint64_t len = (uint64_t)p[off] | (uint64_t)p[off + 1] << 8 | (uint64_t)p[off + 2] << 16 |
                       (uint64_t)p[off + 3] << 24;
        size_t hdr = 4, offsize = 4;
        if (len == 0xffffffffu) {
            if (size - off < 12)
                return "truncated unit header";
            len = 0;
            for (int i = 7; i >= 0; i--)
                len = len << 8 | p[off + 4 + (size_t)i];
            hdr = 12;
            offsize = 8;
        } else if (len >= 0xfffffff0u) {
            return "reserved unit length";
        }
        if (len < 8 || len > size - off - hdr)
            return "unit length outside the section";
        const uint8_t *u = p + off + hdr;
        unsigned version = (unsigned)u[0] | (unsigned)u[1] << 8;
        uint64_t count = (uint64_t)u[4] | (uint64_t)u[5] << 8 | (uint64_t)u[6] << 16 | (uint64_t)u[7] << 24;
        if (version != 5 || (u[2] != 4 && u[2] != 8) || u[3] != 0)
            return "bad unit header";
        if (count > (len - 8) / offsize)
            return "offset table outside the unit";
        off += hdr + (size_t)len;
    }
    return NULL;
}

static void check_dwarf_sections(Elf *elf, size_t shstrndx, sprof_elf_info *out)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn)) && !out->dwarf_problem[0]) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!name || (strcmp(name, ".debug_rnglists") != 0 && strcmp(name, ".debug_loclists") != 0))
            continue;
        if (sh.sh_flags & SHF_COMPRESSED) {
            snprintf(out->dwarf_problem, sizeof out->dwarf_problem, "%s is compressed", name);
            continue;
        }
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf)
            continue;
        const char *why = check_list_section(data->d_buf, data->d_size);
        if (why)
            snprintf(out->dwarf_problem, sizeof out->dwarf_problem, "%s: %s", name, why);
    }
}

static void read_build_id(Elf *elf, sprof_elf_info *out)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data)
            continue;
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
                nh.n_descsz <= sizeof out->build_id) {
                memcpy(out->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
                out->build_id_len = nh.n_descsz;
                return;
            }
        }
    }
}

static int read_segments(Elf *elf, sprof_elf_info *out)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return 0;
    out->segs = calloc(n ? n : 1, sizeof *out->segs);
    if (!out->segs)
        return -1;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
            continue;
        out->segs[out->nsegs++] = (sprof_segment){ ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz,
                                                   ph.p_flags };
    }
    return 0;
}

static int cmp_cfi(const void *a, const void *b)
{
    const sprof_cfi_row *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* .eh_frame rows, plus .debug_frame rows for addresses .eh_frame leaves uncovered. */
static void read_cfi(const char *path, Elf *elf, size_t shstrndx, int quiet, sprof_elf_info *out)
{
    sprof_cfi_row *eh = NULL, *dbg = NULL;
    size_t neh = 0, ndbg = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!name)
            continue;
        int is_debug = strcmp(name, ".debug_frame") == 0;
        if (!is_debug && strcmp(name, ".eh_frame") != 0)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf || data->d_size == 0)
            continue;
        char cerr[256];
        sprof_cfi_row **rows = is_debug ? &dbg : &eh;
        size_t *nrows = is_debug ? &ndbg : &neh;
        if (*rows)
            continue;
        if (sprof_cfi_compile(data->d_buf, data->d_size, sh.sh_addr, is_debug, rows, nrows, cerr,
                              sizeof cerr) != 0) {
            if (!quiet)
                fprintf(stderr, "sprof-symmap: warning: %s: %s unreadable, no CFI from it: %s\n",
                        path, name, cerr);
            *rows = NULL;
            *nrows = 0;
        }
    }
    size_t total = neh + ndbg;
    if (!total) {
        free(eh);
        free(dbg);
        return;
    }
    sprof_cfi_row *all = malloc(total * sizeof *all);
    if (!all) {
        free(eh);
        free(dbg);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < neh; i++)
        all[n++] = eh[i];
    for (size_t i = 0; i < ndbg; i++)
        if (!sprof_cfi_find(eh, neh, dbg[i].lo) && !sprof_cfi_find(eh, neh, dbg[i].hi - 1))
            all[n++] = dbg[i];
    if (ndbg)
        qsort(all, n, sizeof *all, cmp_cfi);
    free(eh);
    free(dbg);
    out->cfi = all;
    out->ncfi = n;
}

int sprof_elf_read(const char *path, int quiet, sprof_elf_info *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, errlen, "%s: libelf initialisation failed", path);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    sym_vec syms = { 0 };
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    size_t shstrndx;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        snprintf(err, errlen, "%s: not an ELF file", path);
        goto out;
    }
    if (gelf_getclass(elf) != ELFCLASS64) {
        snprintf(err, errlen, "%s: not a 64-bit ELF file", path);
        goto out;
    }
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
        snprintf(err, errlen, "%s: not an executable or shared object (ELF type %u)", path,
                 (unsigned)eh.e_type);
        goto out;
    }
    if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
        snprintf(err, errlen, "%s: corrupt ELF section header table", path);
        goto out;
    }
    out->is_pie = eh.e_type == ET_DYN;

    size_t symtab_funcs = 0, dynsym_funcs = 0;
    int has_dynsym = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name && strcmp(name, ".debug_info") == 0 && sh.sh_type != SHT_NOBITS && sh.sh_size)
            out->has_debug_info = 1;
        if (sh.sh_type == SHT_SYMTAB) {
            out->has_symtab = 1;
            if (collect_symbols(elf, scn, &sh, 0, &syms, &symtab_funcs) < 0)
                goto oom;
        }
    }
    /* .dynsym only adds what .symtab lacks: read it always, dedupe by rank. */
    scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM) {
            has_dynsym = 1;
            if (collect_symbols(elf, scn, &sh, 1, &syms, &dynsym_funcs) < 0)
                goto oom;
        }
    }
    if (!out->has_symtab && !out->has_debug_info) {
        if (dynsym_funcs == 0) {
            snprintf(err, errlen, "%s: stripped binary: no symbol table; rebuild without -s", path);
            goto out;
        }
        out->dynsym_only = 1;
        /* even under --quiet: sprof-cc passes it on, it is about the binary the user built */
        fprintf(stderr,
                    "sprof-symmap: warning: %s: stripped binary: only the %zu exported functions of"
                    " .dynsym are named; rebuild without -s\n",
                    path, dynsym_funcs);
    }
    (void)has_dynsym;
    if (build_funcs(elf, &syms, out) < 0 || read_segments(elf, out) < 0)
        goto oom;
    read_build_id(elf, out);
    check_dwarf_sections(elf, shstrndx, out);
    if (eh.e_machine == EM_X86_64)
        read_cfi(path, elf, shstrndx, quiet, out);
    else if (!quiet)
        fprintf(stderr, "sprof-symmap: warning: %s: not x86-64, no CFI recorded\n", path);
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "%s: out of memory", path);
out:
    free(syms.v);
    if (elf)
        elf_end(elf);
    close(fd);
    if (rc != 0)
        sprof_elf_free(out);
    return rc;
}

void sprof_elf_free(sprof_elf_info *info)
{
    for (size_t i = 0; i < info->nfuncs; i++) {
        free(info->funcs[i].name);
        for (size_t k = 0; k < info->funcs[i].naliases; k++)
            free(info->funcs[i].aliases[k]);
        free(info->funcs[i].aliases);
    }
    free(info->funcs);
    free(info->segs);
    free(info->cfi);
    memset(info, 0, sizeof *info);
}

long sprof_elf_find_func(const sprof_elf_info *info, uint64_t addr)
{
    size_t lo = 0, hi = info->nfuncs;
    while (lo < hi) { /* first function with lo > addr */
        size_t mid = lo + (hi - lo) / 2;
        if (info->funcs[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1;
    /* Overlaps are rare and shallow: look back a few entries for the smallest cover. */
    for (size_t k = lo, steps = 0; k > 0 && steps < 64; k--, steps++) {
        const sprof_elf_func *f = &info->funcs[k - 1];
        if (addr < f->hi &&
            (best < 0 || f->hi - f->lo < info->funcs[best].hi - info->funcs[best].lo))
            best = (long)(k - 1);
    }
    return best;
}
