/* CFI helpers shared by the CFI compiler and the symmap writer. */
#ifndef SPROF_CFI_INTERNAL_H
#define SPROF_CFI_INTERNAL_H

#include <stddef.h>

#include "sprof/symmap.h"

/* Put rows in canonical form: rules with nothing to say zeroed, sorted by
 * address, overlaps removed (the row starting first keeps its addresses;
 * a later row keeps only what lies beyond), empty rows dropped, adjacent
 * identical rows merged. Works in place; returns the new count. The result
 * depends only on the set of rows, not their order. */
size_t sprof_cfi_normalize(sprof_cfi_row *rows, size_t n);

/* Drop what a symmap does not keep (docs/symmap-format.md): rbx's rule,
 * and rbx-based CFA rules (made undefined). Normalize after. */
void sprof_cfi_strip_rbx(sprof_cfi_row *rows, size_t n);

/* Same rule (not the same range)? */
int sprof_cfi_same_rule(const sprof_cfi_row *a, const sprof_cfi_row *b);

#endif

/* ---- the CFI compiler's internals (cfi_reader.c, cfi_entries.c, cfi_program.c) ---- */
#ifndef SPROF_CFI_COMPILER_INTERNALS
#define SPROF_CFI_COMPILER_INTERNALS

#include <stdint.h>

/* A bounds-checked cursor over section bytes. Reads past `end` set `bad`
 * and return 0; callers check `bad` once per record. */
typedef struct cfi_cursor {
    const uint8_t *start; /* section start (for pc-relative addresses and messages) */
    const uint8_t *p, *end;
    uint64_t section_vaddr;
    int bad;
} cfi_cursor;

uint64_t cfi_u8(cfi_cursor *c);
uint64_t cfi_u16(cfi_cursor *c);
uint64_t cfi_u32(cfi_cursor *c);
uint64_t cfi_u64(cfi_cursor *c);
uint64_t cfi_uleb(cfi_cursor *c);
int64_t cfi_sleb(cfi_cursor *c);
void cfi_skip(cfi_cursor *c, uint64_t n);

/* Decode one DW_EH_PE-encoded pointer. Returns 0 with *out set, 1 if the
 * value is present but cannot be resolved from the section alone (datarel,
 * textrel, funcrel, indirect: the bytes are skipped), -1 if the encoding is
 * invalid or the bytes run out. addr_size is used for DW_EH_PE_absptr. */
int cfi_read_encoded(cfi_cursor *c, uint8_t enc, unsigned addr_size, uint64_t *out);

#define DW_EH_PE_omit 0xff

/* A parsed CIE. */
typedef struct cfi_cie {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;      /* DW_EH_PE encoding of FDE addresses */
    uint8_t lsda_enc;
    int has_z;            /* augmentation data present */
    int signal_frame;     /* 'S' */
    unsigned addr_size;   /* 8 unless a v4 .debug_frame CIE says otherwise */
    unsigned seg_size;    /* v4 .debug_frame segment selector size */
    const uint8_t *insns, *insns_end; /* initial instructions */
} cfi_cie;

/* Register rules we track. */
enum { RULE_SAME = 0, RULE_UNDEF, RULE_OFFSET, RULE_OTHER };
typedef struct cfi_rule {
    uint8_t kind;
    int64_t off; /* RULE_OFFSET: saved at CFA + off */
} cfi_rule;

typedef struct cfi_state {
    int cfa_is_expr;
    uint64_t cfa_reg;
    int64_t cfa_off;
    cfi_rule ra, rbp, rbx;
} cfi_state;

/* Growing row vector. */
typedef struct cfi_rows {
    sprof_cfi_row *v;
    size_t n, cap;
} cfi_rows;

/* Run the CIE's initial instructions then the FDE's over [pc_lo, pc_hi),
 * appending rows. Returns 0, or -1 with a message in err (malformed program). */
int cfi_run_fde(const cfi_cie *cie, cfi_cursor *cie_prog, cfi_cursor *fde_prog, uint64_t pc_lo,
                uint64_t pc_hi, int is_debug_frame, cfi_rows *out, char *err, size_t errlen);

#endif
