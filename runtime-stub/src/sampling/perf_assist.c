/* perf_event: the stacks no copy can hold.
 *
 * The kernel copies at most ~64 KiB of user stack into a sample (a record's
 * size is 16-bit), and only the stack sp is on. A frameless function with a
 * 64 KiB frame keeps its return address beyond any copy, and a handler on an
 * alternate signal stack that interrupted a frameless function has the
 * interrupted return address on the thread's own stack, which no copy
 * holds: such samples were marked STACK_CUT and shown incomplete. When a
 * thread's samples stay cut with the largest copy (perf_adapt.c), the
 * writer asks the kernel to also signal that thread at each overflow
 * (F_SETOWN_EX to its tid, F_SETSIG, O_ASYNC on its event: perf queues the
 * signal with every overflow once the event has an owner). The signal
 * lands on the thread's next return to user mode: after a user-mode
 * sample, at the very instruction the sample was taken at; after a
 * kernel-mode one, where the system call or fault returns, whose user
 * context is the one the sample recorded. No user code runs in between,
 * so the live stack the handler walks (as the cpuclock handler does, with
 * no size limit) is the sampled one. Its walk goes to the thread's sample
 * ring, marked SPROF_SAMPLE_ASSIST_ENTRY, with the time it was taken and a
 * hash of the words just above sp; the writer keeps it here and, for each
 * cut sample of that thread, takes the first walk at or after the
 * sample's time, checks that sp, pc (or pc - 2: a restarted system call)
 * and the hashed words match the sample's registers and copy, and keeps
 * the perf sample's time, weight and kernel flags with the walk's frames
 * and candidates. A sample whose walk does not match (the program had the
 * signal blocked, or a system call wrote into the hashed words) stays cut;
 * a thread whose walks hardly ever match is signalled no more.
 *
 * Only such threads are signalled: the signal costs a walk (~5-10 us) per
 * sample and, like the cpuclock mechanism's, may interrupt a system call
 * (SA_RESTART restarts most). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

enum {
    ASSIST_BYTES = 1024 * 1024,  /* the walks the writer keeps per thread until joined */
    HASH_BYTES = 256,            /* stack bytes above sp both sides hash */
    WAIT_NS = 20 * 1000 * 1000,  /* how long a sample waits for its thread's walk */
};

struct assist_entry {
    uint32_t len;      /* the walk's record, after this header */
    uint32_t hash_len; /* stack bytes hashed above sp */
    uint64_t hash;
};

struct sprof_perf_assist {
    uint32_t head, tail; /* the entries are buf[head, tail) */
    uint64_t newest_ns;  /* the time of the newest walk taken */
    uint32_t matched, unmatched; /* cut samples joined to a walk, or not */
    uint8_t buf[ASSIST_BYTES];
};

#define STACK_FLAGS                                                                                     \
    (SPROF_SAMPLE_TRUNCATED | SPROF_SAMPLE_FP_SCANNED | SPROF_SAMPLE_CHAIN_BROKEN |                    \
     SPROF_SAMPLE_KERNEL_CHAIN | SPROF_SAMPLE_OFF_STACK | SPROF_SAMPLE_STACK_CUT)

uint64_t sprof_perf_assist_hash(const uint8_t *p, uint32_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Writer, io_lock held: what the thread's handler needs to walk (the
 * signal, its scratch and ring, the kept walks). */
int sprof_perf_assist_ready(struct sprof_thread *t)
{
    if (!g_sprof.cfg.perf_assist || t->assist || !t->perf_base) return -1;
    if (!g_sprof.sig && sprof_signal_install() != 0) return -1;
    if (!sprof_signal_still_ours()) return -1;
    if (sprof_signal_walk_buffers(t) != 0) return -1;
    void *a = mmap(NULL, sizeof *t->assist, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) return -1;
    t->assist = a;
    g_sprof.walked_threads++;
    return 0;
}

/* Writer, io_lock held, after sprof_perf_assist_ready: signal the thread
 * at each overflow of its event (the one it has now). */
int sprof_perf_assist_start(struct sprof_thread *t)
{
    if (!t->assist) return -1;
    int fd = sprof_fd_checked(&t->perf_fd);
    atomic_store_explicit(&t->assist_on, 1, memory_order_release); /* scratch and ring are set */
    if (sprof_perf_signal_owner(fd, (pid_t)t->tid) != 0) {
        atomic_store(&t->assist_on, 0);
        return -1;
    }
    return 0;
}

/* Signal handler, on the thread: its stack as the overflow left it. */
void sprof_perf_assist_signal(struct sprof_thread *t, int fd, void *uc)
{
    if (!atomic_load_explicit(&g_sprof.running, memory_order_relaxed) || sprof_control_paused()) return;
    if (fd != sprof_fd_load(&t->perf_fd) || !t->scratch || !t->ring.buf) return;
    uint32_t size = sprof_signal_walk_context(t, uc, 0);
    if (!size) return;
    struct sprof_rec_sample *rec = (struct sprof_rec_sample *)t->scratch;
    uint64_t pc, sp, fp;
    sprof_regs_from_ucontext(uc, &pc, &sp, &fp);
    /* the words just above sp, as the copy has them: on the thread's own
     * stack up to HASH_BYTES, elsewhere (an alternate stack) within sp's page */
    uint64_t room = sp >= t->stack_lo && sp < t->stack_hi ? t->stack_hi - sp : 4096 - (sp & 4095);
    struct assist_entry e = {.hash_len = (uint32_t)(room < HASH_BYTES ? room : HASH_BYTES)};
    e.hash = sprof_perf_assist_hash((const uint8_t *)(uintptr_t)sp, e.hash_len);
    e.len = size;
    uint8_t *dst = sprof_ring_reserve(&t->ring, size + (uint32_t)sizeof e);
    if (!dst) return; /* its sample stays cut, counted as not matched */
    rec->flags |= SPROF_SAMPLE_ASSIST_ENTRY;
    rec->h.size = size + (uint32_t)sizeof e; /* the ring's unit: the walk, then its entry header */
    memcpy(dst, rec, size);
    memcpy(dst + size, &e, sizeof e);
    sprof_ring_commit(&t->ring, size + (uint32_t)sizeof e);
}

static struct assist_entry *entry_at(struct sprof_perf_assist *a, uint32_t off)
{
    return (struct assist_entry *)(void *)(a->buf + off);
}

static uint32_t entry_bytes(const struct assist_entry *e)
{
    return (uint32_t)sizeof *e + e->len;
}

static uint32_t queued_entry_bytes(const uint8_t *p)
{
    return entry_bytes((const struct assist_entry *)(const void *)p);
}

static const struct sprof_rec_sample *entry_rec(const struct assist_entry *e)
{
    return (const struct sprof_rec_sample *)(const void *)(e + 1);
}

/* Writer: a walk from the thread's ring, kept until a sample joins it. */
void sprof_perf_assist_take(struct sprof_thread *t, const void *rec, uint32_t len)
{
    struct sprof_perf_assist *a = t->assist;
    struct assist_entry e;
    if (!a || len < sizeof(struct sprof_rec_sample) + sizeof e) return;
    memcpy(&e, (const uint8_t *)rec + len - sizeof e, sizeof e);
    if (e.len != len - sizeof e || (e.len & 7u)) return;
    uint32_t need = entry_bytes(&e);
    if (need > sizeof a->buf) return;
    sprof_queue_make_room(a->buf, sizeof a->buf, &a->head, &a->tail, need, queued_entry_bytes);
    struct assist_entry *dst = entry_at(a, a->tail);
    *dst = e;
    memcpy(dst + 1, rec, e.len);
    struct sprof_rec_sample *r = (struct sprof_rec_sample *)(void *)(dst + 1);
    r->h.size = e.len;
    r->flags &= ~SPROF_SAMPLE_ASSIST_ENTRY;
    a->tail += need;
    if (r->time_ns > a->newest_ns) a->newest_ns = r->time_ns;
}

/* Writer: should the drain stop at a sample of this time, its thread's
 * walk not taken yet? Only while the thread runs, for WAIT_NS at most,
 * while its walks do match (a thread that blocks the signal, or whose
 * signals ThreadSanitizer defers, walks late or never) and while its ring
 * is under a quarter full: a walk is never worth a lost sample. Not while
 * perf_adapt.c reopens the event: the old ring is drained whole. */
int sprof_perf_assist_wait(struct sprof_thread *t, uint64_t sample_ns, uint64_t now_ns)
{
    const struct sprof_perf_assist *a = t->assist;
    return a && atomic_load_explicit(&t->assist_on, memory_order_relaxed) &&
           atomic_load_explicit(&g_sprof.running, memory_order_relaxed) &&
           atomic_load(&t->state) == SLOT_ACTIVE && atomic_load(&t->attach) != ATTACH_BUSY &&
           a->newest_ns < sample_ns && now_ns < sample_ns + WAIT_NS &&
           (uint64_t)a->matched * 4u >= a->unmatched && sprof_perf_fill_256(t) < 64;
}

static uint32_t find_walk(struct sprof_perf_assist *a, struct sprof_rec_sample *rec, uint32_t cap,
                          const uint8_t *dump, uint64_t dump_len);

/* Have the thread's walks matched its cut samples (at least 64, and 3 in
 * 4)? Then the copy need no longer be the largest. */
int sprof_perf_assist_proven(const struct sprof_thread *t)
{
    const struct sprof_perf_assist *a = t->assist;
    return a && atomic_load(&t->assist_on) && a->matched >= 64 && a->matched >= 3u * (uint64_t)a->unmatched;
}

/* Writer: rec (a cut perf sample, built from dump) with the stack of the
 * walk taken for it. Returns the new record size, 0 to keep rec as it is.
 * A thread whose walks hardly ever match (it keeps the signal blocked
 * where its stacks are deep) is no longer signalled: the walks would only
 * cost it CPU. */
uint32_t sprof_perf_assist_join(struct sprof_thread *t, struct sprof_rec_sample *rec, uint32_t cap,
                                const uint8_t *dump, uint64_t dump_len)
{
    struct sprof_perf_assist *a = t->assist;
    if (!a) return 0;
    uint32_t size = find_walk(a, rec, cap, dump, dump_len);
    if (size) {
        a->matched++;
        g_sprof.walked_samples++; /* STATS */
    } else {
        a->unmatched++;
        g_sprof.unwalked_samples++;
    }
    if (a->unmatched >= 64 && (uint64_t)a->matched * 4u < a->unmatched) sprof_perf_assist_stop(t);
    return size;
}

/* The context a signal handler's return restores (its ucontext's registers). */
struct sigreturn_ctx {
    uint64_t rbp, rbx, rsp, rip;
};

static int dump_word(const uint8_t *dump, uint64_t dump_len, uint32_t off, uint64_t *v)
{
    if (off + 8u > dump_len) return 0;
    memcpy(v, dump + off, 8);
    return 1;
}

/* A sample in the signal trampoline's rt_sigreturn (a handler on an
 * alternate stack returned: sp is on it, at the kernel's ucontext, which
 * the copy holds). The signal lands once the call has restored the
 * interrupted context, on the thread's own stack: the walk starts there,
 * at the registers the copy's ucontext gives, not at the sample's. */
static int sigreturn_context(const struct sprof_rec_sample *rec, const uint8_t *dump, uint64_t dump_len,
                             struct sigreturn_ctx *c)
{
    return (rec->flags & SPROF_SAMPLE_KERNEL) && sprof_in_sigreturn_call(rec->pc) &&
           dump_word(dump, dump_len, SPROF_UC_GREGS + SPROF_UC_RBP * 8, &c->rbp) &&
           dump_word(dump, dump_len, SPROF_UC_GREGS + SPROF_UC_RBX * 8, &c->rbx) &&
           dump_word(dump, dump_len, SPROF_UC_GREGS + SPROF_UC_RSP * 8, &c->rsp) &&
           dump_word(dump, dump_len, SPROF_UC_GREGS + SPROF_UC_RIP * 8, &c->rip) && c->rsp != rec->sp;
}

/* rec (in the trampoline, its sp on the alternate stack) with the walk
 * from the restored context: the ucontext's registers as words at their
 * offsets from rec's sp, then a SPROF_CAND_REBASE to the walk's sp and the
 * walk's words after it (its frame records' link and return words, its
 * candidates), so the offline unwinder steps from the trampoline through
 * the ucontext into the walked frames, as it does a cpuclock sample in a
 * handler on an alternate stack (sprof_add_interrupted_stack). No hash of
 * the words above the walk's sp: the copy does not hold that stack; pc, sp
 * and rbp all matching the ucontext's, and no user code run in between,
 * say it is this sample's. Returns the new size, 0 if it does not fit. */
static uint32_t join_after_sigreturn(struct sprof_rec_sample *rec, uint32_t cap, const struct sprof_rec_sample *w,
                                     const struct sigreturn_ctx *c)
{
    const uint32_t nf = w->nframes, ncw = w->ncand;
    const struct sprof_rec_arrays wa = sprof_rec_arrays_of(w + 1, nf, ncw);
    /* the walk's frame records, from its sp (the first one's may be in fp0_off) */
    uint32_t first_off = nf && wa.fpoff[0] == SPROF_FPOFF_UNKNOWN ? w->fp0_off : nf ? wa.fpoff[0] : 0;
    for (uint32_t i = 0; i < nf; i++)
        if ((i ? wa.fpoff[i] : first_off) == SPROF_FPOFF_UNKNOWN) return 0; /* not placed: the sample stays cut */
    uint32_t total = 4u + 1u + (nf ? 2u * nf - 1u : 0u);
    for (uint32_t i = 0; i < ncw; i++) total += wa.coff[i] != SPROF_CAND_RBX; /* the ucontext has rbx */
    uint32_t size = (uint32_t)sizeof *rec + sprof_pad8(total * 4u) + total * 8u;
    if (size > cap || total > 0xffffu) return 0;
    /* rec's own words go (of the alternate stack, the unwind needs only
     * the ucontext); w is in the walks' arena, not in rec */
    uint32_t *coff = (uint32_t *)(void *)(rec + 1);
    uint64_t *cval = (uint64_t *)(void *)(coff + sprof_pad8(total * 4u) / 4u);
    const uint32_t reg_at[4] = {SPROF_UC_RBP, SPROF_UC_RBX, SPROF_UC_RSP, SPROF_UC_RIP};
    const uint64_t reg_val[4] = {c->rbp, c->rbx, c->rsp, c->rip};
    uint32_t n = 0;
    for (int k = 0; k < 4; k++) {
        coff[n] = SPROF_UC_GREGS + reg_at[k] * 8u;
        cval[n++] = reg_val[k];
    }
    coff[n] = SPROF_CAND_REBASE;
    cval[n++] = w->sp;
    for (uint32_t i = 0; i < nf; i++) {
        uint32_t off = i ? wa.fpoff[i] : first_off;
        coff[n] = off + 8u; /* the record's return address */
        cval[n++] = wa.ret[i];
        if (i + 1 < nf) { /* its link to the next one */
            coff[n] = off;
            cval[n++] = w->sp + wa.fpoff[i + 1];
        }
    }
    for (uint32_t i = 0; i < ncw; i++) {
        if (wa.coff[i] == SPROF_CAND_RBX) continue;
        coff[n] = wa.coff[i];
        cval[n++] = wa.cval[i];
    }
    if (n & 1) coff[n] = 0; /* the offset array's padding */
    rec->nframes = 0;
    rec->ncand = (uint16_t)n;
    rec->fp0_off = SPROF_FPOFF_UNKNOWN;
    rec->h.size = size;
    rec->flags = (rec->flags & ~STACK_FLAGS) | (w->flags & STACK_FLAGS) | (rec->flags & SPROF_SAMPLE_OFF_STACK);
    return size;
}

static uint32_t find_walk(struct sprof_perf_assist *a, struct sprof_rec_sample *rec, uint32_t cap,
                          const uint8_t *dump, uint64_t dump_len)
{
    /* samples come in time order: walks before this one serve no later sample */
    while (a->head < a->tail && entry_rec(entry_at(a, a->head))->time_ns < rec->time_ns)
        a->head += entry_bytes(entry_at(a, a->head));
    if (a->head >= a->tail) return 0;
    const struct assist_entry *e = entry_at(a, a->head);
    const struct sprof_rec_sample *w = entry_rec(e);
    struct sigreturn_ctx ctx;
    if (sigreturn_context(rec, dump, dump_len, &ctx))
        return w->pc == ctx.rip && w->sp == ctx.rsp && w->fp == ctx.rbp ? join_after_sigreturn(rec, cap, w, &ctx) : 0;
    if (w->sp != rec->sp || (w->pc != rec->pc && w->pc + 2 != rec->pc)) return 0;
    if (e->hash_len > dump_len || sprof_perf_assist_hash(dump, e->hash_len) != e->hash || e->len > cap) return 0;
    struct sprof_rec_sample keep = *rec;
    memcpy(rec, w, e->len);
    rec->tid = keep.tid;
    rec->time_ns = keep.time_ns;
    rec->weight_ns = keep.weight_ns;
    rec->pc = keep.pc;
    rec->flags = (keep.flags & ~STACK_FLAGS) | (w->flags & STACK_FLAGS);
    return e->len;
}

/* Writer: no more signals to this thread (the program took the signal
 * over: its handler must never receive ours). */
void sprof_perf_assist_stop(struct sprof_thread *t)
{
    if (!atomic_exchange(&t->assist_on, 0)) return;
    int fd = sprof_fd_checked(&t->perf_fd);
    long fl = fd >= 0 ? syscall(SYS_fcntl, fd, F_GETFL) : -1;
    if (fl >= 0) syscall(SYS_fcntl, fd, F_SETFL, fl & ~(long)O_ASYNC);
}

void sprof_perf_assist_free(struct sprof_thread *t)
{
    atomic_store(&t->assist_on, 0);
    if (t->assist) munmap(t->assist, sizeof *t->assist);
    t->assist = NULL;
}
