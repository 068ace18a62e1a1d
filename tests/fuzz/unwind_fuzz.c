/* libFuzzer harness for the offline unwinder (offline-tools/lib/src/model/
 * unwind.c): a sample (registers, frame-pointer chain, stack candidates,
 * flags) and a small code layout with CFI rows, both read from the input,
 * so that the walk meets chains that lie, CFI that does not fit, records
 * without offsets, signal frames and words that point anywhere. Checks
 * the contract: 1 <= frames <= max, pcs[0] is the sample's pc, exact[0] is
 * 1, every flag 0 or 1, and the unwind ends (ASan/UBSan watch the rest).
 *
 * Input: a fixed header, then records read with next_*() (zeros once the
 * input is used up). Addresses come from small domains (a few functions at
 * 0x1000 * k, a stack at STACK) so that the parts meet. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/trace_format.h"
#include "sprof/trace_reader.h"
#include "unwind.h"

#define NFN 6
#define STACK 0x7ffd00000000ull
#define TRAMP 0x7000ull

typedef struct input {
    const uint8_t *p;
    size_t left;
} input;

static uint8_t next8(input *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

static uint64_t next64(input *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)next8(in) << (8 * i);
    return v;
}

typedef struct layout {
    sprof_cfi_row row[NFN];
    int has_cfi[NFN];
} layout;

static int fn_of(uint64_t pc)
{
    if (pc < 0x1000 || pc >= 0x1000ull * (NFN + 1))
        return -1;
    int k = (int)(pc / 0x1000) - 1;
    return (pc & 0xfff) < 0x100 ? k : -1;
}

static int lay_is_code(void *ctx, uint64_t pc)
{
    (void)ctx;
    return fn_of(pc) >= 0 || (pc >= TRAMP && pc < TRAMP + 16);
}

static int lay_cfi(void *ctx, uint64_t pc, sprof_cfi_row *row)
{
    const layout *l = ctx;
    int k = fn_of(pc);
    if (k < 0 || !l->has_cfi[k])
        return -1;
    *row = l->row[k];
    return 0;
}

static int lay_sigreturn_at(void *ctx, uint64_t pc)
{
    (void)ctx;
    return pc == TRAMP;
}

/* a word: a code address, a stack address, or anything */
static uint64_t pick_word(input *in)
{
    uint8_t how = next8(in);
    switch (how % 4) {
    case 0: return 0x1000ull * (1 + next8(in) % (NFN + 1)) + next8(in);
    case 1: return STACK + 8ull * next8(in) * (1 + (how >> 4));
    case 2: return TRAMP + (how >> 6) * 7;
    default: return next64(in);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = { data, size };
    layout lay;
    memset(&lay, 0, sizeof lay);
    static const uint8_t regs[4] = { SPROF_CFA_RSP, SPROF_CFA_RBP, SPROF_CFA_UNDEFINED, SPROF_CFA_RBX };
    for (int k = 0; k < NFN; k++) {
        uint8_t b = next8(&in);
        lay.has_cfi[k] = (b & 1) != 0;
        lay.row[k].lo = 0x1000ull * (k + 1);
        lay.row[k].hi = lay.row[k].lo + 0x100;
        lay.row[k].cfa_reg = regs[(b >> 1) % 4];
        lay.row[k].cfa_offset = (int8_t)next8(&in) * 8;
        lay.row[k].ra_offset = b & 0x10 ? (int8_t)next8(&in) * 8 : -8;
        lay.row[k].rbp_saved = (b & 0x20) != 0;
        lay.row[k].rbp_offset = (int8_t)next8(&in) * 8;
        lay.row[k].rbx_rule = (uint8_t)((b >> 6) % 3);
        lay.row[k].rbx_offset = (int8_t)next8(&in) * 8;
    }

    sprof_sample_view s;
    memset(&s, 0, sizeof s);
    uint8_t flags = next8(&in);
    s.flags = (flags & 1 ? SPROF_SAMPLE_KERNEL_CHAIN : 0) | (flags & 2 ? SPROF_SAMPLE_FP_SCANNED : 0) |
              (flags & 4 ? SPROF_SAMPLE_STACK_CUT : 0);
    s.pc = pick_word(&in);
    s.sp = STACK + 8ull * next8(&in);
    s.fp = pick_word(&in);
    uint8_t f0 = next8(&in);
    s.fp0_off = f0 == 0xff ? SPROF_FPOFF_UNKNOWN : 8u * f0;

    uint64_t ret[32];
    uint32_t fpoff[32], cand_off[64];
    uint64_t cand_val[64];
    s.nframes = next8(&in) % 33;
    for (uint32_t i = 0; i < s.nframes; i++) {
        ret[i] = pick_word(&in);
        uint8_t o = next8(&in);
        fpoff[i] = o == 0xff ? SPROF_FPOFF_UNKNOWN : 16u * o;
    }
    s.ncand = next8(&in) % 65;
    for (uint32_t i = 0; i < s.ncand; i++) {
        uint8_t o = next8(&in);
        cand_off[i] = o == 0xff ? SPROF_CAND_REBASE : 8u * o;
        cand_val[i] = pick_word(&in);
    }
    s.ret = ret;
    s.fpoff = fpoff;
    s.cand_off = cand_off;
    s.cand_val = cand_val;

    size_t max = 1 + next8(&in) % 80;
    sprof_unwind_env env = { &lay, lay_is_code, lay_cfi, (flags & 8) ? lay_sigreturn_at : NULL };
    uint64_t pcs[80];
    uint8_t exact[80];
    sprof_unwind_info info;
    size_t n = sprof_unwind_steps(&s, &env, pcs, exact, max, &info);
    if (n < 1 || n > max || pcs[0] != s.pc || exact[0] != 1)
        abort();
    for (size_t i = 0; i < n; i++)
        if (exact[i] > 1)
            abort();
    /* the same walk without the per-step answer */
    uint64_t pcs2[80];
    if (sprof_unwind(&s, &env, pcs2, max, NULL) != n || memcmp(pcs, pcs2, n * sizeof *pcs) != 0)
        abort();
    return 0;
}
