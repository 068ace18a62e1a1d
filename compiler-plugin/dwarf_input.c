/* DWARF input for sprof-symmap through libdwarf's 20210528 API. Handles
 * DWARF 4 (.debug_ranges, 1-based file indexes) and DWARF 5 (.debug_rnglists,
 * 0-based file indexes, strx/line_strp/addrx forms via libdwarf). */
#include "dwarf_input.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

typedef struct origin_info {
    Dwarf_Off off; /* key: global .debug_info offset */
    const char *name;
    const char *linkage; /* DW_AT_linkage_name (C++, Rust), else NULL */
    const char *decl_file;
    uint32_t decl_line;
    UT_hash_handle hh;
} origin_info;

typedef struct walk_ctx {
    Dwarf_Debug dbg;
    unsigned version;
    uint64_t cu_base;
    const char **files; /* file table, indexed by (index - file_base) */
    Dwarf_Signed file_base, nfiles;
    sprof_strpool *pool;
    sprof_dwarf_info *out;
    origin_info *origins;
    char *err;
    size_t errlen;
    int failed;
    int gnu_v5_file0; /* see read_lines */
} walk_ctx;

#define GROW(arr, n, cap)                                                              \
    ((n) < (cap) ? 0                                                                   \
                 : ((cap) = (cap) ? (cap) * 2 : 256,                                   \
                    (arr = reallocarray_or_free(arr, (cap), sizeof *(arr))) ? 0 : -1))

static void *reallocarray_or_free(void *p, size_t n, size_t size)
{
    void *q = (n && size > SIZE_MAX / n) ? NULL : realloc(p, n * size);
    if (!q)
        free(p);
    return q;
}

static int fail_dw(walk_ctx *c, Dwarf_Error e, const char *what)
{
    if (!c->failed)
        snprintf(c->err, c->errlen, "%s: %s", what, e ? dwarf_errmsg(e) : "error");
    if (e)
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
    c->failed = 1;
    return -1;
}

static int fail_oom(walk_ctx *c)
{
    if (!c->failed)
        snprintf(c->err, c->errlen, "out of memory");
    c->failed = 1;
    return -1;
}

static const char *intern(walk_ctx *c, const char *s)
{
    const char *r = sprof_strpool_intern(c->pool, s);
    if (!r)
        fail_oom(c);
    return r;
}

static const char *file_by_index(walk_ctx *c, Dwarf_Unsigned idx)
{
    if ((Dwarf_Signed)idx < c->file_base || (Dwarf_Signed)idx - c->file_base >= c->nfiles)
        return NULL;
    return c->files[idx - (Dwarf_Unsigned)c->file_base];
}

static const char *file_or_unknown(const char *f)
{
    return f ? f : "";
}

static int udata_attr(walk_ctx *c, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *v)
{
    Dwarf_Attribute attr;
    Dwarf_Error e = NULL;
    int res = dwarf_attr(die, at, &attr, &e);
    if (res == DW_DLV_ERROR) {
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        return 0;
    }
    if (res != DW_DLV_OK)
        return 0;
    /* libdwarf 20210528's formudata rejects DW_FORM_implicit_const (gcc 12
     * uses it for decl_file/call_file); formsdata reads it. */
    Dwarf_Half form = 0;
    if (dwarf_whatform(attr, &form, &e) == DW_DLV_OK && form == DW_FORM_implicit_const) {
        Dwarf_Signed sv = 0;
        res = dwarf_formsdata(attr, &sv, &e);
        if (res == DW_DLV_OK && sv < 0)
            res = DW_DLV_NO_ENTRY;
        *v = (Dwarf_Unsigned)sv;
    } else {
        if (e) {
            dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
            e = NULL;
        }
        res = dwarf_formudata(attr, v, &e);
    }
    if (res == DW_DLV_ERROR)
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
    dwarf_dealloc(c->dbg, attr, DW_DLA_ATTR);
    return res == DW_DLV_OK;
}

static int ref_attr(walk_ctx *c, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *off)
{
    Dwarf_Attribute attr;
    Dwarf_Error e = NULL;
    int res = dwarf_attr(die, at, &attr, &e);
    if (res == DW_DLV_ERROR) {
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        return 0;
    }
    if (res != DW_DLV_OK)
        return 0;
    res = dwarf_global_formref(attr, off, &e);
    if (res == DW_DLV_ERROR)
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
    dwarf_dealloc(c->dbg, attr, DW_DLA_ATTR);
    return res == DW_DLV_OK;
}

/* DW_AT_linkage_name (DW_AT_MIPS_linkage_name before DWARF 4) of a DIE,
 * interned, or NULL: the mangled symbol of C++ and Rust functions, whose
 * DW_AT_name is only the unqualified name ("push_back"). C has none. */
static const char *linkage_name(walk_ctx *c, Dwarf_Die die)
{
    static const Dwarf_Half ats[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name };
    for (size_t i = 0; i < 2; i++) {
        Dwarf_Attribute attr;
        Dwarf_Error e = NULL;
        int res = dwarf_attr(die, ats[i], &attr, &e);
        if (res == DW_DLV_ERROR)
            dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        if (res != DW_DLV_OK)
            continue;
        char *s = NULL;
        res = dwarf_formstring(attr, &s, &e);
        if (res == DW_DLV_ERROR)
            dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        dwarf_dealloc(c->dbg, attr, DW_DLA_ATTR);
        if (res == DW_DLV_OK && s && s[0])
            return intern(c, s);
    }
    return NULL;
}

/* Name, linkage name and declaration of a DIE, following
 * abstract_origin/specification. */
static void resolve_origin(walk_ctx *c, Dwarf_Die die, int depth, const char **name,
                           const char **linkage, const char **decl_file, uint32_t *decl_line)
{
    char *n = NULL;
    Dwarf_Error e = NULL;
    int res = dwarf_diename(die, &n, &e);
    if (res == DW_DLV_ERROR)
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
    if (res == DW_DLV_OK && n && !*name)
        *name = intern(c, n);
    if (!*linkage)
        *linkage = linkage_name(c, die);
    Dwarf_Unsigned v;
    if (!*decl_line && udata_attr(c, die, DW_AT_decl_line, &v) && v <= UINT32_MAX)
        *decl_line = (uint32_t)v;
    if (!*decl_file && udata_attr(c, die, DW_AT_decl_file, &v))
        *decl_file = file_by_index(c, v);
    if ((*name && *decl_line && *decl_file && *linkage) || depth >= 8)
        return;
    static const Dwarf_Half refs[] = { DW_AT_abstract_origin, DW_AT_specification };
    for (size_t i = 0; i < 2; i++) {
        Dwarf_Off off;
        if (!ref_attr(c, die, refs[i], &off))
            continue;
        origin_info *o;
        HASH_FIND(hh, c->origins, &off, sizeof off, o);
        if (!o) {
            Dwarf_Die od;
            res = dwarf_offdie_b(c->dbg, off, 1, &od, &e);
            if (res == DW_DLV_ERROR)
                dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
            if (res != DW_DLV_OK)
                continue;
            o = calloc(1, sizeof *o);
            if (!o) {
                dwarf_dealloc(c->dbg, od, DW_DLA_DIE);
                fail_oom(c);
                return;
            }
            o->off = off;
            resolve_origin(c, od, depth + 1, &o->name, &o->linkage, &o->decl_file, &o->decl_line);
            dwarf_dealloc(c->dbg, od, DW_DLA_DIE);
            HASH_ADD(hh, c->origins, off, sizeof o->off, o);
        }
        if (!*name)
            *name = o->name;
        if (!*linkage)
            *linkage = o->linkage;
        if (!*decl_file)
            *decl_file = o->decl_file;
        if (!*decl_line)
            *decl_line = o->decl_line;
        break;
    }
}

static int push_range(walk_ctx *c, uint64_t lo, uint64_t hi)
{
    /* Code discarded at link time keeps tombstone addresses (0, -1, -2). */
    if (hi <= lo || lo == 0 || lo >= UINT64_MAX - 1)
        return 0;
    sprof_dwarf_info *o = c->out;
    if (GROW(o->ranges, o->nranges, o->ranges_cap) < 0)
        return fail_oom(c);
    o->ranges[o->nranges++] = (sprof_range){ lo, hi };
    return 0;
}

static int rnglists_ranges(walk_ctx *c, Dwarf_Attribute attr, Dwarf_Half form)
{
    Dwarf_Unsigned value = 0;
    Dwarf_Error e = NULL;
    int res;
    if (form == DW_FORM_rnglistx) {
        res = dwarf_formudata(attr, &value, &e);
    } else {
        Dwarf_Off off = 0;
        res = dwarf_global_formref(attr, &off, &e);
        value = off;
    }
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "DW_AT_ranges");
    if (res != DW_DLV_OK)
        return 0;
    Dwarf_Rnglists_Head head = NULL;
    Dwarf_Unsigned count = 0, global_off = 0;
    res = dwarf_rnglists_get_rle_head(attr, form, value, &head, &count, &global_off, &e);
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "rnglists");
    if (res != DW_DLV_OK)
        return 0;
    for (Dwarf_Unsigned i = 0; i < count && !c->failed; i++) {
        unsigned len = 0, code = 0;
        Dwarf_Unsigned raw1, raw2, lo, hi;
        Dwarf_Bool unavailable = 0;
        res = dwarf_get_rnglists_entry_fields_a(head, i, &len, &code, &raw1, &raw2, &unavailable,
                                                &lo, &hi, &e);
        if (res == DW_DLV_ERROR) {
            dwarf_dealloc_rnglists_head(head);
            return fail_dw(c, e, "rnglists entry");
        }
        if (res != DW_DLV_OK || unavailable)
            continue;
        if (code == DW_RLE_end_of_list)
            break;
        if (code == DW_RLE_base_address || code == DW_RLE_base_addressx)
            continue;
        push_range(c, lo, hi);
    }
    dwarf_dealloc_rnglists_head(head);
    return c->failed ? -1 : 0;
}

static int debug_ranges(walk_ctx *c, Dwarf_Die die, Dwarf_Attribute attr)
{
    Dwarf_Off off = 0, real = 0;
    Dwarf_Error e = NULL;
    int res = dwarf_global_formref(attr, &off, &e);
    if (res == DW_DLV_ERROR) {
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        Dwarf_Unsigned u = 0;
        res = dwarf_formudata(attr, &u, &e);
        if (res == DW_DLV_ERROR)
            return fail_dw(c, e, "DW_AT_ranges");
        off = u;
    }
    if (res != DW_DLV_OK)
        return 0;
    Dwarf_Ranges *buf = NULL;
    Dwarf_Signed n = 0;
    Dwarf_Unsigned bytes = 0;
    res = dwarf_get_ranges_b(c->dbg, off, die, &real, &buf, &n, &bytes, &e);
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "debug_ranges");
    if (res != DW_DLV_OK)
        return 0;
    uint64_t base = c->cu_base;
    for (Dwarf_Signed i = 0; i < n; i++) {
        if (buf[i].dwr_type == DW_RANGES_END)
            break;
        if (buf[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
            base = buf[i].dwr_addr2;
        else
            push_range(c, base + buf[i].dwr_addr1, base + buf[i].dwr_addr2);
    }
    dwarf_ranges_dealloc(c->dbg, buf, n);
    return c->failed ? -1 : 0;
}

/* Appends the DIE's code ranges; returns how many (0: no code), -1 on error. */
static long die_ranges(walk_ctx *c, Dwarf_Die die)
{
    size_t before = c->out->nranges;
    Dwarf_Error e = NULL;
    Dwarf_Addr lo = 0, hi = 0;
    int res = dwarf_lowpc(die, &lo, &e);
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "DW_AT_low_pc");
    if (res == DW_DLV_OK) {
        Dwarf_Half form = 0;
        enum Dwarf_Form_Class cls = DW_FORM_CLASS_UNKNOWN;
        res = dwarf_highpc_b(die, &hi, &form, &cls, &e);
        if (res == DW_DLV_ERROR)
            return fail_dw(c, e, "DW_AT_high_pc");
        if (res == DW_DLV_OK) {
            if (cls == DW_FORM_CLASS_CONSTANT) /* DWARF 4+: an offset from low_pc */
                hi += lo;
            if (push_range(c, lo, hi) < 0)
                return -1;
        }
        return (long)(c->out->nranges - before);
    }
    Dwarf_Attribute attr;
    res = dwarf_attr(die, DW_AT_ranges, &attr, &e);
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "DW_AT_ranges");
    if (res != DW_DLV_OK)
        return 0;
    Dwarf_Half form = 0;
    res = dwarf_whatform(attr, &form, &e);
    if (res == DW_DLV_ERROR) {
        dwarf_dealloc(c->dbg, attr, DW_DLA_ATTR);
        return fail_dw(c, e, "DW_AT_ranges form");
    }
    int rc = (c->version >= 5 || form == DW_FORM_rnglistx) ? rnglists_ranges(c, attr, form)
                                                            : debug_ranges(c, die, attr);
    dwarf_dealloc(c->dbg, attr, DW_DLA_ATTR);
    if (rc < 0)
        return -1;
    return (long)(c->out->nranges - before);
}

static int walk_children(walk_ctx *c, Dwarf_Die parent, long sub, long inl);

static int process_die(walk_ctx *c, Dwarf_Die die, long sub, long inl)
{
    Dwarf_Half tag = 0;
    Dwarf_Error e = NULL;
    if (dwarf_tag(die, &tag, &e) != DW_DLV_OK)
        return fail_dw(c, e, "DW_TAG");
    sprof_dwarf_info *o = c->out;
    switch (tag) {
    case DW_TAG_subprogram: {
        size_t first = o->nranges;
        long n = die_ranges(c, die);
        if (n < 0)
            return -1;
        if (n == 0)
            return 0; /* declaration, abstract instance or discarded */
        if (GROW(o->subs, o->nsubs, o->subs_cap) < 0)
            return fail_oom(c);
        sprof_dw_subprogram s = { NULL, NULL, 0, first, (size_t)n };
        const char *link = NULL;
        resolve_origin(c, die, 0, &s.name, &link, &s.decl_file, &s.decl_line);
        if (link) /* the symbol, as the ELF table names it; demangled by the generator */
            s.name = link;
        o->subs[o->nsubs++] = s;
        return walk_children(c, die, (long)o->nsubs - 1, -1);
    }
    case DW_TAG_inlined_subroutine: {
        if (sub < 0)
            return 0;
        size_t first = o->nranges;
        long n = die_ranges(c, die);
        if (n <= 0)
            return (int)n; /* fully optimised away: nothing of it runs */
        if (GROW(o->inlines, o->ninlines, o->inlines_cap) < 0)
            return fail_oom(c);
        sprof_dw_inline r = { (size_t)sub, inl, NULL, NULL, 0, NULL, 0, first, (size_t)n };
        const char *link = NULL;
        resolve_origin(c, die, 0, &r.name, &link, &r.decl_file, &r.decl_line);
        if (link)
            r.name = link;
        Dwarf_Unsigned v;
        if (udata_attr(c, die, DW_AT_call_file, &v))
            r.call_file = file_by_index(c, v);
        if (udata_attr(c, die, DW_AT_call_line, &v) && v <= UINT32_MAX)
            r.call_line = (uint32_t)v;
        o->inlines[o->ninlines++] = r;
        return walk_children(c, die, sub, (long)o->ninlines - 1);
    }
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
    case DW_TAG_namespace:
        return walk_children(c, die, sub, inl);
    default:
        return 0;
    }
}

static int walk_children(walk_ctx *c, Dwarf_Die parent, long sub, long inl)
{
    Dwarf_Die child = NULL;
    Dwarf_Error e = NULL;
    int res = dwarf_child(parent, &child, &e);
    while (res == DW_DLV_OK) {
        if (process_die(c, child, sub, inl) < 0) {
            dwarf_dealloc(c->dbg, child, DW_DLA_DIE);
            return -1;
        }
        Dwarf_Die sib = NULL;
        res = dwarf_siblingof_b(c->dbg, child, 1, &sib, &e);
        dwarf_dealloc(c->dbg, child, DW_DLA_DIE);
        child = sib;
    }
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "DIE tree");
    return 0;
}

static int producer_is_gcc(walk_ctx *c, Dwarf_Die cu_die)
{
    Dwarf_Attribute attr;
    Dwarf_Error e = NULL;
    int res = dwarf_attr(cu_die, DW_AT_producer, &attr, &e);
    if (res != DW_DLV_OK) {
        if (res == DW_DLV_ERROR)
            dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        return 0;
    }
    char *s = NULL;
    res = dwarf_formstring(attr, &s, &e);
    if (res == DW_DLV_ERROR)
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
    int gnu = res == DW_DLV_OK && s && strncmp(s, "GNU ", 4) == 0;
    dwarf_dealloc(c->dbg, attr, DW_DLA_ATTR);
    return gnu;
}

/* The CU's file table (raw names; include dir prefixed unless it is the
 * compilation directory) and its line rows. */
static int read_lines(walk_ctx *c, Dwarf_Die cu_die, Dwarf_Line_Context *lctx_out)
{
    Dwarf_Unsigned lversion = 0;
    Dwarf_Small tables = 0;
    Dwarf_Line_Context lctx = NULL;
    Dwarf_Error e = NULL;
    int res = dwarf_srclines_b(cu_die, &lversion, &tables, &lctx, &e);
    *lctx_out = NULL;
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "line table");
    if (res != DW_DLV_OK)
        return 0;
    *lctx_out = lctx;
    /* DWARF 5 starts the line program's file register at 1, but libdwarf
     * 20210528 reports rows before the first DW_LNS_set_file as file 0.
     * GCC never sets file 0 itself (its entry 0 only restates the primary
     * file), so for GCC's v5 tables a 0 is the default register: 1. */
    c->gnu_v5_file0 = lversion >= 5 && producer_is_gcc(c, cu_die);
    Dwarf_Signed base = 0, count = 0, end = 0;
    if (dwarf_srclines_files_indexes(lctx, &base, &count, &end, &e) != DW_DLV_OK)
        return fail_dw(c, e, "line table files");
    if (count < 0 || count > 1000000)
        return fail_dw(c, NULL, "line table files");
    c->files = calloc((size_t)count + 1, sizeof *c->files);
    if (!c->files)
        return fail_oom(c);
    c->file_base = base;
    c->nfiles = count;
    for (Dwarf_Signed i = base; i < end; i++) {
        const char *name = NULL;
        Dwarf_Unsigned dir = 0, mtime = 0, len = 0;
        Dwarf_Form_Data16 *md5 = NULL;
        if (dwarf_srclines_files_data_b(lctx, i, &name, &dir, &mtime, &len, &md5, &e) != DW_DLV_OK) {
            if (e)
                dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
            e = NULL;
            continue;
        }
        if (!name)
            continue;
        char buf[4096];
        const char *dirname = NULL;
        if (name[0] != '/' && dir != 0 &&
            dwarf_srclines_include_dir_data(lctx, (Dwarf_Signed)dir, &dirname, &e) == DW_DLV_OK &&
            dirname && *dirname) {
            snprintf(buf, sizeof buf, "%s/%s", dirname, name);
            name = buf;
        } else if (e) {
            dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
            e = NULL;
        }
        c->files[i - base] = intern(c, name);
    }
    Dwarf_Line *lines = NULL;
    Dwarf_Signed nlines = 0;
    res = dwarf_srclines_from_linecontext(lctx, &lines, &nlines, &e);
    if (res == DW_DLV_ERROR)
        return fail_dw(c, e, "line rows");
    sprof_dwarf_info *o = c->out;
    for (Dwarf_Signed i = 0; res == DW_DLV_OK && i < nlines; i++) {
        Dwarf_Addr addr = 0;
        Dwarf_Unsigned lineno = 0, fileno = 0;
        Dwarf_Bool endseq = 0;
        if (dwarf_lineaddr(lines[i], &addr, &e) != DW_DLV_OK ||
            dwarf_lineno(lines[i], &lineno, &e) != DW_DLV_OK ||
            dwarf_line_srcfileno(lines[i], &fileno, &e) != DW_DLV_OK ||
            dwarf_lineendsequence(lines[i], &endseq, &e) != DW_DLV_OK)
            return fail_dw(c, e, "line row");
        if (fileno == 0 && c->gnu_v5_file0)
            fileno = 1;
        if (GROW(o->lines, o->nlines, o->lines_cap) < 0)
            return fail_oom(c);
        o->lines[o->nlines++] = (sprof_dw_line){
            addr, endseq ? NULL : file_or_unknown(file_by_index(c, fileno)),
            lineno > UINT32_MAX ? 0 : (uint32_t)lineno };
    }
    return 0;
}

static int read_cu(walk_ctx *c, Dwarf_Die cu_die)
{
    Dwarf_Error e = NULL;
    Dwarf_Addr base = 0;
    int res = dwarf_lowpc(cu_die, &base, &e);
    if (res == DW_DLV_ERROR) {
        dwarf_dealloc(c->dbg, e, DW_DLA_ERROR);
        base = 0;
    } else if (res != DW_DLV_OK) {
        base = 0;
    }
    c->cu_base = base;
    Dwarf_Line_Context lctx = NULL;
    int rc = read_lines(c, cu_die, &lctx);
    if (rc == 0)
        rc = walk_children(c, cu_die, -1, -1);
    if (lctx)
        dwarf_srclines_dealloc_b(lctx);
    free(c->files);
    c->files = NULL;
    c->nfiles = 0;
    return rc;
}

int sprof_dwarf_read(const char *path, sprof_strpool *pool, sprof_dwarf_info *out, char *err,
                     size_t errlen)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    Dwarf_Debug dbg = NULL;
    Dwarf_Error e = NULL;
    int res = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &dbg, &e);
    if (res == DW_DLV_NO_ENTRY) {
        close(fd);
        return 0;
    }
    if (res != DW_DLV_OK) {
        snprintf(err, errlen, "%s", e ? dwarf_errmsg(e) : "cannot read DWARF");
        if (e)
            dwarf_dealloc(dbg, e, DW_DLA_ERROR);
        if (dbg)
            dwarf_finish(dbg, NULL);
        close(fd);
        return -1;
    }
    walk_ctx c = { .dbg = dbg, .pool = pool, .out = out, .err = err, .errlen = errlen };
    int cus = 0;
    for (;;) {
        Dwarf_Unsigned hdr_len = 0, typeoff = 0, next = 0;
        Dwarf_Half version = 0, addr_size = 0, off_size = 0, ext_size = 0, cu_type = 0;
        Dwarf_Off abbrev = 0;
        Dwarf_Sig8 sig;
        res = dwarf_next_cu_header_d(dbg, 1, &hdr_len, &version, &abbrev, &addr_size, &off_size,
                                     &ext_size, &sig, &typeoff, &next, &cu_type, &e);
        if (res == DW_DLV_NO_ENTRY)
            break;
        if (res == DW_DLV_ERROR) {
            fail_dw(&c, e, "CU header");
            break;
        }
        Dwarf_Die cu_die = NULL;
        res = dwarf_siblingof_b(dbg, NULL, 1, &cu_die, &e);
        if (res == DW_DLV_ERROR) {
            fail_dw(&c, e, "CU DIE");
            break;
        }
        if (res != DW_DLV_OK)
            continue;
        c.version = version;
        if (version > out->max_version)
            out->max_version = version;
        cus++;
        int rc = read_cu(&c, cu_die);
        dwarf_dealloc(dbg, cu_die, DW_DLA_DIE);
        if (rc < 0)
            break;
    }
    origin_info *oi, *tmp;
    HASH_ITER(hh, c.origins, oi, tmp)
    {
        HASH_DEL(c.origins, oi);
        free(oi);
    }
    dwarf_finish(dbg, NULL);
    close(fd);
    if (c.failed) {
        sprof_dwarf_free(out);
        return -1;
    }
    if (cus == 0) {
        sprof_dwarf_free(out);
        return 0;
    }
    return 1;
}

void sprof_dwarf_free(sprof_dwarf_info *info)
{
    free(info->subs);
    free(info->inlines);
    free(info->ranges);
    free(info->lines);
    memset(info, 0, sizeof *info);
}
