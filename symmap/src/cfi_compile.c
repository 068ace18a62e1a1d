/* sprof_cfi_compile: walk the CIE/FDE records of an .eh_frame or
 * .debug_frame section and compile every FDE's CFA program into rows.
 * Structural damage (lengths, CIE pointers, truncated headers or programs)
 * fails the whole section with -1; FDEs we cannot place (address encodings
 * relative to bases we do not have, CIEs with unknown augmentations) are
 * skipped. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi_internal.h"
#include "sprof/cfi.h"

typedef struct section {
    const uint8_t *data;
    size_t size;
    uint64_t vaddr;
    int is_debug_frame;
    const char *name;
} section;

static int fail(const section *s, size_t off, char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        int k = snprintf(err, errlen, "%s at offset 0x%zx: ", s->name, off);
        if (k >= 0 && (size_t)k < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + k, errlen - (size_t)k, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

/* One record's framing: where its body is and what its id field says. */
typedef struct record {
    size_t start;             /* offset of the length field */
    const uint8_t *body_end;
    size_t id_off;            /* offset of the CIE id / CIE pointer field */
    uint64_t id;
    int is64;
    int terminator;
} record;

static int read_record(const section *s, size_t off, record *r, cfi_cursor *c, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    r->start = off;
    *c = (cfi_cursor){ s->data, s->data + off, s->data + s->size, s->vaddr, 0 };
    uint64_t len = cfi_u32(c);
    if (c->bad)
        return fail(s, off, err, errlen, "truncated record length");
    if (len == 0) {
        r->terminator = 1;
        r->body_end = c->p;
        return 0;
    }
    if (len == 0xffffffffu) {
        len = cfi_u64(c);
        r->is64 = 1;
        if (c->bad)
            return fail(s, off, err, errlen, "truncated 64-bit record length");
    } else if (len >= 0xfffffff0u) {
        return fail(s, off, err, errlen, "reserved record length 0x%llx", (unsigned long long)len);
    }
    if (len > (uint64_t)(c->end - c->p))
        return fail(s, off, err, errlen, "record length %llu runs past the section end (size %zu)",
                    (unsigned long long)len, s->size);
    r->body_end = c->p + len;
    c->end = r->body_end;
    r->id_off = (size_t)(c->p - s->data);
    r->id = r->is64 ? cfi_u64(c) : cfi_u32(c);
    if (c->bad)
        return fail(s, off, err, errlen, "record too short for its id field");
    return 0;
}

static int record_is_cie(const section *s, const record *r)
{
    if (!s->is_debug_frame)
        return r->id == 0;
    return r->is64 ? r->id == ~(uint64_t)0 : r->id == 0xffffffffu;
}

/* Parse the CIE at `off`. Returns 0, 1 if its augmentation is one we cannot
 * skip (FDEs using it are skipped), -1 on malformed bytes. */
static int parse_cie(const section *s, size_t off, cfi_cie *cie, char *err, size_t errlen)
{
    record r;
    cfi_cursor c;
    if (read_record(s, off, &r, &c, err, errlen) != 0)
        return -1;
    if (r.terminator || !record_is_cie(s, &r))
        return fail(s, off, err, errlen, "FDE's CIE pointer does not point at a CIE");
    memset(cie, 0, sizeof(*cie));
    cie->addr_size = 8;
    uint64_t version = cfi_u8(&c);
    if (c.bad || !(version == 1 || version == 3 || (s->is_debug_frame && version == 4)))
        return fail(s, off, err, errlen, "unsupported CIE version %llu", (unsigned long long)version);
    const uint8_t *aug = c.p;
    while (c.p < c.end && *c.p)
        c.p++;
    if (c.p >= c.end)
        return fail(s, off, err, errlen, "unterminated CIE augmentation string");
    size_t aug_len = (size_t)(c.p - aug);
    c.p++;
    if (version == 4) {
        cie->addr_size = (unsigned)cfi_u8(&c);
        cie->seg_size = (unsigned)cfi_u8(&c);
        if (!c.bad && cie->addr_size != 4 && cie->addr_size != 8)
            return fail(s, off, err, errlen, "unsupported address size %u", cie->addr_size);
        if (!c.bad && cie->seg_size > 8)
            return fail(s, off, err, errlen, "unsupported segment selector size %u", cie->seg_size);
    }
    cie->code_align = cfi_uleb(&c);
    cie->data_align = cfi_sleb(&c);
    cie->ra_reg = version == 1 ? cfi_u8(&c) : cfi_uleb(&c);
    cie->fde_enc = 0x00;
    cie->lsda_enc = DW_EH_PE_omit;
    if (c.bad)
        return fail(s, off, err, errlen, "truncated CIE");
    if (aug_len > 0 && aug[0] == 'z') {
        cie->has_z = 1;
        uint64_t n = cfi_uleb(&c);
        if (c.bad || n > (uint64_t)(c.end - c.p))
            return fail(s, off, err, errlen, "CIE augmentation data runs past the record");
        cfi_cursor a = c;
        a.end = c.p + n;
        for (size_t i = 1; i < aug_len; i++) {
            if (aug[i] == 'L') {
                cie->lsda_enc = (uint8_t)cfi_u8(&a);
            } else if (aug[i] == 'R') {
                cie->fde_enc = (uint8_t)cfi_u8(&a);
            } else if (aug[i] == 'P') {
                uint8_t enc = (uint8_t)cfi_u8(&a);
                uint64_t ignored;
                if (!a.bad && cfi_read_encoded(&a, enc, cie->addr_size, &ignored) < 0)
                    return fail(s, off, err, errlen, "bad personality pointer encoding 0x%x", enc);
            } else if (aug[i] == 'S') {
                cie->signal_frame = 1;
            } else if (aug[i] == 'B' || aug[i] == 'G') {
                /* aarch64 pointer authentication / memory tagging: no data */
            } else {
                break; /* unknown letter: the length lets us skip the rest */
            }
            if (a.bad)
                return fail(s, off, err, errlen, "truncated CIE augmentation data");
        }
        c.p += n;
    } else if (aug_len == 2 && aug[0] == 'e' && aug[1] == 'h') {
        cfi_skip(&c, cie->addr_size); /* old GCC: eh_data pointer */
        if (c.bad)
            return fail(s, off, err, errlen, "truncated CIE");
    } else if (aug_len > 0) {
        return 1;
    }
    if (cie->code_align == 0)
        return fail(s, off, err, errlen, "CIE code alignment factor is 0");
    cie->insns = c.p;
    cie->insns_end = c.end;
    return 0;
}

static int compile_fde(const section *s, const record *r, cfi_cursor *c, cfi_rows *out,
                       size_t *cached_cie_off, cfi_cie *cie, int *cie_state, char *err, size_t errlen)
{
    size_t cie_off;
    if (s->is_debug_frame) {
        if (r->id >= s->size)
            return fail(s, r->start, err, errlen, "CIE pointer 0x%llx outside the section",
                        (unsigned long long)r->id);
        cie_off = (size_t)r->id;
    } else {
        if (r->id > r->id_off)
            return fail(s, r->start, err, errlen, "CIE pointer 0x%llx before the section start",
                        (unsigned long long)r->id);
        cie_off = r->id_off - (size_t)r->id;
    }
    if (cie_off != *cached_cie_off) {
        *cie_state = parse_cie(s, cie_off, cie, err, errlen);
        *cached_cie_off = cie_off;
    }
    if (*cie_state < 0)
        return -1;
    if (*cie_state > 0)
        return 0; /* unknown augmentation: skip */
    cfi_skip(c, cie->seg_size);
    uint64_t pc_lo = 0, range = 0;
    uint8_t enc = s->is_debug_frame ? (cie->addr_size == 4 ? 0x03 : 0x04) : cie->fde_enc;
    int r1 = cfi_read_encoded(c, enc, cie->addr_size, &pc_lo);
    int r2 = cfi_read_encoded(c, enc & 0x0f, cie->addr_size, &range);
    if (r1 < 0 || r2 < 0)
        return fail(s, r->start, err, errlen, "truncated FDE or bad address encoding 0x%x", enc);
    if (cie->has_z) {
        uint64_t n = cfi_uleb(c);
        cfi_skip(c, n);
        if (c->bad)
            return fail(s, r->start, err, errlen, "FDE augmentation data runs past the record");
    }
    if (r1 > 0 || r2 > 0 || range == 0 || pc_lo + range < pc_lo)
        return 0; /* cannot place it, or covers nothing */
    cfi_cursor cie_prog = { s->data, cie->insns, cie->insns_end, s->vaddr, 0 };
    char why[160];
    if (cfi_run_fde(cie, &cie_prog, c, pc_lo, pc_lo + range, s->is_debug_frame, out, why, sizeof(why)) != 0)
        return fail(s, r->start, err, errlen, "FDE for 0x%llx: %s", (unsigned long long)pc_lo, why);
    return 0;
}

int sprof_cfi_compile(const uint8_t *data, size_t size, uint64_t section_vaddr,
                      int is_debug_frame, sprof_cfi_row **rows, size_t *nrows,
                      char *err, size_t errlen)
{
    *rows = NULL;
    *nrows = 0;
    section s = { data, size, section_vaddr, is_debug_frame ? 1 : 0,
                  is_debug_frame ? ".debug_frame" : ".eh_frame" };
    if (!data && size)
        return fail(&s, 0, err, errlen, "no data");
    cfi_rows out = { 0 };
    cfi_cie cie;
    size_t cached = (size_t)-1;
    int cie_state = 0;
    size_t off = 0;
    while (off < size) {
        record r;
        cfi_cursor c;
        if (read_record(&s, off, &r, &c, err, errlen) != 0)
            goto bad;
        if (r.terminator) {
            if (!is_debug_frame)
                break; /* .eh_frame ends at a zero length */
            off += 4;
            continue;
        }
        if (record_is_cie(&s, &r)) {
            /* Check every CIE, used or not: a malformed one means a damaged section. */
            cached = off;
            cie_state = parse_cie(&s, off, &cie, err, errlen);
            if (cie_state < 0)
                goto bad;
        } else if (compile_fde(&s, &r, &c, &out, &cached, &cie, &cie_state, err, errlen) != 0) {
            goto bad;
        }
        off = (size_t)(r.body_end - data);
    }
    *nrows = sprof_cfi_normalize(out.v, out.n);
    if (*nrows == 0) {
        free(out.v);
        out.v = NULL;
    }
    *rows = out.v;
    return 0;
bad:
    free(out.v);
    return -1;
}
