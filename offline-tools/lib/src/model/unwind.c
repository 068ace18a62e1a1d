/* Offline unwinder: CFI over recorded stack words, frame records included.
 * Every frame is stepped with its own CFI, also above the first frame
 * record, so a frameless function between two frame-pointer functions
 * (libc clock_gettime calling the vDSO, qsort calling a comparator) keeps
 * its caller: the chain alone would skip it. The recorded chain takes
 * over for one frame where CFI cannot step (no CFI: JIT code; a word CFI
 * needs was not recorded), and CFI resumes in the frame after it. */
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CFI_STEPS 1024

typedef struct mem_word {
    uint64_t addr, val;
    uint64_t order; /* position added: frame-record words first */
} mem_word;

typedef struct sparse_mem {
    mem_word *w;
    size_t n;
    int sorted;
    uint64_t *rec;   /* absolute address of frame record i, 0 if unknown */
    uint64_t bx;     /* rbx at the sample, when the runtime recorded it (SPROF_CAND_RBX) */
    int bx_known;
} sparse_mem;

/* Up to this many words, lookups are linear (cheaper than sorting for
 * the few reads an unwind makes); beyond, sorted + binary search, so a
 * hostile sample with thousands of candidates stays cheap. */
#define LINEAR_WORDS 64

static int word_order(const void *a, const void *b)
{
    const mem_word *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Frame-record words win over a candidate recorded at the same address. */
static int mem_read(const sparse_mem *m, uint64_t addr, uint64_t *val)
{
    if (!m->sorted) {
        for (size_t i = 0; i < m->n; i++) {
            if (m->w[i].addr == addr) {
                *val = m->w[i].val;
                return 0;
            }
        }
        return -1;
    }
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->w[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < m->n && m->w[lo].addr == addr) {
        *val = m->w[lo].val;
        return 0;
    }
    return -1;
}

#define SMALL_WORDS 256

/* A chain record whose offset is unknown (beyond the copied stack, or on
 * another stack than sp's: the interrupted code's stack under a handler on
 * an alternate signal stack, where the kernel's walk went on through the
 * interrupted rbp) is where the previous record's saved-rbp word points:
 * the kernel read that very word to find it. Known when that word was
 * copied (a candidate). Then CFI can step the frame whose CFA is that
 * record (an interrupted rbp-based function under perf_event) instead of
 * calling its return address a gap. One record past the copy at most: the
 * next link word is not recorded. Before the words are sorted. */
static void derive_next_record(const sprof_sample_view *s, sparse_mem *m)
{
    for (uint32_t i = 1; i < s->nframes; i++) {
        if (m->rec[i] || !m->rec[i - 1])
            continue;
        uint64_t v;
        if (mem_read(m, m->rec[i - 1], &v) == 0 && v && !(v & 7)) {
            m->rec[i] = v;
            m->w[m->n] = (mem_word){ v + 8, s->ret[i], m->n }; /* its slots were left free */
            m->n++;
        }
        return;
    }
}

static int build_mem(const sprof_sample_view *s, sparse_mem *m, mem_word *small_w, uint64_t *small_rec)
{
    size_t nw = (size_t)s->ncand + 2 * (size_t)s->nframes + 1;
    m->n = 0;
    m->sorted = 0;
    m->w = nw <= SMALL_WORDS ? small_w : malloc(nw * sizeof *m->w);
    m->rec = s->nframes <= SMALL_WORDS ? small_rec : malloc(s->nframes * sizeof *m->rec);
    if (!m->w || !m->rec)
        return -1;
    for (uint32_t i = 0; i < s->nframes; i++) {
        uint32_t off = s->fpoff[i];
        if (i == 0 && off == SPROF_FPOFF_UNKNOWN)
            off = s->fp0_off;
        m->rec[i] = off != SPROF_FPOFF_UNKNOWN ? s->sp + off : 0;
    }
    /* The kernel starts its walk at rbp: its first record is there, also
     * when that is too far from sp for an offset (rbp on the thread's stack
     * in a handler on an alternate one). Not so for a chain the runtime
     * rebuilt by scanning the copy. */
    if (s->nframes && !m->rec[0] && (s->flags & SPROF_SAMPLE_KERNEL_CHAIN) && !(s->flags & SPROF_SAMPLE_FP_SCANNED) &&
        s->fp && !(s->fp & 7))
        m->rec[0] = s->fp;
    for (uint32_t i = 0; i < s->nframes; i++) {
        if (!m->rec[i])
            continue;
        m->w[m->n] = (mem_word){ m->rec[i] + 8, s->ret[i], m->n };
        m->n++;
        if (i + 1 < s->nframes && m->rec[i + 1]) {
            m->w[m->n] = (mem_word){ m->rec[i], m->rec[i + 1], m->n };
            m->n++;
        }
    }
    /* a REBASE word starts a second segment: the offsets after it count
     * from its value (the interrupted stack below an alternate-stack handler) */
    uint64_t base = s->sp;
    for (uint32_t i = 0; i < s->ncand; i++) {
        if (s->cand_off[i] == SPROF_CAND_REBASE) {
            base = s->cand_val[i];
            continue;
        }
        if (s->cand_off[i] == SPROF_CAND_RBX) { /* a register, not a stack word */
            m->bx = s->cand_val[i];
            m->bx_known = 1;
            continue;
        }
        m->w[m->n] = (mem_word){ base + s->cand_off[i], s->cand_val[i], m->n };
        m->n++;
    }
    derive_next_record(s, m);
    m->sorted = m->n > LINEAR_WORDS;
    if (m->sorted)
        qsort(m->w, m->n, sizeof *m->w, word_order);
    return 0;
}

static void free_mem(sparse_mem *m, mem_word *small_w, uint64_t *small_rec)
{
    if (m->w != small_w)
        free(m->w);
    if (m->rec != small_rec)
        free(m->rec);
}

/* Where the recorded chain takes over when CFI cannot go on: the index of
 * the chain entry to continue with, -1 if none. From the first frame record
 * at or above sp (the current function's own record, or its caller's when
 * it has none). Without record offsets (kernel chains), after the chain
 * entry equal to the current pc, or from the start when only the leaf is
 * known. */
static long chain_fallback(const sprof_sample_view *s, const sparse_mem *m, uint64_t sp, uint64_t pc, size_t n)
{
    int any_known = 0;
    for (uint32_t i = 0; i < s->nframes; i++) {
        if (!m->rec[i])
            continue;
        any_known = 1;
        if (m->rec[i] >= sp)
            return (long)i;
    }
    if (any_known)
        return -1;
    if (n == 1)
        return 0;
    for (uint32_t i = 0; i < s->nframes; i++)
        if (s->ret[i] == pc)
            return (long)i + 1;
    return -1;
}

/* Index of the recorded frame record at address `addr`, -1 if none. */
static long record_at(const sprof_sample_view *s, const sparse_mem *m, uint64_t addr)
{
    for (uint32_t k = 0; k < s->nframes; k++)
        if (m->rec[k] && m->rec[k] == addr)
            return (long)k;
    return -1;
}

/* CFI cannot go on: the chain entry after the last record stepped
 * through, or where chain_fallback continues when none was. */
static long chain_after(const sprof_sample_view *s, const sparse_mem *m, long last_rec, uint64_t sp,
                        uint64_t pc, size_t n)
{
    return last_rec >= 0 ? last_rec + 1 : chain_fallback(s, m, sp, pc, n);
}

/* pc is one of the trampoline's instructions (mov $15,%rax: 7 bytes;
 * syscall: 2) or the return address of its syscall. */
static int in_trampoline(const sprof_unwind_env *env, uint64_t pc)
{
    return env->sigreturn_at(env->ctx, pc) || (pc >= 7 && env->sigreturn_at(env->ctx, pc - 7)) ||
           (pc >= 9 && env->sigreturn_at(env->ctx, pc - 9));
}

/* One step's result in the walk below. */
static void put(uint64_t *pcs, uint8_t *exact, size_t *n, uint64_t pc, int is_exact)
{
    if (exact)
        exact[*n] = (uint8_t)is_exact;
    pcs[(*n)++] = pc;
}

size_t sprof_unwind_steps(const sprof_sample_view *s, const sprof_unwind_env *env, uint64_t *pcs,
                          uint8_t *exact, size_t max, sprof_unwind_info *info)
{
    sprof_unwind_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    if (max == 0)
        return 0;
    size_t n = 0;
    put(pcs, exact, &n, s->pc, 1);
    sparse_mem m = { 0 };
    mem_word small_w[SMALL_WORDS];
    uint64_t small_rec[SMALL_WORDS];
    if (build_mem(s, &m, small_w, small_rec) != 0) {
        free_mem(&m, small_w, small_rec);
        return n;
    }
    uint64_t pc = s->pc, sp = s->sp, fp = s->fp;
    int fp_known = 1, is_ret = 0;
    /* rbx: recorded for samples in the dynamic linker (its lazy-binding
     * trampoline keeps its CFA there), and known further out where a
     * frame's CFI says where it saved its caller's (ld.so's _dl_fixup saves
     * the trampoline's) or that it leaves it alone */
    uint64_t bx = m.bx;
    int bx_known = m.bx_known;
    /* index of the last frame record stepped through, -1 before any: when a
     * later step lacks a word, the chain continues right after it (this also
     * keeps kernel chains whose outer records have no known offset) */
    long last_rec = -1;
    /* chain entries before this one were taken already */
    long chain_next = 0;
    for (int step = 0; step < MAX_CFI_STEPS && n < max; step++) {
        long take = -1; /* >= 0: CFI cannot go on, continue with this chain entry */
        if (env->sigreturn_at && (is_ret ? env->sigreturn_at(env->ctx, pc) : step == 0 && in_trampoline(env, pc))) {
            /* A handler returned into the trampoline: sp is the handler's
             * CFA, where the kernel's rt_sigframe holds the ucontext
             * (uc_flags, uc_link, uc_stack: 40 bytes, then the general
             * registers in <sys/ucontext.h> order: rbp 10, rsp 15, rip 16).
             * A sample taken in the trampoline itself (its rt_sigreturn's
             * kernel time) has sp there too; its rbp is the interrupted
             * code's, whose chain the kernel glued under the trampoline
             * ("main;__restore_rt" in tests/stacks signal_alt). */
            uint64_t rip, rsp, rbp;
            if (mem_read(&m, sp + 40 + 16 * 8, &rip) != 0 || mem_read(&m, sp + 40 + 15 * 8, &rsp) != 0 ||
                !env->is_code(env->ctx, rip)) {
                take = chain_after(s, &m, last_rec, sp, pc, n);
            } else {
                fp_known = mem_read(&m, sp + 40 + 10 * 8, &rbp) == 0;
                if (fp_known)
                    fp = rbp;
                bx_known = mem_read(&m, sp + 40 + 11 * 8, &bx) == 0; /* REG_RBX */
                put(pcs, exact, &n, rip + 1, 1); /* exact pc (see unwind.h) */
                info->signal_frames++;
                pc = rip;
                sp = rsp;
                is_ret = 0;
                continue;
            }
        } else {
            sprof_cfi_row row;
            int have_row = env->cfi(env->ctx, pc - (uint64_t)is_ret, &row) == 0 &&
                           row.cfa_reg != SPROF_CFA_UNDEFINED;
            uint64_t cfa = 0, ra = 0;
            int stepped = 0;
            int base_known = have_row && (row.cfa_reg == SPROF_CFA_RSP ||
                                          (row.cfa_reg == SPROF_CFA_RBP && fp_known) ||
                                          (row.cfa_reg == SPROF_CFA_RBX && bx_known));
            if (base_known) {
                uint64_t base = row.cfa_reg == SPROF_CFA_RBP ? fp : row.cfa_reg == SPROF_CFA_RBX ? bx : sp;
                cfa = base + (uint64_t)(int64_t)row.cfa_offset;
                stepped = cfa > sp && mem_read(&m, cfa + (uint64_t)(int64_t)row.ra_offset, &ra) == 0;
            }
            if (!stepped) {
                if (base_known && cfa > sp && !info->missing_word) {
                    info->missing_word = 1;
                    info->gap_at = (uint32_t)n;
                }
                /* rbp-based, its CFA word not recorded: the record rbp points at */
                long at_fp = last_rec < 0 && have_row && row.cfa_reg == SPROF_CFA_RBP && fp_known
                                 ? record_at(s, &m, fp)
                                 : -1;
                take = at_fp >= 0 ? at_fp : chain_after(s, &m, last_rec, sp, pc, n);
            } else {
                if (row.cfa_reg == SPROF_CFA_RBP) {
                    long k = record_at(s, &m, fp);
                    if (k >= 0)
                        last_rec = k;
                }
                if (row.rbp_saved) {
                    uint64_t v;
                    fp_known = mem_read(&m, cfa + (uint64_t)(int64_t)row.rbp_offset, &v) == 0;
                    if (fp_known)
                        fp = v;
                }
                if (row.rbx_rule == SPROF_REG_SAVED)
                    bx_known = mem_read(&m, cfa + (uint64_t)(int64_t)row.rbx_offset, &bx) == 0;
                else if (row.rbx_rule != SPROF_REG_SAME)
                    bx_known = 0;
                if (ra == 0)
                    break; /* outermost frame: the stack ends here */
                if (env->is_code(env->ctx, ra)) {
                    put(pcs, exact, &n, ra, 1);
                    info->cfi_steps++;
                    pc = ra;
                    sp = cfa;
                    is_ret = 1;
                    continue;
                }
                /* stale word or CFI that does not fit: trust the chain instead */
                take = chain_after(s, &m, last_rec, sp, pc, n);
            }
        }
        /* The recorded chain's next frame. Where its record's address is
         * known, CFI resumes in that frame (sp just above the record, rbp
         * the word saved in it): a frameless function further out keeps
         * its caller, which the chain alone would skip (a JIT frame without
         * CFI in between, a word the sampler could not record), and the
         * frames CFI steps are known exact. */
        if (take < 0) {
            info->used_fallback = 1; /* nothing to continue with */
            break;
        }
        if (take < chain_next)
            take = chain_next;
        if ((uint32_t)take >= s->nframes || s->ret[take] == 0)
            break; /* the chain ends here too */
        info->used_fallback = 1;
        put(pcs, exact, &n, s->ret[take], 0);
        info->chain_frames++;
        chain_next = take + 1;
        if (!m.rec[take]) {
            for (uint32_t i = (uint32_t)take + 1; i < s->nframes && n < max && s->ret[i]; i++) {
                put(pcs, exact, &n, s->ret[i], 0);
                info->chain_frames++;
            }
            break;
        }
        last_rec = take;
        pc = s->ret[take];
        sp = m.rec[take] + 16;
        fp_known = mem_read(&m, m.rec[take], &fp) == 0;
        bx_known = 0; /* the frames skipped may have changed it */
        is_ret = 1;
    }
    free_mem(&m, small_w, small_rec);
    return n;
}

size_t sprof_unwind(const sprof_sample_view *s, const sprof_unwind_env *env, uint64_t *pcs,
                    size_t max, sprof_unwind_info *info)
{
    return sprof_unwind_steps(s, env, pcs, NULL, max, info);
}
