/* Unit tests of the offline unwinder (offline-tools/lib/src/unwind.c) with
 * constructed samples: frameless leaves, a glibc-like leaf that pushes rbp
 * and uses it as a general register, the switch to the recorded frame
 * pointer chain, and the fallbacks. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "unwind.h"
#include "fold_check.h"

/* A fake code layout: functions with one CFI row each. */
typedef struct fake_fn {
    uint64_t lo, hi;
    int has_cfi;
    sprof_cfi_row row;
} fake_fn;

#define RSP_ROW(off) { 0, 0, SPROF_CFA_RSP, (off), -8, 0, 0, SPROF_REG_UNKNOWN, 0 }
#define RSP_ROW_RBP(off, rbpoff) { 0, 0, SPROF_CFA_RSP, (off), -8, 1, (rbpoff), SPROF_REG_UNKNOWN, 0 }
#define RBP_ROW { 0, 0, SPROF_CFA_RBP, 16, -8, 1, -16, SPROF_REG_UNKNOWN, 0 }
/* ld.so's _dl_fixup (saves rbp and rbx) and the lazy-binding trampoline
 * that calls it, _dl_runtime_resolve_xsavec: CFA = rbx + 32 (the PLT's two
 * pushes, its own push of rbx, the return address), rbx saved at CFA - 32 */
#define FIXUP_ROW { 0, 0, SPROF_CFA_RSP, 64, -8, 1, -32, SPROF_REG_SAVED, -40 }
#define RESOLVE_ROW { 0, 0, SPROF_CFA_RBX, 32, -8, 0, 0, SPROF_REG_SAVED, -32 }

enum { F_LEAF, F_GLIBC_LEAF, F_GLIBC_MID, F_CALLER, F_D, F_MAIN, F_START, F_NOCFI, F_FIXUP, F_RESOLVE, NFN };
static fake_fn fns[NFN] = {
    [F_LEAF] = { 0x401000, 0x401100, 1, RSP_ROW(8) },
    [F_GLIBC_LEAF] = { 0x7f0000001000, 0x7f0000001100, 1, RSP_ROW_RBP(16, -16) },
    [F_GLIBC_MID] = { 0x7f0000002000, 0x7f0000002100, 1, RSP_ROW(24) },
    [F_CALLER] = { 0x402000, 0x402100, 1, RBP_ROW },
    [F_D] = { 0x403000, 0x403100, 1, RBP_ROW },
    [F_MAIN] = { 0x404000, 0x404100, 1, RBP_ROW },
    [F_START] = { 0x7f0000005000, 0x7f0000005100, 1, RSP_ROW(8) },
    [F_NOCFI] = { 0x406000, 0x406100, 0, RSP_ROW(8) },
    [F_FIXUP] = { 0x7f0000006000, 0x7f0000006100, 1, FIXUP_ROW },
    [F_RESOLVE] = { 0x7f0000007000, 0x7f0000007100, 1, RESOLVE_ROW },
};

static int fake_is_code(void *ctx, uint64_t pc)
{
    (void)ctx;
    for (int i = 0; i < NFN; i++)
        if (pc >= fns[i].lo && pc < fns[i].hi)
            return 1;
    return 0;
}

static int fake_cfi(void *ctx, uint64_t pc, sprof_cfi_row *row)
{
    (void)ctx;
    for (int i = 0; i < NFN; i++) {
        if (pc >= fns[i].lo && pc < fns[i].hi && fns[i].has_cfi) {
            *row = fns[i].row;
            row->lo = fns[i].lo;
            row->hi = fns[i].hi;
            return 0;
        }
    }
    return -1;
}

static const sprof_unwind_env env = { NULL, fake_is_code, fake_cfi, NULL };

#define SP 0x7ffd00001000ull
/* The recorded chain: caller's record at sp+0x40 (-> ret into D), D's at
 * sp+0x80 (-> ret into main), main's at sp+0xc0 (-> ret into libc start). */
static uint64_t chain_ret[3] = { 0x403020, 0x404030, 0x7f0000005010 };
static uint32_t chain_off[3] = { 0x40, 0x80, 0xc0 };

static sprof_sample_view base_sample(uint64_t pc, uint64_t fp)
{
    sprof_sample_view s;
    memset(&s, 0, sizeof s);
    s.pc = pc;
    s.sp = SP;
    s.fp = fp;
    s.fp0_off = 0x40;
    s.nframes = 3;
    s.ret = chain_ret;
    s.fpoff = chain_off;
    return s;
}

static void set_cands(sprof_sample_view *s, const uint32_t *off, const uint64_t *val, uint32_t n)
{
    s->ncand = n;
    s->cand_off = off;
    s->cand_val = val;
}

static void expect(const char *what, const uint64_t *got, size_t n, const uint64_t *want, size_t wn)
{
    int same = n == wn;
    for (size_t i = 0; same && i < n; i++)
        same = got[i] == want[i];
    CHECK(same, "%s: got %zu frames, want %zu", what, n, wn);
    if (!same) {
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  got[%zu] = 0x%" PRIx64 "\n", i, got[i]);
    }
}

static void test_frameless_leaf(void)
{
    /* leaf: CFA = rsp+8, its return address into the caller is a candidate at sp */
    sprof_sample_view s = base_sample(0x401005, SP + 0x40);
    uint32_t coff[] = { 0 };
    uint64_t cval[] = { 0x402010 };
    set_cands(&s, coff, cval, 1);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x401005, 0x402010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("frameless leaf", pcs, n, want, 5);
    /* every frame is a CFI step, the three frame records included */
    CHECK(info.cfi_steps == 4 && info.chain_frames == 0 && !info.used_fallback,
          "frameless leaf: steps %u chain %u fallback %d", info.cfi_steps, info.chain_frames,
          info.used_fallback);
}

static void test_glibc_leaf_pushes_rbp(void)
{
    /* glibc-like leaf: push rbp; rbp then holds data (0x1234). CFA = rsp+16,
     * saved rbp at sp (a stack address, recorded as candidate), RA at sp+8. */
    sprof_sample_view s = base_sample(0x7f0000001010, 0x1234);
    uint32_t coff[] = { 0, 8 };
    uint64_t cval[] = { SP + 0x40, 0x402010 };
    set_cands(&s, coff, cval, 2);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x7f0000001010, 0x402010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("glibc leaf", pcs, n, want, 5);
    CHECK(!info.used_fallback, "glibc leaf: should not need the fallback");

    /* same, but the saved rbp word was not recorded: the caller's rbp is
     * unknown, so the chain is taken from the first record above sp */
    set_cands(&s, coff + 1, cval + 1, 1);
    n = sprof_unwind(&s, &env, pcs, 64, &info);
    expect("glibc leaf, saved rbp unknown", pcs, n, want, 5);
    CHECK(info.used_fallback, "glibc leaf without saved rbp: expected the fallback");
}

static void test_two_frameless_glibc_frames(void)
{
    /* leaf (CFA rsp+8) called from a frameless glibc function (CFA rsp+24)
     * called from the FP caller: RAs at sp and sp+8+16 = sp+0x18 */
    sprof_sample_view s = base_sample(0x401010, SP + 0x40);
    uint32_t coff[] = { 0, 0x10, 0x18 };
    uint64_t cval[] = { 0x7f0000002040, 0x401099 /* stale code pointer, unused */, 0x402010 };
    set_cands(&s, coff, cval, 3);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x401010, 0x7f0000002040, 0x402010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("two frameless frames", pcs, n, want, 6);
    CHECK(info.cfi_steps == 5, "two frameless frames: %u CFI steps", info.cfi_steps);
}

static void test_fp_leaf_switches_to_chain(void)
{
    /* leaf with its own frame record: rbp-based CFA and rbp == record 0 */
    sprof_sample_view s = base_sample(0x403050, SP + 0x40);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x403050, 0x403020, 0x404030, 0x7f0000005010 };
    expect("fp leaf", pcs, n, want, 4);
    CHECK(info.cfi_steps == 3 && info.chain_frames == 0, "fp leaf: steps %u chain %u",
          info.cfi_steps, info.chain_frames);
}

static void test_frameless_between_fp_frames(void)
{
    /* An FP leaf (like the vDSO) called by a frameless glibc function (CFA
     * rsp+24) called by the FP function D. The chain alone goes leaf ->
     * glibc -> main and loses D; its return address is a candidate at
     * record 0 + 16 + 16 = sp+0x60. */
    static uint64_t ret[3] = { 0x7f0000002040, 0x404030, 0x7f0000005010 };
    static uint32_t off[3] = { 0x40, 0x80, 0xc0 };
    sprof_sample_view s = base_sample(0x402050, SP + 0x40);
    s.ret = ret;
    s.fpoff = off;
    uint32_t coff[] = { 0x60 };
    uint64_t cval[] = { 0x403020 };
    set_cands(&s, coff, cval, 1);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x402050, 0x7f0000002040, 0x403020, 0x404030, 0x7f0000005010 };
    expect("frameless between fp frames", pcs, n, want, 5);
    CHECK(!info.used_fallback, "frameless between fp frames: no fallback expected");

    /* without that word nothing is invented: the chain resumes after the
     * record stepped through last */
    s.ncand = 0;
    n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want_chain[] = { 0x402050, 0x7f0000002040, 0x404030, 0x7f0000005010 };
    uint8_t exact[64];
    n = sprof_unwind_steps(&s, &env, pcs, exact, 64, &info);
    expect("frameless between fp frames, word missing", pcs, n, want_chain, 4);
    /* one frame from the chain (D is skipped there), then CFI again in main */
    CHECK(info.chain_frames == 1 && info.cfi_steps == 2, "word missing: chain frames %u, cfi steps %u",
          info.chain_frames, info.cfi_steps);
    CHECK(n == 4 && exact[0] && exact[1] && !exact[2] && exact[3], "word missing: exactness of the steps");
}

static void test_no_cfi_falls_back(void)
{
    sprof_sample_view s = base_sample(0x406010, SP + 0x40);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x406010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("no cfi", pcs, n, want, 4);
    CHECK(info.used_fallback, "no cfi: expected the fallback");
}

static void test_cfi_resumes_after_chain(void)
{
    /* JIT-like leaf without CFI, whose record (record 0) returns into a
     * frameless glibc function (CFA rsp+24) called by D: the chain alone
     * goes leaf -> glibc -> main and skips D. CFI resumes at the glibc
     * frame (sp = record 0 + 16) and finds D's return address, recorded as
     * a candidate at sp+0x60; D is rbp-based and its record is record 1. */
    static uint64_t ret[3] = { 0x7f0000002040, 0x404030, 0x7f0000005010 };
    sprof_sample_view s = base_sample(0x406010, SP + 0x40);
    s.ret = ret;
    uint32_t coff[] = { 0x60 };
    uint64_t cval[] = { 0x403020 };
    set_cands(&s, coff, cval, 1);
    uint64_t pcs[64];
    uint8_t exact[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind_steps(&s, &env, pcs, exact, 64, &info);
    uint64_t want[] = { 0x406010, 0x7f0000002040, 0x403020, 0x404030, 0x7f0000005010 };
    expect("cfi resumes after the chain", pcs, n, want, 5);
    CHECK(n == 5 && !exact[1] && exact[2] && exact[3] && exact[4], "cfi resumes: exactness of the steps");
    /* kernel chains without record offsets cannot resume: chain to the end */
    uint32_t unknown[3] = { SPROF_FPOFF_UNKNOWN, SPROF_FPOFF_UNKNOWN, SPROF_FPOFF_UNKNOWN };
    s.fp0_off = SPROF_FPOFF_UNKNOWN;
    s.fpoff = unknown;
    n = sprof_unwind_steps(&s, &env, pcs, exact, 64, &info);
    uint64_t want_chain[] = { 0x406010, 0x7f0000002040, 0x404030, 0x7f0000005010 };
    expect("no offsets: chain only", pcs, n, want_chain, 4);
    CHECK(n == 4 && !exact[1] && !exact[2] && !exact[3], "no offsets: every step from the chain");
}

static void test_unknown_word_falls_back(void)
{
    /* frameless leaf but the RA slot was not recorded */
    sprof_sample_view s = base_sample(0x401005, SP + 0x40);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x401005, 0x403020, 0x404030, 0x7f0000005010 };
    expect("unknown RA word", pcs, n, want, 4);
    CHECK(info.used_fallback, "unknown word: expected the fallback");
}

static void test_non_code_return_address_falls_back(void)
{
    /* frameless leaf whose RA slot holds a stack address (stale CFI fit) */
    sprof_sample_view s = base_sample(0x401005, SP + 0x40);
    uint32_t coff[] = { 0 };
    uint64_t cval[] = { SP + 0x200 };
    set_cands(&s, coff, cval, 1);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x401005, 0x403020, 0x404030, 0x7f0000005010 };
    expect("non-code RA", pcs, n, want, 4);
    CHECK(info.used_fallback, "non-code RA: expected the fallback");
}

static void test_kernel_chain_without_offsets(void)
{
    uint32_t unknown[3] = { SPROF_FPOFF_UNKNOWN, SPROF_FPOFF_UNKNOWN, SPROF_FPOFF_UNKNOWN };
    sprof_sample_view s = base_sample(0x406010, SP + 0x40);
    s.fp0_off = SPROF_FPOFF_UNKNOWN;
    s.fpoff = unknown;
    uint64_t pcs[64];
    size_t n = sprof_unwind(&s, &env, pcs, 64, NULL);
    uint64_t want[] = { 0x406010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("kernel chain", pcs, n, want, 4);
}

static void test_many_candidates(void)
{
    /* more words than the linear lookup handles: sorted path, same answer;
     * a candidate at a frame record's address does not override it */
    sprof_sample_view s = base_sample(0x401005, SP + 0x40);
    uint32_t coff[100];
    uint64_t cval[100];
    for (int i = 0; i < 100; i++) {
        coff[i] = (uint32_t)(0x1000 - 8 * i); /* descending, far above the chain */
        cval[i] = 0x7f0000002040;
    }
    coff[99] = 0;          /* the leaf's return address, last */
    cval[99] = 0x402010;
    coff[98] = 0x48;       /* clashes with record 0's return slot */
    cval[98] = 0x406050;
    set_cands(&s, coff, cval, 100);
    uint64_t pcs[64];
    size_t n = sprof_unwind(&s, &env, pcs, 64, NULL);
    uint64_t want[] = { 0x401005, 0x402010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("many candidates", pcs, n, want, 5);
}

/* A sample in the signal-return trampoline itself (its rt_sigreturn's
 * kernel time): sp is at the rt_sigframe's ucontext; the frames above are
 * the interrupted ones, from the ucontext's rip, rsp and rbp, never the
 * chain rbp leads to glued under the trampoline. */
#define TRAMP 0x7f0000007000ull
static int fake_code_or_tramp(void *ctx, uint64_t pc)
{
    return (pc >= TRAMP && pc < TRAMP + 16) || fake_is_code(ctx, pc);
}
static int fake_sigreturn_at(void *ctx, uint64_t pc)
{
    (void)ctx;
    return pc == TRAMP;
}

static void test_sample_in_trampoline(void)
{
    static const sprof_unwind_env senv = { NULL, fake_code_or_tramp, fake_cfi, fake_sigreturn_at };
    /* the interrupted frameless leaf ran at 0x401005 with rsp = SP + 0x38
     * (its return address into the caller there) and rbp = the caller's
     * record at SP + 0x40; the ucontext's gregs start at sp + 40 */
    uint32_t coff[] = { 0x38, 40 + 10 * 8, 40 + 15 * 8, 40 + 16 * 8 };
    uint64_t cval[] = { 0x402010, SP + 0x40, SP + 0x38, 0x401005 };
    static const uint64_t ats[] = { 0, 9 }; /* at its mov, and after its syscall */
    for (int a = 0; a < 2; a++) {
        uint64_t at = ats[a], pc = TRAMP + at;
        sprof_sample_view s = base_sample(pc, SP + 0x40);
        s.sp = SP - 0x100; /* the sigframe: below the interrupted frames (same stack here) */
        uint32_t off[4];
        for (int i = 0; i < 4; i++)
            off[i] = coff[i] + (i == 0 ? 0x100 : 0);
        set_cands(&s, off, cval, 4);
        uint32_t chain_off_far[3] = { 0x140, 0x180, 0x1c0 };
        s.fp0_off = 0x140;
        s.fpoff = chain_off_far;
        uint64_t pcs[64];
        size_t n = sprof_unwind(&s, &senv, pcs, 64, NULL);
        uint64_t want[] = { pc, 0x401006, 0x402010, 0x403020, 0x404030, 0x7f0000005010 };
        expect(at ? "sample after the trampoline's syscall" : "sample at the trampoline's mov", pcs, n, want, 6);
    }
}

static void test_rbx_based_cfa(void)
{
    /* A sample in _dl_fixup (rbp holds data, CFA = sp + 64), called by the
     * trampoline, whose stack pointer was realigned below a 2.5 KiB xsave
     * area: its CFA is rbx + 32, and rbx is the word _dl_fixup saved at its
     * CFA - 40 (sp + 24). Above the area, the caller's return address
     * (rbx + 24); the caller's rbp (saved by _dl_fixup at sp + 32) leads to
     * the frame records of caller, D and main. */
    const uint64_t bx = SP + 0xa00, rec = SP + 0xb00;
    uint32_t coff[] = { 24, 32, 56, 0xa00, 0xa18, 0xb00, 0xb08, 0xb40, 0xb48, 0xb88 };
    uint64_t cval[] = { bx, rec, 0x7f0000007040, SP + 0xc00, 0x402010, rec + 0x40, 0x403020, rec + 0x80,
                        0x404030, 0x7f0000005010 };
    sprof_sample_view s = base_sample(0x7f0000006052, 0xd);
    s.nframes = 0;
    s.fp0_off = 0xffffffff;
    set_cands(&s, coff, cval, 10);
    uint64_t pcs[64];
    sprof_unwind_info info;
    size_t n = sprof_unwind(&s, &env, pcs, 64, &info);
    uint64_t want[] = { 0x7f0000006052, 0x7f0000007040, 0x402010, 0x403020, 0x404030, 0x7f0000005010 };
    expect("rbx-based CFA", pcs, n, want, 6);
    CHECK(info.cfi_steps == 5, "rbx-based CFA: %u CFI steps", info.cfi_steps);

    /* the saved rbx not recorded (it held no stack or code address): the
     * trampoline's frame cannot be stepped, and no frame record follows */
    set_cands(&s, coff + 1, cval + 1, 9);
    n = sprof_unwind(&s, &env, pcs, 64, &info);
    CHECK(n == 2 && info.used_fallback, "rbx unknown: %zu frames, fallback %d", n, info.used_fallback);
}

static void test_bounded(void)
{
    sprof_sample_view s = base_sample(0x401005, SP + 0x40);
    uint32_t coff[] = { 0 };
    uint64_t cval[] = { 0x402010 };
    set_cands(&s, coff, cval, 1);
    uint64_t pcs[3];
    size_t n = sprof_unwind(&s, &env, pcs, 3, NULL);
    CHECK(n == 3, "bounded: %zu frames for max 3", n);
}

int main(void)
{
    test_frameless_leaf();
    test_glibc_leaf_pushes_rbp();
    test_two_frameless_glibc_frames();
    test_fp_leaf_switches_to_chain();
    test_frameless_between_fp_frames();
    test_no_cfi_falls_back();
    test_cfi_resumes_after_chain();
    test_unknown_word_falls_back();
    test_non_code_return_address_falls_back();
    test_kernel_chain_without_offsets();
    test_many_candidates();
    test_sample_in_trampoline();
    test_rbx_based_cfa();
    test_bounded();
    return check_report("test_unwind");
}
