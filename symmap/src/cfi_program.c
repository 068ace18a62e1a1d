/* The DWARF CFA program interpreter: runs a CIE's initial instructions and
 * an FDE's instructions and appends one x86-64 row per address range.
 * Only what an unwinder here needs is tracked: the CFA rule, the return
 * address column, rbp (6) and rbx (3). Other registers' rules are parsed
 * and dropped. */
#include <stdio.h>
#include <stdlib.h>

#include "cfi_internal.h"

#define REG_RBX 3
#define REG_RBP 6
#define REG_RSP 7
#define STATE_STACK_MAX 64

static int push_row(cfi_rows *out, uint64_t lo, uint64_t hi, const cfi_state *s)
{
    if (lo >= hi)
        return 0;
    if (out->n == out->cap) {
        size_t ncap = out->cap ? out->cap * 2 : 256;
        sprof_cfi_row *v = realloc(out->v, ncap * sizeof(*v));
        if (!v)
            return -1;
        out->v = v;
        out->cap = ncap;
    }
    sprof_cfi_row r = { .lo = lo, .hi = hi, .cfa_reg = SPROF_CFA_UNDEFINED };
    int cfa_ok = !s->cfa_is_expr && (s->cfa_reg == REG_RSP || s->cfa_reg == REG_RBP || s->cfa_reg == REG_RBX) &&
                 s->cfa_off >= INT32_MIN && s->cfa_off <= INT32_MAX;
    int ra_ok = s->ra.kind == RULE_OFFSET && s->ra.off >= INT32_MIN && s->ra.off <= INT32_MAX;
    int rbp_ok = s->rbp.kind == RULE_SAME || (s->rbp.kind == RULE_OFFSET && s->rbp.off >= INT32_MIN &&
                                              s->rbp.off <= INT32_MAX);
    if (cfa_ok && ra_ok && rbp_ok) {
        r.cfa_reg = (uint8_t)s->cfa_reg;
        r.cfa_offset = (int32_t)s->cfa_off;
        r.ra_offset = (int32_t)s->ra.off;
        if (s->rbp.kind == RULE_OFFSET) {
            r.rbp_saved = 1;
            r.rbp_offset = (int32_t)s->rbp.off;
        }
        if (s->rbx.kind == RULE_SAME) {
            r.rbx_rule = SPROF_REG_SAME;
        } else if (s->rbx.kind == RULE_OFFSET && s->rbx.off >= INT32_MIN && s->rbx.off <= INT32_MAX) {
            r.rbx_rule = SPROF_REG_SAVED;
            r.rbx_offset = (int32_t)s->rbx.off;
        }
    }
    out->v[out->n++] = r;
    return 0;
}

/* v * f, saturated: an overflowing offset becomes INT64_MAX, which no row
 * can express, so the row ends up undefined instead of wrong. */
static int64_t scaled(int64_t v, int64_t f)
{
    int64_t r;
    return __builtin_mul_overflow(v, f, &r) ? INT64_MAX : r;
}

typedef struct interp {
    const cfi_cie *cie;
    int is_debug_frame;
    cfi_state cur, initial;
    cfi_state stack[STATE_STACK_MAX];
    unsigned depth;
    uint64_t loc, pc_hi;
    cfi_rows *out;
    int stop; /* an opcode we cannot interpret: the rest is unknown */
} interp;

static cfi_rule *rule_for(interp *it, uint64_t reg)
{
    if (reg == it->cie->ra_reg)
        return &it->cur.ra;
    if (reg == REG_RBP)
        return &it->cur.rbp;
    if (reg == REG_RBX)
        return &it->cur.rbx;
    return NULL;
}

static void set_rule(interp *it, uint64_t reg, uint8_t kind, int64_t off)
{
    cfi_rule *r = rule_for(it, reg);
    if (r) {
        r->kind = kind;
        r->off = off;
    }
}

static void restore_rule(interp *it, uint64_t reg)
{
    if (reg == it->cie->ra_reg)
        it->cur.ra = it->initial.ra;
    else if (reg == REG_RBP)
        it->cur.rbp = it->initial.rbp;
    else if (reg == REG_RBX)
        it->cur.rbx = it->initial.rbx;
}

/* Move to new_loc, emitting the row for [loc, new_loc). */
static int advance_to(interp *it, uint64_t new_loc, char *err, size_t errlen)
{
    if (new_loc < it->loc) {
        snprintf(err, errlen, "CFA program moves backwards (0x%llx after 0x%llx)",
                 (unsigned long long)new_loc, (unsigned long long)it->loc);
        return -1;
    }
    if (new_loc > it->pc_hi)
        new_loc = it->pc_hi;
    if (push_row(it->out, it->loc, new_loc, &it->cur) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    it->loc = new_loc;
    return 0;
}

static int advance_by(interp *it, uint64_t delta, char *err, size_t errlen)
{
    uint64_t d;
    if (__builtin_mul_overflow(delta, it->cie->code_align, &d) || it->loc + d < it->loc)
        d = it->pc_hi - it->loc;
    return advance_to(it, it->loc + d, err, errlen);
}

/* Execute one program. Returns 0 or -1 (err set). */
static int run(interp *it, cfi_cursor *c, char *err, size_t errlen)
{
    const int64_t daf = it->cie->data_align;
    while (!it->stop && !c->bad && c->p < c->end) {
        uint8_t op = (uint8_t)cfi_u8(c);
        uint8_t low = op & 0x3f;
        uint64_t reg, u;
        int64_t s;
        switch (op >> 6) {
        case 1: /* DW_CFA_advance_loc */
            if (advance_by(it, low, err, errlen))
                return -1;
            continue;
        case 2: /* DW_CFA_offset */
            u = cfi_uleb(c);
            set_rule(it, low, RULE_OFFSET, scaled((int64_t)u, daf));
            continue;
        case 3: /* DW_CFA_restore */
            restore_rule(it, low);
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            break;
        case 0x01: { /* set_loc */
            uint64_t addr = 0;
            int r = it->is_debug_frame
                        ? cfi_read_encoded(c, it->cie->addr_size == 4 ? 0x03 : 0x04, it->cie->addr_size, &addr)
                        : cfi_read_encoded(c, it->cie->fde_enc, it->cie->addr_size, &addr);
            if (r < 0)
                goto truncated;
            if (r > 0) { /* unresolvable address: the rest is unknown */
                it->stop = 1;
                break;
            }
            if (advance_to(it, addr, err, errlen))
                return -1;
            break;
        }
        case 0x02: /* advance_loc1 */
            u = cfi_u8(c);
            if (!c->bad && advance_by(it, u, err, errlen))
                return -1;
            break;
        case 0x03: /* advance_loc2 */
            u = cfi_u16(c);
            if (!c->bad && advance_by(it, u, err, errlen))
                return -1;
            break;
        case 0x04: /* advance_loc4 */
            u = cfi_u32(c);
            if (!c->bad && advance_by(it, u, err, errlen))
                return -1;
            break;
        case 0x05: /* offset_extended */
            reg = cfi_uleb(c);
            u = cfi_uleb(c);
            set_rule(it, reg, RULE_OFFSET, scaled((int64_t)u, daf));
            break;
        case 0x06: /* restore_extended */
            restore_rule(it, cfi_uleb(c));
            break;
        case 0x07: /* undefined */
            set_rule(it, cfi_uleb(c), RULE_UNDEF, 0);
            break;
        case 0x08: /* same_value */
            set_rule(it, cfi_uleb(c), RULE_SAME, 0);
            break;
        case 0x09: /* register */
            reg = cfi_uleb(c);
            cfi_uleb(c);
            set_rule(it, reg, RULE_OTHER, 0);
            break;
        case 0x0a: /* remember_state */
            if (it->depth == STATE_STACK_MAX) {
                snprintf(err, errlen, "DW_CFA_remember_state nested deeper than %d", STATE_STACK_MAX);
                return -1;
            }
            it->stack[it->depth++] = it->cur;
            break;
        case 0x0b: /* restore_state: the CFA rule is restored too (as libgcc does) */
            if (it->depth == 0) {
                snprintf(err, errlen, "DW_CFA_restore_state with nothing remembered");
                return -1;
            }
            it->cur = it->stack[--it->depth];
            break;
        case 0x0c: /* def_cfa */
            it->cur.cfa_reg = cfi_uleb(c);
            it->cur.cfa_off = (int64_t)cfi_uleb(c);
            it->cur.cfa_is_expr = 0;
            break;
        case 0x0d: /* def_cfa_register */
            it->cur.cfa_reg = cfi_uleb(c);
            it->cur.cfa_is_expr = 0;
            break;
        case 0x0e: /* def_cfa_offset */
            it->cur.cfa_off = (int64_t)cfi_uleb(c);
            break;
        case 0x0f: /* def_cfa_expression */
            cfi_skip(c, cfi_uleb(c));
            it->cur.cfa_is_expr = 1;
            break;
        case 0x10: /* expression */
        case 0x16: /* val_expression */
            reg = cfi_uleb(c);
            cfi_skip(c, cfi_uleb(c));
            set_rule(it, reg, RULE_OTHER, 0);
            break;
        case 0x11: /* offset_extended_sf */
            reg = cfi_uleb(c);
            s = cfi_sleb(c);
            set_rule(it, reg, RULE_OFFSET, scaled(s, daf));
            break;
        case 0x12: /* def_cfa_sf */
            it->cur.cfa_reg = cfi_uleb(c);
            it->cur.cfa_off = scaled(cfi_sleb(c), daf);
            it->cur.cfa_is_expr = 0;
            break;
        case 0x13: /* def_cfa_offset_sf */
            it->cur.cfa_off = scaled(cfi_sleb(c), daf);
            break;
        case 0x14: /* val_offset */
            reg = cfi_uleb(c);
            cfi_uleb(c);
            set_rule(it, reg, RULE_OTHER, 0);
            break;
        case 0x15: /* val_offset_sf */
            reg = cfi_uleb(c);
            cfi_sleb(c);
            set_rule(it, reg, RULE_OTHER, 0);
            break;
        case 0x2e: /* GNU_args_size */
            cfi_uleb(c);
            break;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = cfi_uleb(c);
            u = cfi_uleb(c);
            set_rule(it, reg, RULE_OFFSET, scaled(scaled((int64_t)u, daf), -1));
            break;
        default:
            /* Unknown opcode: its operand length is unknown, so nothing after
             * it can be decoded. The rest of the range gets no rule. */
            it->stop = 1;
            it->cur.cfa_is_expr = 1;
            break;
        }
        if (c->bad)
            goto truncated;
    }
    if (c->bad)
        goto truncated;
    return 0;
truncated:
    snprintf(err, errlen, "truncated CFA instruction");
    return -1;
}

int cfi_run_fde(const cfi_cie *cie, cfi_cursor *cie_prog, cfi_cursor *fde_prog, uint64_t pc_lo,
                uint64_t pc_hi, int is_debug_frame, cfi_rows *out, char *err, size_t errlen)
{
    interp *it = calloc(1, sizeof(*it));
    if (!it) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    it->cie = cie;
    it->is_debug_frame = is_debug_frame;
    it->loc = pc_lo;
    it->pc_hi = pc_hi;
    it->out = out;
    /* Before any instruction: no CFA rule, every register unchanged,
     * return address unknown. */
    it->cur.cfa_is_expr = 1;
    it->cur.ra.kind = RULE_UNDEF;
    it->cur.rbp.kind = RULE_SAME;
    it->cur.rbx.kind = RULE_SAME;
    int rc = run(it, cie_prog, err, errlen);
    if (rc == 0) {
        it->initial = it->cur;
        it->depth = 0; /* the CIE's remembered states do not leak into FDEs */
        rc = run(it, fde_prog, err, errlen);
    }
    if (rc == 0) {
        if (it->stop)
            it->cur.cfa_is_expr = 1;
        if (advance_to(it, pc_hi, err, errlen) != 0)
            rc = -1;
    }
    free(it);
    return rc;
}
