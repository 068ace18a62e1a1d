/* Frame-pointer walk and stack-candidate capture. Used from the signal
 * handler (live stack), from the writer thread (perf_event stack dumps) and
 * from the wall-mode sampler (copies of blocked threads' stacks), so it is
 * async-signal-safe: no libc calls but memcpy and raw syscalls.
 *
 * The only x86-64 specific part is register extraction from ucontext and
 * the frame record shape [saved fp][return address], which aarch64 shares
 * (x29/x30 frame records), so a port changes sprof_regs_from_ucontext. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt_internal.h"

#define MAX_CAND SPROF_MAX_CAND

void sprof_regs_from_ucontext(void *ucv, uint64_t *pc, uint64_t *sp, uint64_t *fp)
{
    ucontext_t *uc = ucv;
#if defined(__x86_64__)
    *pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    *sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    *fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
#elif defined(__aarch64__)
    *pc = uc->uc_mcontext.pc;
    *sp = uc->uc_mcontext.sp;
    *fp = uc->uc_mcontext.regs[29];
#else
#error "sprof runtime: unsupported architecture"
#endif
}

#if defined(__x86_64__)
static uint64_t greg(void *ucv, int i)
{
    ucontext_t *uc = ucv;
    return (uint64_t)uc->uc_mcontext.gregs[i];
}
#else
static uint64_t greg(void *ucv, int i)
{
    (void)ucv;
    (void)i;
    return 0;
}
#define REG_RBX 0
#define REG_RCX 0
#endif

/* rbx: the CFA base of ld.so's lazy-binding trampoline (sprof_add_rbx) */
uint64_t sprof_rbx_from_ucontext(void *ucv)
{
    return greg(ucv, REG_RBX);
}

/* The register a system-call return leaves its return address in (x86-64:
 * rcx, which the syscall instruction loads), for sprof_syscall_return. */
uint64_t sprof_syscall_reg_from_ucontext(void *ucv)
{
    return greg(ucv, REG_RCX);
}

/* Make a system-call return unrecognisable as one (sprof_syscall_return)
 * once our signal has landed there: rcx is dead after `syscall` (the ABI
 * lets the kernel clobber it; no code reads it), and a kernel tick taken
 * in our handler or its rt_sigreturn, which restore these registers, must
 * not pass for time in that system call (kernel_sampler.c). The next
 * real system call sets rcx again. */
void sprof_syscall_reg_clear(void *ucv)
{
#if defined(__x86_64__)
    ucontext_t *uc = ucv;
    uc->uc_mcontext.gregs[REG_RCX] = 0;
#else
    (void)ucv;
#endif
}

/* Was the thread stopped in a system call the signal interrupted? */
int sprof_interrupted_syscall(void *ucv, uint64_t pc)
{
#if defined(__x86_64__)
    ucontext_t *uc = ucv;
    /* code is readable where it is executable (no execute-only pages on x86-64
     * Linux), and the thread was running this code: it is mapped */
    if (pc < 2 || !sprof_is_exec(pc - 2) || !sprof_is_exec(pc + 1)) return 0;
    const uint8_t *p = (const uint8_t *)pc;
    if (p[0] == 0x0f && p[1] == 0x05) return 1; /* rewound for restart */
    if (p[-2] == 0x0f && p[-1] == 0x05 && uc->uc_mcontext.gregs[REG_RAX] == -4 /* -EINTR */) return 1;
    return 0;
#else
    (void)ucv;
    (void)pc;
    return 0;
#endif
}

/* Candidates: MAX_CAND of the sampled stack, and as many again of a second
 * segment after a SPROF_CAND_REBASE word (sprof_add_interrupted_stack). */
#define MAX_ALL_CAND (2u * MAX_CAND + 1u)

uint32_t sprof_max_record_size(uint32_t max_depth)
{
    return (uint32_t)sizeof(struct sprof_rec_sample) + max_depth * 8u + sprof_pad8(max_depth * 4u) +
           sprof_pad8(MAX_ALL_CAND * 4u) + MAX_ALL_CAND * 8u;
}

/* The walk's work arrays live after the record in the caller's buffer, not
 * on the (signal) stack: a program's own alternate signal stack may be small. */
/* Frame records a walk follows: the recorded ones (max_depth, at most 512)
 * and, when the cap cut the chain, those above it (walk_beyond). */
#define WALK_RECORDS 1024u

struct walk_tmp {
    uint32_t fpoff[WALK_RECORDS];
    uint32_t coff[MAX_CAND];
    uint64_t cval[MAX_CAND];
    struct sprof_exec_cache xc; /* kept from one sample to the next */
};

uint32_t sprof_scratch_size(uint32_t max_depth)
{
    return sprof_pad8(sprof_max_record_size(max_depth)) + (uint32_t)sizeof(struct walk_tmp);
}

static struct walk_tmp *tmp_of(struct sprof_rec_sample *rec, uint32_t max_depth)
{
    return (struct walk_tmp *)(void *)((uint8_t *)rec + sprof_pad8(sprof_max_record_size(max_depth)));
}

/* len bytes of this process at addr into buf: one raw syscall, which
 * fails instead of faulting where nothing is mapped */
static int self_read(void *buf, uint64_t addr, uint32_t len)
{
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    return syscall(SYS_process_vm_readv, (long)g_sprof.pid, &l, 1L, &r, 1L, 0L) == (long)len;
}

/* Is this page readable? */
static int page_readable(uint64_t page)
{
    uint64_t tmp;
    return self_read(&tmp, page, 8);
}

static inline int exec_kind(struct sprof_walk_mem *m, uint64_t addr)
{
    return m->xc ? sprof_exec_kind_cached(m->xc, addr) : sprof_exec_kind(addr);
}

static inline int is_exec(struct sprof_walk_mem *m, uint64_t addr)
{
    return exec_kind(m, addr) != SPROF_EXEC_NONE;
}

/* len code bytes at addr into buf; 0 if [addr, addr + len) is not all code
 * (or, in a range that may be unmapped meanwhile, no longer mapped). Code
 * is readable where it is executable (no execute-only pages on x86-64
 * Linux), but a dlopen'ed library's code may be gone since the table was
 * read (dlclose; the writer handles perf_event samples after the fact, and
 * a stale return address into it may lie on any stack): those bytes come
 * through a system call that fails instead of faulting. */
static int code_read(struct sprof_walk_mem *m, uint64_t addr, uint8_t *buf, uint32_t len)
{
    int k0 = exec_kind(m, addr), k1 = exec_kind(m, addr + len - 1);
    if (k0 == SPROF_EXEC_NONE || k1 == SPROF_EXEC_NONE) return 0;
    if (k0 == SPROF_EXEC_STABLE && k1 == SPROF_EXEC_STABLE) {
        memcpy(buf, (const void *)(uintptr_t)addr, len);
        return 1;
    }
    return self_read(buf, addr, len);
}

static inline int mem_read(struct sprof_walk_mem *m, uint64_t addr, uint64_t *out)
{
    if ((addr & 7) || addr < m->lo || addr >= m->hi || m->hi - addr < 8) return 0;
    if (m->copy) {
        memcpy(out, m->copy + (addr - m->lo), 8);
        return 1;
    }
    if (m->probe && addr >= m->verified_hi) {
        uint64_t page = addr & ~4095ull;
        if (!page_readable(page)) {
            m->hi = page; /* nothing at or above is trusted */
            return 0;
        }
        m->verified_hi = page + 4096;
    }
    *out = *(volatile const uint64_t *)addr;
    return 1;
}

/* A frame record at a: [a] = caller's record (0 = outermost), [a+8] = return address. */
/* A frame record at a: its link and a return address into executable
 * code. *seen is the last return address found executable, which a
 * recursion repeats frame after frame (no lookup); 0 at a chain's start. */
static int chain_record(struct sprof_walk_mem *m, uint64_t a, uint64_t *next, uint64_t *ret, uint64_t *seen)
{
    if (!mem_read(m, a, next) || !mem_read(m, a + 8, ret)) return 0;
    if (*ret == *seen && *seen) return 1;
    if (!is_exec(m, *ret)) return 0;
    *seen = *ret;
    return 1;
}

static int frame_record(struct sprof_walk_mem *m, uint64_t a, uint64_t *next, uint64_t *ret)
{
    uint64_t seen = 0;
    return chain_record(m, a, next, ret, &seen);
}

static int next_is_record_link(struct sprof_walk_mem *m, uint64_t a, uint64_t next)
{
    return next > a && next - a <= SPROF_MAX_FRAME_STEP && !(next & 7) && next < m->hi;
}

/* Off the thread's stack (a fiber, an alternate signal stack), the
 * outermost record links into the thread's own stack: ucontext's fibers
 * start with the rbp getcontext saved (their creator's, stale), and a
 * handler on an alternate stack saves the interrupted rbp (those frames are
 * found through the signal frame, sprof_add_interrupted_stack). Either way
 * this stack's chain ends there, whole: scanning on for records cost a
 * probe per page of the unknown stack, on every fiber sample. */
static int ends_off_stack_chain(struct sprof_walk_mem *m, uint64_t next)
{
    return m->probe && m->thr_hi && next >= m->thr_lo && next < m->thr_hi;
}

struct assembled {
    uint32_t nframes, ncand;
};

/* Lay out ret[] (already at rec+1), fpoff[], cand_off[], cand_val[] and size the header. */
static uint32_t finish(struct sprof_rec_sample *rec, uint32_t cap, const uint32_t *fpoff,
                       const uint32_t *coff, const uint64_t *cval, struct assembled a)
{
    uint32_t size = (uint32_t)sizeof *rec + a.nframes * 8u + sprof_pad8(a.nframes * 4u) +
                    sprof_pad8(a.ncand * 4u) + a.ncand * 8u;
    if (size > cap) return 0;
    uint8_t *p = (uint8_t *)(rec + 1) + a.nframes * 8u;
    memcpy(p, fpoff, a.nframes * 4u);
    if (a.nframes & 1) memset(p + a.nframes * 4u, 0, 4);
    p += sprof_pad8(a.nframes * 4u);
    memcpy(p, coff, a.ncand * 4u);
    if (a.ncand & 1) memset(p + a.ncand * 4u, 0, 4);
    p += sprof_pad8(a.ncand * 4u);
    memcpy(p, cval, a.ncand * 8u);
    rec->h.type = SPROF_REC_SAMPLE;
    rec->h.size = size;
    rec->nframes = (uint16_t)a.nframes;
    rec->ncand = (uint16_t)a.ncand;
    return size;
}

/* Where the region above the outermost record can be read in one piece
 * (the perf copy, or the thread's own live stack); NULL for a probed stack. */
static const uint8_t *region_bytes(const struct sprof_walk_mem *m, uint64_t a, uint32_t len)
{
    if (m->probe || a < m->lo || a > m->hi || m->hi - a < len) return NULL;
    return m->copy ? m->copy + (a - m->lo) : (const uint8_t *)(uintptr_t)a;
}

/* Word i of the region: a live stack is read with plain loads, never through
 * libc's memcmp/memcpy, which an ASan-built program intercepts and checks
 * against its stack redzones (the handler runs inside that program). */
static inline uint64_t region_word(const struct sprof_walk_mem *m, const uint8_t *at, uint32_t i)
{
    uint64_t v;
    if (m->copy) memcpy(&v, at + i, 8); /* a fixed 8-byte copy: inlined, no call */
    else v = *(const volatile uint64_t *)(const void *)(at + i);
    return v;
}

static int region_same(const struct sprof_walk_mem *m, const uint8_t *now, const uint8_t *saved, uint32_t len)
{
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t was;
        memcpy(&was, saved + i, 8);
        if (region_word(m, now, i) != was) return 0;
    }
    return 1;
}

/* The window's words from the chain's outermost record (top) on: the same
 * candidates as the word-by-word scan in collect_candidates gives there
 * (every word of the window, stack values at or above sp), from the
 * thread's memo when the bytes are those it was built from. On the bench
 * workload that region is ~160 of the window's 256 words (main's record
 * is 0.7 KiB above the leaf): classifying them was ~1 us of the writer's
 * ~3 us per perf_event sample at 10 kHz; a comparison replaces it. */
static uint32_t top_region(struct sprof_walk_mem *m, uint64_t sp, uint64_t stack_hi, uint64_t top,
                           uint64_t to, uint32_t n, uint32_t *coff, uint64_t *cval, int *cut)
{
    const uint64_t from = top + 16;
    const uint64_t hi = to < m->hi ? to : m->hi;
    if (hi <= from) return n;
    const uint32_t len = (uint32_t)((hi - from) & ~7ull);
    const uint8_t *now = region_bytes(m, from, len);
    struct sprof_top_memo *t = sprof_top_memo_of(m->xc);
    if (now && t->top == top && t->stack_hi == stack_hi && sp + SPROF_TOP_MEMO_REACH >= t->sp && len <= t->len &&
        n + t->n < MAX_CAND && region_same(m, now, t->bytes, len)) {
        for (uint32_t i = 0; i < t->n && t->off[i] < len; i++) {
            uint64_t v = t->val[i];
            int stack = (t->kind[i] & 1) && v >= sp;
            if (stack || (t->kind[i] & 2)) {
                coff[n] = (uint32_t)(from + t->off[i] - sp);
                cval[n] = v;
                n++;
            }
        }
        return n;
    }
    int fill = now && len <= sizeof t->bytes;
    t->top = 0;
    t->n = 0;
    uint64_t a = from;
    for (; a + 8 <= hi; a += 8) {
        if (n >= MAX_CAND) {
            *cut = 1;
            break;
        }
        uint64_t v;
        if (!mem_read(m, a, &v)) break;
        int aligned = !(v & 7) && v < stack_hi;
        int stack = aligned && v >= sp;
        int maybe = aligned && v + SPROF_TOP_MEMO_REACH >= sp;
        int code = (!stack || (fill && maybe)) && is_exec(m, v);
        if (stack || code) {
            coff[n] = (uint32_t)(a - sp);
            cval[n] = v;
            n++;
        }
        if (fill && (maybe || code)) {
            if (t->n == SPROF_TOP_MEMO_CANDS) {
                fill = 0;
                continue;
            }
            t->off[t->n] = (uint32_t)(a - from);
            t->kind[t->n] = (uint8_t)((maybe ? 1 : 0) | (code ? 2 : 0));
            t->val[t->n] = v;
            t->n++;
        }
    }
    if (fill && a + 8 > hi) {
        for (uint32_t i = 0; i < len; i += 8) {
            uint64_t v = region_word(m, now, i);
            memcpy(t->bytes + i, &v, 8);
        }
        t->len = len;
        t->sp = sp;
        t->stack_hi = stack_hi;
        t->top = top;
    }
    return n;
}

/* Candidates: words above sp that point into an executable mapping or
 * into the stack, except the words of the frame records already in the
 * chain. Not only below the first record: a scanned first record can be a
 * frameless function's "push rbp" and a frameless function in the middle
 * of the chain leaves its caller's return address between two records;
 * the offline CFI unwinder needs both.
 *
 * How far: always the first SPROF_CAND_WINDOW bytes (everything there,
 * but the frames of callers known to keep records, and from a memo the
 * words above the outermost record: top_region), and beyond, up to the
 * chain's outermost record (at most SPROF_SCAN_MAX bytes above sp), the
 * words between records that point into executable mappings, or that are
 * 8-aligned stack addresses above themselves (saved frame pointers). A
 * frameless function with a large frame (glibc's vfprintf, a 64 KiB local
 * array) or a frame-pointer function with a large buffer below a frameless
 * callee (qsort) puts the return addresses the unwinder needs far above sp;
 * a buffer of data holds few words that look like code, so this costs few
 * bytes; the scan stops where the chain ends. *cut is set when the chain
 * went on beyond what could be scanned (SPROF_SCAN_MAX, the perf stack
 * copy, the candidate cap). */
static uint32_t collect_candidates(struct sprof_walk_mem *m, uint64_t sp, uint64_t stack_hi, const uint32_t *fpoff,
                                   const uint64_t *ret, uint32_t nframes, uint32_t nall, uint64_t top, uint64_t need,
                                   uint32_t *coff, uint64_t *cval, int *cut)
{
    uint32_t n = 0, f = 0;
    /* the gap above a record: its caller's frame (and any frameless
     * callers' below the next record), whose return address is gap_ret
     * (in_gap); gap_code: a code address seen in it */
    uint64_t gap_ret = 0;
    int in_gap = 0, gap_code = 0;
    uint64_t known = 0; /* the last return address found framed: a recursion repeats it */
    uint64_t end = sp + SPROF_CAND_WINDOW;
    uint64_t chain_end = end; /* just above the outermost known record */
    if (top && top + 16 > chain_end) chain_end = top + 16;
    if (chain_end > sp + SPROF_SCAN_MAX) {
        chain_end = sp + SPROF_SCAN_MAX;
        if (chain_end < need) *cut = 1;
    }
    /* the window's words above the outermost record: top_region */
    uint64_t region = 0;
    if (m->xc && !m->probe && !m->thr_hi && top && !(top & 7) && top > sp && top + 16 < end && chain_end == end &&
        (nframes == 0 || (fpoff[nframes - 1] == SPROF_FPOFF_UNKNOWN || sp + fpoff[nframes - 1] <= top)))
        region = top + 16;
    uint64_t a = (sp + 7) & ~7ull;
    for (; a + 8 <= (region ? region : chain_end); a += 8) {
        if (n >= MAX_CAND) {
            *cut = 1;
            break;
        }
        uint32_t off = (uint32_t)(a - sp);
        while (f < nall && (fpoff[f] == SPROF_FPOFF_UNKNOWN || fpoff[f] + 8 < off)) f++;
        /* A record above the cap (f >= nframes) is not in the sample: its
         * link and return address are candidates like any word, and its
         * caller's frame is stepped over as a recorded one's is. */
        int beyond_ret = f >= nframes && f < nall && off == fpoff[f] + 8;
        if (f < nall && off == fpoff[f]) {
            /* a gap scanned whole without a code address: its caller keeps
             * a frame record (a frameless one leaves its return address) */
            if (in_gap && m->xc && !gap_code) sprof_framed_note(m->xc, gap_ret);
            in_gap = 0;
        }
        if (f < nframes && off == fpoff[f]) {
            /* A record's link word is implied by the next record's offset.
             * When the walk went on to a record of unknown offset (a
             * handler's on an alternate stack links to the interrupted
             * code's, on the thread's stack), keep the word: it is where
             * the offline unwinder finds that record. So too the last
             * recorded record's, when the depth cap cut the chain: the
             * offline unwinder steps on through the records above from the
             * candidates (before, it stopped at the cap: a 500-deep
             * recursion lost main on every sample in it). */
            uint64_t v;
            int link_unknown = f + 1 < nframes ? fpoff[f + 1] == SPROF_FPOFF_UNKNOWN : f + 1 < nall;
            if (link_unknown && mem_read(m, a, &v) && v && !(v & 7)) {
                coff[n] = off;
                cval[n] = v;
                n++;
            }
            continue;
        }
        if (f < nframes && off == fpoff[f] + 8) {
            in_gap = ret != NULL;
            gap_ret = ret ? ret[f] : 0;
            gap_code = 0;
            /* The frame of a caller known to keep records holds nothing
             * the offline unwinder needs (that record gives its CFA and
             * return address; the registers it saved are its callees'
             * business, and no CFA rule reads them): go on at the next
             * record (500 frames of recursion: ~2,500 words read and
             * checked per sample before; in the window, 1-2 words a frame) */
            if (ret && m->xc && f + 1 < nall && fpoff[f + 1] != SPROF_FPOFF_UNKNOWN &&
                fpoff[f + 1] > off && (ret[f] == known || sprof_framed_known(m->xc, ret[f]))) {
                known = ret[f];
                /* a run of records of that caller (a recursion): over them
                 * at once, up to the last one whose link word may count */
                while (f + 2 < nframes && ret[f + 1] == known && fpoff[f + 1] != SPROF_FPOFF_UNKNOWN &&
                       fpoff[f + 2] != SPROF_FPOFF_UNKNOWN && fpoff[f + 2] > fpoff[f + 1] + 8)
                    f++;
                a = sp + fpoff[f + 1] - 8; /* the loop's step lands on that record */
                in_gap = 0;
            }
            continue;
        }
        uint64_t v;
        if (!mem_read(m, a, &v)) {
            if (a >= end && a < need) *cut = 1; /* the chain goes on above what was copied */
            break;
        }
        /* stack values only if 8-aligned (saved frame pointers), not argv/env
         * strings; beyond the window only those pointing above themselves */
        int stack = !(v & 7) && ((v >= sp && v < stack_hi && (a < end || v > a)) ||
                                 (m->thr_hi && v >= m->thr_lo && v < m->thr_hi));
        int code = !stack && ((v == known && known) || is_exec(m, v));
        gap_code |= code;
        if (stack || code) {
            coff[n] = off;
            cval[n] = v;
            n++;
        }
        if (beyond_ret) {
            in_gap = code;
            gap_ret = v;
            gap_code = 0;
            if (code && m->xc && f + 1 < nall && fpoff[f + 1] > off && (v == known || sprof_framed_known(m->xc, v))) {
                known = v;
                /* a run of records of that caller: each one's link (the
                 * next record, as the walk found it) and return address
                 * are its candidates, the rest of its frame is skipped */
                while (f + 2 < nall && n + 2 <= MAX_CAND && fpoff[f + 2] > fpoff[f + 1] + 8 &&
                       sp + fpoff[f + 1] + 16 <= chain_end) {
                    uint64_t r;
                    if (!mem_read(m, sp + fpoff[f + 1] + 8, &r) || r != known) break;
                    coff[n] = fpoff[f + 1];
                    cval[n] = sp + fpoff[f + 2];
                    coff[n + 1] = fpoff[f + 1] + 8;
                    cval[n + 1] = r;
                    n += 2;
                    f++;
                }
                a = sp + fpoff[f + 1] - 8;
                in_gap = 0;
            }
        }
    }
    if (region && a == region) n = top_region(m, sp, stack_hi, top, chain_end, n, coff, cval, cut);
    return n;
}

#if defined(__x86_64__)
/* Length of an indirect near call "ff /2" whose ModRM byte is at p[0]
 * (opcode before it); 0 if p[0] does not encode call r/m64. */
static unsigned ff_call_len(const uint8_t *p)
{
    unsigned mod = p[0] >> 6, reg = (p[0] >> 3) & 7, rm = p[0] & 7;
    if (reg != 2) return 0;
    if (mod == 3) return 2;
    unsigned len = 2;
    if (rm == 4) { /* SIB */
        len++;
        if (mod == 0 && (p[1] & 7) == 5) len += 4;
    } else if (mod == 0 && rm == 5) {
        len += 4; /* rip-relative */
    }
    if (mod == 1) len += 1;
    if (mod == 2) len += 4;
    return len;
}
#endif

/* Is ret preceded by a call instruction? A return address always is; a
 * code pointer that merely sits on the stack (main's address, kept by
 * __libc_start_call_main; a callback) usually is not. Used only to vet
 * frame records found by scanning. Code is readable where it is executable. */
static int follows_call(struct sprof_walk_mem *m, uint64_t ret)
{
#if defined(__x86_64__)
    uint8_t before[16];
    if (ret < 16 || !code_read(m, ret - 16, before, 16)) return 1; /* cannot tell */
    const uint8_t *c = before + 16;
    if (c[-5] == 0xe8) return 1; /* call rel32 */
    for (unsigned k = 2; k <= 8; k++) {
        /* ff /2 with or without a REX prefix */
        if (c[-(int)k] == 0xff && ff_call_len(c - k + 1) == k) return 1;
        if (k >= 3 && (c[-(int)k] & 0xf0) == 0x40 && c[-(int)k + 1] == 0xff && ff_call_len(c - k + 2) == k - 1)
            return 1;
    }
    return 0;
#else
    (void)m;
    (void)ret;
    return 1;
#endif
}

/* Scan up from `from` (at most SPROF_SCAN_MAX above sp) for a frame
 * record. Frameless code saves callee-saved registers with pushes, so a
 * pair [saved word][code address] is not always a record: a saved zero
 * above a return address looks like the outermost record, and the chain
 * would end there. A record whose link leads to a second record is taken
 * at once (main's own link is often garbage: the second record's link is
 * not checked); a lone one (link 0, or its target unreadable) only if no
 * linked record lies further up. linked_only: skip lone ones. lone_out:
 * scan the candidate window only, return a linked record or 0 and leave
 * the first lone one in *lone_out. */
static uint64_t scan_record(struct sprof_walk_mem *m, uint64_t sp, uint64_t from, int linked_only, uint64_t *lone_out)
{
    uint64_t next, ret, end = sp + SPROF_SCAN_MAX, lone = 0;
    if (lone_out) end = sp + SPROF_CAND_WINDOW; /* first pass: the window only */
    for (uint64_t a = (from + 7) & ~7ull; a + 16 <= end; a += 8) {
        if (!mem_read(m, a, &next)) break;
        if (next == 0 ? linked_only : !next_is_record_link(m, a, next)) continue;
        if (!frame_record(m, a, &next, &ret) || !follows_call(m, ret)) continue;
        uint64_t n2, r2;
        if (next != 0 && frame_record(m, next, &n2, &r2) && follows_call(m, r2)) return a;
        if (!lone) lone = a;
        linked_only = 1; /* a lone record is known: only a linked one can beat it */
    }
    if (lone_out) {
        *lone_out = lone;
        return 0;
    }
    return lone;
}

/* Find the first frame record: rbp if it is one, else scan up from sp (as
 * far as candidates reach: a frameless function with a large frame that
 * uses rbp for data leaves its caller's record far above sp). */
static uint64_t first_record(struct sprof_walk_mem *m, uint64_t sp, uint64_t fp, uint32_t *flags)
{
    uint64_t next, ret;
    if (fp >= sp && frame_record(m, fp, &next, &ret) &&
        (next == 0 || next_is_record_link(m, fp, next) || ends_off_stack_chain(m, next)))
        return fp;
    /* In the window, a linked record wins at once. Beyond it the scan only
     * goes on when the window held a lone record (a saved zero may pose as
     * the outermost record): reading the rest of every stack without any
     * record (frameless code called from main, whose own link is garbage)
     * would cost a memory pass per sample for nothing. */
    uint64_t lone = 0, a = scan_record(m, sp, sp, 0, &lone);
    if (!a && lone) {
        a = scan_record(m, sp, sp + SPROF_CAND_WINDOW - 8, 1, NULL);
        if (!a) a = lone;
    }
    if (a) *flags |= SPROF_SAMPLE_FP_SCANNED;
    return a;
}

/* Where the stack's frame records end, as far as scanning can tell: from
 * the last record the chain recorded (at `last`, 0 if none), resume the
 * scan above it and follow links, again after each break, up to
 * SPROF_SCAN_MAX above sp. A chain found by scanning can start at a
 * frameless function's saved registers and end early; the records further
 * up are where the candidate scan has to reach, so that the offline CFI
 * unwinder finds every return address in between. Returns the highest
 * record address seen (0 if none). */
static uint64_t chain_top(struct sprof_walk_mem *m, uint64_t sp, uint64_t last)
{
    /* records below the end of the candidate window change nothing: start
     * above it; only linked records (a zero word above a code address is
     * common and cheap to skip) */
    uint64_t from = last + 16 > sp + SPROF_CAND_WINDOW ? last + 16 : sp + SPROF_CAND_WINDOW - 16;
    uint64_t top = last, at = scan_record(m, sp, from, 1, NULL);
    for (int steps = 0; at && steps < 4096; steps++) {
        uint64_t next, r;
        if (at > top) top = at;
        if (!frame_record(m, at, &next, &r)) break;
        at = next != 0 && next_is_record_link(m, at, next) ? next : scan_record(m, sp, at + 16, 1, NULL);
    }
    return top;
}

/* A chain that broke, or a scanned one of a single record (a lone saved
 * zero above a return address), may stop short of the real records. */
static int chain_suspect(uint32_t flags, uint32_t nframes)
{
    return (flags & SPROF_SAMPLE_CHAIN_BROKEN) || ((flags & SPROF_SAMPLE_FP_SCANNED) && nframes <= 1);
}

/* Index of the outermost chain record whose offset is known, nframes if none. */
static uint32_t last_known_index(const uint32_t *fpoff, uint32_t nframes)
{
    for (uint32_t i = nframes; i-- > 0;)
        if (fpoff[i] != SPROF_FPOFF_UNKNOWN) return i;
    return nframes;
}

/* Address of the outermost chain record whose offset is known, 0 if none. */
static uint64_t last_known_record(uint64_t sp, const uint32_t *fpoff, uint32_t nframes)
{
    uint32_t i = last_known_index(fpoff, nframes);
    return i < nframes ? sp + fpoff[i] : 0;
}

/* The depth cap cut the chain at record `at`: follow it on, only to know
 * where the records above lie (fpoff[n..]). The candidate scan then steps
 * from record to record over frames that hold nothing the offline
 * unwinder needs, as it does below the cap, instead of reading and
 * classifying every word up to the thread's root: a 500-deep recursion at
 * the default cap of 256 had ~1,100 words classified per sample, ~10 us of
 * the handler, which the cpuclock fallback charged to the recursion (its
 * share 2-4 pp above the bare program's at 4 kHz). *cflags gets
 * CHAIN_BROKEN if the longer chain broke (at main's record, where the
 * start code's rbp is no link, as a chain under the cap does): the scan
 * above its last record then runs as after any break. A chain that goes
 * on beyond what the candidates can hold (two a record) cannot reach the
 * root whatever is recorded: then nothing is added and *open_end is set,
 * so that nothing above the cap is scanned either (a 10,000-deep
 * recursion: following it and scanning for the rest took the handler
 * longer than a 10 kHz period under ASan, and the program never got past
 * it). Returns the count of records now known. */
static uint32_t walk_beyond(struct sprof_walk_mem *m, uint64_t sp, uint64_t at, uint32_t *fpoff, uint32_t n,
                            uint32_t *cflags, uint64_t seen, int *open_end)
{
    const uint32_t n0 = n, most = n0 + MAX_CAND / 2 - 64 < WALK_RECORDS ? n0 + MAX_CAND / 2 - 64 : WALK_RECORDS;
    while (n < most) {
        uint64_t next, r;
        if (at - sp >= SPROF_FPOFF_UNKNOWN || !chain_record(m, at, &next, &r, &seen)) break;
        fpoff[n++] = (uint32_t)(at - sp);
        if (next == 0 || ends_off_stack_chain(m, next)) return n; /* outermost frame */
        if (!next_is_record_link(m, at, next)) break;
        at = next;
    }
    if (n == most) {
        *open_end = 1;
        return n0;
    }
    *cflags |= SPROF_SAMPLE_CHAIN_BROKEN;
    return n;
}

/* The candidates of a walked chain, as far as the records reach (further
 * when the chain is suspect); sets STACK_CUT in *flags when they could not
 * reach that far. Shared by both walks. When the depth cap cut the chain
 * (TRUNCATED), cut_at is the record it left out: the records from there on
 * are followed (walk_beyond; seen: the walk's last executable return
 * address) and fpoff[nframes..nall-1] holds them, whose return addresses
 * are not in ret[]; how that longer chain ended counts here, not in the
 * sample's flags. */
static uint32_t chain_candidates(struct sprof_walk_mem *m, uint64_t sp, uint64_t stack_hi, uint32_t *fpoff,
                                 const uint64_t *ret, uint32_t nframes, uint64_t cut_at, uint64_t seen,
                                 uint32_t *flags, uint32_t *coff, uint64_t *cval)
{
    uint32_t nall = nframes, cf = *flags;
    int open_end = 0;
    if ((cf & SPROF_SAMPLE_TRUNCATED) && cut_at > sp)
        nall = walk_beyond(m, sp, cut_at, fpoff, nall, &cf, seen, &open_end);
    uint32_t li = last_known_index(fpoff, nall);
    uint64_t last = li < nall ? sp + fpoff[li] : 0, last_ret = li < nframes ? ret[li] : 0;
    if (li >= nframes && li < nall && !mem_read(m, last + 8, &last_ret)) last_ret = 0;
    /* The thread's outermost record (main's, its start routine's) links to
     * whatever the start code left in rbp: the chain breaks there on every
     * sample, and the scan above it for linked records read the start
     * code's frames and the environment each time, finding none (~2 us of
     * the handler at 10 kHz on the bench workload). Once that scan found
     * nothing above a record at or above the root floor, the same record
     * (address and return address) is not scanned above again. The window's
     * candidates stay: the frames between such a record and main's can be
     * frameless (json_parse: 99.8 -> 90 % complete without them). */
    int suspect = chain_suspect(cf, nall);
    int near_root = suspect && m->xc && last && m->root_floor && last >= m->root_floor;
    uint64_t top = last;
    int known_root = near_root && sprof_root_known(m->xc, last, last_ret);
    if (suspect && !known_root) {
        top = chain_top(m, sp, last);
        /* Not a chain found by scanning: its last record may be a pushed
         * pair anywhere below main's (ld.so's dlopen path), and taken for
         * the thread's root it would keep every later sample there short
         * of main (2-3 % of a dlopen-heavy program under load) */
        if (near_root && top == last && !(cf & SPROF_SAMPLE_FP_SCANNED))
            sprof_root_note(m->xc, last, last_ret);
    }
    /* No frame record anywhere near sp: a frameless function that uses rbp
     * for data holds a large frame (a 32 KiB local array). The offline CFI
     * unwinder steps it if it has the return addresses and saved registers
     * above it: record them as far as the stack goes (SPROF_SCAN_MAX) */
    uint64_t stack_end = stack_hi > sp + SPROF_SCAN_MAX ? sp + SPROF_SCAN_MAX : stack_hi;
    if (nall == 0) top = stack_end - 16;
    /* Likewise when the records found stop short of the thread's root,
     * broken or not, or were found by scanning or broke, at a record that
     * is not the thread's known outermost one: pushed pairs that link, the
     * last one just above root_floor but below main's frame (ld.so's dlopen
     * path; nofp_deep, where a pushed pointer into main's frame met a stale
     * return address there and the chain "ended" at a zero): code built
     * without frame pointers (CPython, most distributions' binaries) has
     * none, and the "records" scanning finds are pushed registers that
     * happen to sit below a return address (at times two that link, at
     * times one just above root_floor but below main's frame). The offline
     * unwinder steps every frame with CFI, from the return addresses
     * recorded up to main's frame and libc's start frames, which lie
     * within ~1 KiB above the registration (root_floor + 512): 4 KiB above
     * root_floor holds them without reading the environment's strings.
     * python3: 13.9 % of the samples lost their root at 2-8 KiB before;
     * tests/stacks nofp_deep 4-7 % complete. */
    /* need: where a scan that stops short (the perf_event copy ends)
     * cuts the stack. Not above the records when they are only extended in
     * case they stopped short (the chain may well have ended at main's),
     * nor above root_floor + 4096 (main's and the start code's frames lie
     * below; what scanning takes for records further up, in the
     * environment, is not the program's) */
    uint64_t need = UINT64_MAX;
    if (open_end) {
        need = top + 16; /* the root is out of reach (walk_beyond) */
    } else if (m->root_floor && sp < m->root_floor) {
        uint64_t root_hi = m->root_floor + 4096 < stack_end ? m->root_floor + 4096 : stack_end;
        need = root_hi;
        if (nall != 0 && top < m->root_floor + 4096 &&
            (top < m->root_floor || ((suspect || (cf & SPROF_SAMPLE_FP_SCANNED)) && !known_root))) {
            if (top >= m->root_floor && !((cf & SPROF_SAMPLE_FP_SCANNED) && nall <= 1)) need = top + 16;
            if (root_hi > top + 16) top = root_hi - 16;
        }
    }
    int cut = 0;
    uint32_t n = collect_candidates(m, sp, stack_hi, fpoff, ret, nframes, nall, top, need, coff, cval, &cut);
    if (cut) *flags |= SPROF_SAMPLE_STACK_CUT;
    return n;
}

uint32_t sprof_walk(struct sprof_rec_sample *rec, uint32_t cap, uint64_t pc, uint64_t sp, uint64_t fp,
                    struct sprof_walk_mem *m, uint32_t max_depth)
{
    if (max_depth > 512) max_depth = 512;
    if (cap < sprof_scratch_size(max_depth)) return 0;
    struct walk_tmp *w = tmp_of(rec, max_depth);
    m->xc = &w->xc;
    uint32_t *fpoff = w->fpoff, *coff = w->coff;
    uint64_t *cval = w->cval;
    uint64_t *ret = (uint64_t *)(rec + 1);
    uint32_t flags = 0;
    rec->pc = pc;
    rec->sp = sp;
    rec->fp = fp;
    struct assembled a = {0, 0};

    uint64_t rec_at = first_record(m, sp, fp, &flags), seen = 0;
    rec->fp0_off = rec_at ? (uint32_t)(rec_at - sp) : SPROF_FPOFF_UNKNOWN;
    while (rec_at) {
        uint64_t next, r;
        if (!chain_record(m, rec_at, &next, &r, &seen)) {
            flags |= SPROF_SAMPLE_CHAIN_BROKEN;
            break;
        }
        if (a.nframes >= max_depth) {
            flags |= SPROF_SAMPLE_TRUNCATED;
            break;
        }
        ret[a.nframes] = r;
        fpoff[a.nframes] = (uint32_t)(rec_at - sp);
        a.nframes++;
        if (next == 0 || ends_off_stack_chain(m, next)) break; /* outermost frame */
        if (!next_is_record_link(m, rec_at, next)) {
            flags |= SPROF_SAMPLE_CHAIN_BROKEN;
            break;
        }
        rec_at = next;
    }
    a.ncand = chain_candidates(m, sp, m->stack_hi, fpoff, ret, a.nframes, rec_at, seen, &flags, coff, cval);
    rec->flags |= flags;
    return finish(rec, cap, fpoff, coff, cval, a);
}

/* Where the kernel's walk found record `at`, as an offset from sp; unknown
 * when it lies below sp or 4 GiB or more above it: a handler on an
 * alternate signal stack links to the interrupted code's record on the
 * thread's own stack, anywhere in the address space (a truncated offset
 * named an address nobody walked). The offline unwinder finds such a
 * record from the link word above, which is then kept as a candidate. */
static uint32_t kernel_record_offset(uint64_t at, uint64_t sp)
{
    return at && at >= sp && at - sp < SPROF_FPOFF_UNKNOWN ? (uint32_t)(at - sp) : SPROF_FPOFF_UNKNOWN;
}

/* x86-64's rt_sigframe, from the trampoline's return slot: the kernel's
 * ucontext (uc_flags, uc_link, uc_stack, then the general registers), then
 * the siginfo */
enum { SIGFRAME_GREGS = 8 + SPROF_UC_GREGS, SIGFRAME_SIGINFO = 8 + 304 };

/* glibc's signal-return trampoline (__restore_rt): mov $15,%rax; syscall */
static int is_sigreturn_trampoline(struct sprof_walk_mem *m, uint64_t addr)
{
    static const uint8_t code[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
    uint8_t b[sizeof code];
    /* glibc's is in libc, there from the start: a word into code mapped
     * since (that may be gone) costs no system call */
    if (exec_kind(m, addr) != SPROF_EXEC_STABLE || !code_read(m, addr, b, sizeof b)) return 0;
    return memcmp(b, code, sizeof code) == 0;
}

/* pc is one of the trampoline's two instructions or its syscall's return
 * address: sp is where the handler's return left it, at the kernel's
 * ucontext (SPROF_UC_GREGS) */
static int in_trampoline(struct sprof_walk_mem *m, uint64_t pc)
{
    return is_sigreturn_trampoline(m, pc) || (pc >= 7 && is_sigreturn_trampoline(m, pc - 7)) ||
           (pc >= 9 && is_sigreturn_trampoline(m, pc - 9));
}

/* perf_event: the kernel already walked the frame pointers (kchain: return
 * addresses after the pc). Validate its start against the dump; if rbp was
 * not a frame record, the kernel chain is garbage: rebuild what the dump
 * holds by scanning it instead. */
uint32_t sprof_build_from_dump(struct sprof_rec_sample *rec, uint32_t cap, uint64_t pc, uint64_t sp,
                               uint64_t fp, const uint64_t *kchain, uint32_t nk, int kchain_full,
                               const uint8_t *dump, uint64_t dump_len, uint64_t stack_hi, uint64_t thr_lo,
                               uint64_t thr_hi, uint64_t root_floor, uint32_t max_depth)
{
    if (max_depth > 512) max_depth = 512;
    if (cap < sprof_scratch_size(max_depth)) return 0;
    struct walk_tmp *w = tmp_of(rec, max_depth);
    uint32_t *fpoff = w->fpoff, *coff = w->coff;
    uint64_t *cval = w->cval;
    uint64_t *ret = (uint64_t *)(rec + 1);
    struct sprof_walk_mem m = {.lo = sp, .hi = sp + (dump_len & ~7ull), .copy = dump, .stack_hi = stack_hi, .xc = &w->xc,
                              .thr_lo = thr_lo, .thr_hi = thr_hi, .root_floor = root_floor};
    struct sprof_walk_mem whole = m;
    if (stack_hi > sp) whole.hi = stack_hi; /* for range checks only: reads beyond the dump fail below */
    uint32_t flags = SPROF_SAMPLE_KERNEL_CHAIN;
    uint64_t cut_at = 0; /* the record the depth cap left out */
    struct assembled a = {0, 0};
    rec->pc = pc;
    rec->sp = sp;
    rec->fp = fp;

    int fp_ok = 0;
    if (!(fp & 7) && fp >= sp && (stack_hi <= sp || fp < stack_hi) && nk > 0 && is_exec(&m, kchain[0])) {
        uint64_t next, r;
        /* inside the dump the record must agree with the kernel's first return */
        if (fp + 16 <= m.hi) fp_ok = frame_record(&m, fp, &next, &r) && r == kchain[0];
        else fp_ok = 1;
    }
    /* Off the thread's stack with rbp on it: a frameless function (or a
     * tail call) in a handler on an alternate signal stack, whose rbp is
     * still the interrupted code's. The kernel walked the interrupted
     * frames from there: keep its chain (offline, CFI reaches them
     * through the signal frame; its records' offsets are unknown). */
    if (!fp_ok && thr_hi && !(fp & 7) && fp >= thr_lo && fp < thr_hi && nk > 0 && is_exec(&m, kchain[0])) fp_ok = 1;
    if (fp_ok) {
        rec->fp0_off = kernel_record_offset(fp, sp);
        uint64_t at = fp;
        int stopped = 0;
        for (uint32_t i = 0; i < nk; i++) {
            if (a.nframes >= max_depth) {
                flags |= SPROF_SAMPLE_TRUNCATED;
                cut_at = at;
                stopped = 1;
                break;
            }
            if (!is_exec(&m, kchain[i])) {
                flags |= SPROF_SAMPLE_CHAIN_BROKEN;
                stopped = 1;
                break;
            }
            ret[a.nframes] = kchain[i];
            fpoff[a.nframes] = kernel_record_offset(at, sp);
            /* a record the copy cannot hold (the interrupted code's, on the
             * thread's stack): frames between it and the copy's may be
             * missing, which the offline unwinder says if it needs them */
            if (at && fpoff[a.nframes] == SPROF_FPOFF_UNKNOWN) flags |= SPROF_SAMPLE_STACK_CUT;
            a.nframes++;
            uint64_t next;
            if (at && mem_read(&m, at, &next) && next > at) at = next;
            else at = 0;
        }
        /* The kernel's chain stops at perf_event_max_stack entries (127 by
         * default; only root may raise it): follow the frame records on
         * through the stack copy. What it does not hold is said
         * (STACK_CUT); the copy grows for such threads (perf_adapt.c). */
        while (kchain_full && !stopped) {
            uint64_t next, r;
            if (!at || !frame_record(&m, at, &next, &r)) {
                flags |= SPROF_SAMPLE_STACK_CUT;
                break;
            }
            if (a.nframes >= max_depth) {
                flags |= SPROF_SAMPLE_TRUNCATED;
                cut_at = at;
                break;
            }
            ret[a.nframes] = r;
            fpoff[a.nframes] = (uint32_t)(at - sp);
            a.nframes++;
            if (next == 0) break; /* outermost frame */
            if (!next_is_record_link(&whole, at, next)) {
                flags |= SPROF_SAMPLE_CHAIN_BROKEN;
                break;
            }
            at = next;
        }
        /* The kernel stops at a link that is not a frame pointer (rbp was a
         * frameless function's data register): say so, so that the scan for
         * the records further up runs as for a broken walk of our own. */
        uint64_t next, last = last_known_record(sp, fpoff, a.nframes);
        if (last && !kchain_full && mem_read(&m, last, &next) && next != 0 && !next_is_record_link(&whole, last, next))
            flags |= SPROF_SAMPLE_CHAIN_BROKEN;
    } else {
        /* rbp is not a frame record (frameless code using rbp): scan the dump */
        uint64_t at = first_record(&m, sp, fp < sp ? 0 : fp, &flags);
        flags |= SPROF_SAMPLE_FP_SCANNED;
        rec->fp0_off = at ? (uint32_t)(at - sp) : SPROF_FPOFF_UNKNOWN;
        while (at) {
            uint64_t next, r;
            if (!frame_record(&m, at, &next, &r)) {
                /* a record beyond the copy: the chain goes on unrecorded */
                flags |= at + 16 > m.hi ? SPROF_SAMPLE_CHAIN_BROKEN | SPROF_SAMPLE_STACK_CUT : SPROF_SAMPLE_CHAIN_BROKEN;
                break;
            }
            if (a.nframes >= max_depth) {
                flags |= SPROF_SAMPLE_TRUNCATED;
                cut_at = at;
                break;
            }
            ret[a.nframes] = r;
            fpoff[a.nframes] = (uint32_t)(at - sp);
            a.nframes++;
            if (next == 0) break;
            if (!next_is_record_link(&whole, at, next)) {
                flags |= SPROF_SAMPLE_CHAIN_BROKEN;
                break;
            }
            at = next;
        }
    }
    a.ncand = chain_candidates(&m, sp, stack_hi > sp ? stack_hi : m.hi, fpoff, ret, a.nframes, cut_at, 0, &flags, coff,
                               cval);
    /* A chain rebuilt from the dump (rbp was a frameless function's data:
     * glibc's msort under qsort) is complete only if the dump holds the
     * thread's outermost record, which is above root_floor: a dump that
     * ends below it cut the stack, though no word in it says so (the
     * records above a caller's 4 KiB buffer). Saying so grows the copy
     * (perf_adapt.c). */
    if ((flags & (SPROF_SAMPLE_CHAIN_BROKEN | SPROF_SAMPLE_FP_SCANNED)) && root_floor && m.hi <= root_floor &&
        sp < root_floor)
        flags |= SPROF_SAMPLE_STACK_CUT;
    /* In the signal trampoline on an alternate stack: the frames it returns
     * to are on the thread's stack, which the copy does not hold */
    uint64_t rsp2;
    if (thr_hi && mem_read(&m, sp + SPROF_UC_GREGS + SPROF_UC_RSP * 8, &rsp2) && rsp2 >= thr_lo && rsp2 < thr_hi &&
        in_trampoline(&m, pc)) /* the code lookups last: every fiber sample comes this way */
        flags |= SPROF_SAMPLE_STACK_CUT;
    rec->flags |= flags;
    return finish(rec, cap, fpoff, coff, cval, a);
}

/* The offset from sp of the sample's next word, from frame-then-candidate
 * index *from on, that returns into the signal trampoline: the handler's
 * outermost record holds it (its chain ends there, ends_off_stack_chain),
 * or a candidate does. *from moves past it. SPROF_FPOFF_UNKNOWN if none. */
static uint32_t sigreturn_word_off(const struct sprof_rec_sample *rec, struct sprof_walk_mem *m, uint32_t *from)
{
    uint32_t nf = rec->nframes, nc = rec->ncand;
    const struct sprof_rec_arrays a = sprof_rec_arrays_of(rec + 1, nf, nc);
    for (uint32_t i = *from; i < nf + nc; i++) {
        uint32_t off = i >= nf ? a.coff[i - nf] : a.fpoff[i] == SPROF_FPOFF_UNKNOWN ? SPROF_FPOFF_UNKNOWN : a.fpoff[i] + 8;
        uint64_t val = i < nf ? a.ret[i] : a.cval[i - nf];
        if (off != SPROF_FPOFF_UNKNOWN && !SPROF_CAND_IS_MARKER(off) && is_sigreturn_trampoline(m, val)) {
            *from = i + 1;
            return off;
        }
    }
    *from = nf + nc;
    return SPROF_FPOFF_UNKNOWN;
}

/* Room for `extra` more candidates after rec's: the values move up behind
 * the longer offset array (last first). Returns the new arrays' first free
 * offset slot and value slot (index rec->ncand before the call), or 0 when
 * the record would not fit in cap; rec's ncand and size are updated. */
static int append_room(struct sprof_rec_sample *rec, uint32_t cap, uint32_t extra, uint32_t **coff_at,
                       uint64_t **cval_at)
{
    uint32_t nf = rec->nframes, nc = rec->ncand, total = nc + extra;
    uint64_t *ret = (uint64_t *)(rec + 1);
    uint32_t *coff = (uint32_t *)(ret + nf) + sprof_pad8(nf * 4u) / 4u;
    uint64_t *cval = (uint64_t *)(void *)(coff + sprof_pad8(nc * 4u) / 4u);
    uint32_t size = (uint32_t)sizeof *rec + nf * 8u + sprof_pad8(nf * 4u) + sprof_pad8(total * 4u) + total * 8u;
    if (size > cap || total > 0xffffu) return 0;
    uint64_t *cval_new = (uint64_t *)(void *)(coff + sprof_pad8(total * 4u) / 4u);
    memmove(cval_new, cval, nc * 8u);
    if (total & 1) coff[total] = 0;
    rec->ncand = (uint16_t)total;
    rec->h.size = size;
    *coff_at = coff + nc;
    *cval_at = cval_new + nc;
    return 1;
}

/* Is pc just after the trampoline's syscall (a sample in its rt_sigreturn)? */
int sprof_in_sigreturn_call(uint64_t pc)
{
    struct sprof_walk_mem m;
    memset(&m, 0, sizeof m);
    return pc >= 9 && is_sigreturn_trampoline(&m, pc - 9);
}

/* Is the sample in a signal handler's frames or its trampoline (on an
 * alternate signal stack, the interrupted frames are on the thread's own
 * stack)? */
int sprof_rec_has_sigframe(const struct sprof_rec_sample *rec)
{
    struct sprof_walk_mem m;
    memset(&m, 0, sizeof m);
    uint32_t from = 0;
    return is_sigreturn_trampoline(&m, rec->pc) || sigreturn_word_off(rec, &m, &from) != SPROF_FPOFF_UNKNOWN;
}

/* The signal whose handler a perf stack copy (dump, len bytes from sp) was
 * taken in: the frame records from fp lead to the one that returns into
 * the signal trampoline (restorer, the handler's sa_restorer), whose return
 * slot starts the rt_sigframe. 0 if no such record is in the copy. */
int sprof_dump_signal(uint64_t sp, uint64_t fp, const uint8_t *dump, uint64_t len, uint64_t restorer)
{
    struct sprof_walk_mem m = {.lo = sp, .hi = sp + (len & ~7ull), .copy = dump};
    uint64_t next, ret;
    for (uint32_t steps = 0; steps < 64 && fp >= sp && mem_read(&m, fp, &next) && mem_read(&m, fp + 8, &ret); steps++) {
        if (ret == restorer) {
            uint64_t word;
            return mem_read(&m, fp + 8 + SIGFRAME_SIGINFO, &word) ? (int)(uint32_t)word : 0; /* si_signo */
        }
        if (next <= fp) break;
        fp = next;
    }
    return 0;
}

/* A sample taken in a handler that runs on an alternate signal stack: the
 * frames it interrupted are on the thread's own stack, which the walk of
 * the alternate stack never reads. Find the kernel's rt_sigframe among the
 * candidates (the handler's return address is the trampoline's; the
 * ucontext follows it: uc_flags, uc_link, uc_stack, then the general
 * registers, rbp 10, rsp 15), and if the interrupted rsp is on the thread's
 * stack, append that stack's candidates from there, after a
 * SPROF_CAND_REBASE word whose value is that rsp. The offline CFI unwinder
 * then steps on through the interrupted frames. Returns the new size. */
uint32_t sprof_add_interrupted_stack(struct sprof_rec_sample *rec, uint32_t cap, struct sprof_walk_mem *m,
                                     uint64_t thr_lo, uint64_t thr_hi, uint32_t max_depth)
{
    if (max_depth > 512) max_depth = 512;
    uint64_t rsp2 = 0, rbp2 = 0;
    if (in_trampoline(m, rec->pc)) { /* the handler has returned: sp is at the ucontext */
        uint64_t gregs = rec->sp + SPROF_UC_GREGS;
        if (!mem_read(m, gregs + SPROF_UC_RSP * 8, &rsp2) || !mem_read(m, gregs + SPROF_UC_RBP * 8, &rbp2)) rsp2 = 0;
    }
    for (uint32_t from = 0, off; !rsp2 && (off = sigreturn_word_off(rec, m, &from)) != SPROF_FPOFF_UNKNOWN;) {
        uint64_t gregs = rec->sp + off + SIGFRAME_GREGS;
        if (!mem_read(m, gregs + SPROF_UC_RSP * 8, &rsp2) || !mem_read(m, gregs + SPROF_UC_RBP * 8, &rbp2)) rsp2 = 0;
    }
    if (!rsp2 || rsp2 < thr_lo || rsp2 >= thr_hi || (rsp2 & 7)) return rec->h.size;
    struct walk_tmp *w = tmp_of(rec, max_depth);
    struct sprof_walk_mem m2 = {.lo = rsp2, .hi = thr_hi, .stack_hi = thr_hi, .xc = m->xc};
    /* as far as the interrupted frame records go (or a scan finds them) */
    uint64_t top = 0, at = rbp2, next, r;
    for (int k = 0; k < 4096 && at >= rsp2 && frame_record(&m2, at, &next, &r); k++) {
        top = at;
        if (next == 0 || !next_is_record_link(&m2, at, next)) break;
        at = next;
    }
    if (!top) top = chain_top(&m2, rsp2, 0);
    int cut = 0;
    uint32_t n2 = collect_candidates(&m2, rsp2, thr_hi, NULL, NULL, 0, 0, top, UINT64_MAX, w->coff, w->cval, &cut);
    uint32_t *coff;
    uint64_t *cval;
    if (!n2 || !append_room(rec, cap, 1 + n2, &coff, &cval)) return rec->h.size;
    coff[0] = SPROF_CAND_REBASE;
    cval[0] = rsp2;
    memcpy(coff + 1, w->coff, n2 * 4u);
    memcpy(cval + 1, w->cval, n2 * 8u);
    if (cut) rec->flags |= SPROF_SAMPLE_STACK_CUT;
    return rec->h.size;
}

/* ld.so's lazy-binding trampoline (_dl_runtime_resolve_xsave*: a third of
 * a dlopen-heavy program's time, in its xsave/xrstor) realigns the stack
 * below a 1-3 KiB register save area and keeps its CFA in rbx: without rbx
 * its caller is unknown. Only samples in the dynamic linker carry it, and
 * only a stack address (a CFA base points there), so stacks elsewhere stay
 * shared as before (stack_table.c shares none with this word). */
uint32_t sprof_add_rbx(struct sprof_rec_sample *rec, uint32_t cap, uint64_t rbx, uint64_t stack_hi)
{
    if (!sprof_in_dynamic_linker(rec->pc) || rbx < rec->sp || rbx >= stack_hi || (rbx & 7)) return rec->h.size;
    uint32_t *coff;
    uint64_t *cval;
    if (append_room(rec, cap, 1, &coff, &cval)) {
        coff[0] = SPROF_CAND_RBX;
        cval[0] = rbx;
    }
    return rec->h.size;
}
