/* The writer's half of perf_event's live walks (runtime-stub/src/sampling/
 * perf_assist.c) on its own: walks as the handler leaves them in the ring,
 * then cut samples joined to them. A sample takes the first walk at or
 * after its time, and only if sp, pc (or pc - 2: a restarted system call)
 * and the hashed stack bytes match; it keeps its own time, weight, pc and
 * kernel flags; a sample in rt_sigreturn takes the walk at the context
 * its copy's ucontext restores; a thread whose walks do not match is
 * signalled no more;
 * the drain waits for a walk only while walks match. No event is opened,
 * no signal sent. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

struct sprof_globals g_sprof;

/* what perf_assist.c calls and this test does not exercise */
int sprof_fd_checked(int *fd) { return *fd; }
int sprof_signal_install(void) { return -1; }
int sprof_signal_still_ours(void) { return 1; }
int sprof_perf_signal_owner(int fd, pid_t tid) { (void)fd, (void)tid; return -1; }
/* the buffers set up here beforehand, or none */
int sprof_signal_walk_buffers(struct sprof_thread *t) { return t->scratch && t->ring.buf ? 0 : -1; }
void *sprof_ring_reserve(struct sprof_ring *r, uint32_t len) { (void)r, (void)len; return NULL; }
void sprof_ring_commit(struct sprof_ring *r, uint32_t len) { (void)r, (void)len; }
void sprof_regs_from_ucontext(void *uc, uint64_t *pc, uint64_t *sp, uint64_t *fp) { (void)uc, *pc = *sp = *fp = 0; }
uint32_t sprof_signal_walk_context(struct sprof_thread *t, void *uc, int rbx)
{
    (void)t, (void)uc, (void)rbx;
    return 0;
}
/* the signal trampoline's syscall returns here in this test */
enum { TRAMPOLINE_RET = 0x7f0009 };
int sprof_in_sigreturn_call(uint64_t pc) { return pc == TRAMPOLINE_RET; }
static uint32_t fill;
uint32_t sprof_perf_fill_256(const struct sprof_thread *t) { (void)t; return fill; }

static int failures;
static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

static uint8_t stack_bytes[256]; /* the 256 bytes above sp, as copy and walk see them */

/* A walk as the handler puts it in the ring: the record (one frame), then
 * its entry header (len, hash_len, hash). */
static void put_walk(struct sprof_thread *t, uint64_t time, uint64_t pc, uint64_t sp, uint64_t ret)
{
    uint64_t buf[64];
    memset(buf, 0, sizeof buf);
    struct sprof_rec_sample *r = (struct sprof_rec_sample *)buf;
    uint32_t size = (uint32_t)sizeof *r + 8u + 8u; /* ret[1], fpoff[1] padded to 8 */
    r->h.type = SPROF_REC_SAMPLE;
    r->h.size = size + 16u;
    r->flags = SPROF_SAMPLE_ASSIST_ENTRY;
    r->nframes = 1;
    r->time_ns = time;
    r->pc = pc;
    r->sp = sp;
    uint64_t *frames = (uint64_t *)(r + 1);
    frames[0] = ret;
    uint32_t hdr[2] = {size, sizeof stack_bytes};
    uint64_t hash = sprof_perf_assist_hash(stack_bytes, sizeof stack_bytes);
    memcpy((uint8_t *)buf + size, hdr, 8);
    memcpy((uint8_t *)buf + size + 8, &hash, 8);
    sprof_perf_assist_take(t, buf, size + 16u);
}

/* A cut perf sample; returns the joined record's first frame, 0 if not joined. */
static uint64_t join(struct sprof_thread *t, uint64_t time, uint64_t pc, uint64_t sp, uint32_t kflags,
                     uint64_t *weight, uint32_t *flags)
{
    uint64_t buf[512];
    memset(buf, 0, sizeof buf);
    struct sprof_rec_sample *r = (struct sprof_rec_sample *)buf;
    r->h.type = SPROF_REC_SAMPLE;
    r->h.size = sizeof *r;
    r->flags = SPROF_SAMPLE_STACK_CUT | SPROF_SAMPLE_KERNEL_CHAIN | kflags;
    r->time_ns = time;
    r->weight_ns = 250000;
    r->pc = pc;
    r->sp = sp;
    uint32_t size = sprof_perf_assist_join(t, r, sizeof buf, stack_bytes, sizeof stack_bytes);
    if (weight) *weight = r->weight_ns;
    if (flags) *flags = r->flags;
    if (!size) return 0;
    return r->nframes ? ((uint64_t *)(r + 1))[0] : 0;
}

int main(void)
{
    static struct sprof_thread th;
    struct sprof_thread *t = &th;
    g_sprof.cfg.perf_assist = 1;
    atomic_store(&g_sprof.running, 1);
    t->perf_base = (void *)1; /* an event is there */
    t->perf_fd = -1;          /* ... whose descriptor no fcntl may touch here */
    for (int i = 0; i < (int)sizeof stack_bytes; i++) stack_bytes[i] = (uint8_t)(i * 7);
    check(sprof_perf_assist_ready(t) == -1, "no walks without the signal");
    /* the arena alone: what ready() maps after the signal is installed */
    t->assist = NULL;
    g_sprof.sig = 40;
    static uint8_t scratch[64];
    t->scratch = scratch; /* ready() maps one only if there is none */
    static uint8_t ringbuf[64];
    t->ring.buf = ringbuf;
    check(sprof_perf_assist_ready(t) == 0 && t->assist, "ready: the walks' arena");
    atomic_store(&t->assist_on, 1);
    atomic_store(&t->state, SLOT_ACTIVE);

    put_walk(t, 1000, 0x401000, 0x7ff000, 0xaaa);
    put_walk(t, 2000, 0x401010, 0x7ff100, 0xbbb);
    uint64_t w;
    uint32_t f;
    check(join(t, 900, 0x401000, 0x7ff000, SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_SYSCALL, &w, &f) == 0xaaa,
          "a sample takes the first walk at or after its time");
    check(w == 250000 && (f & SPROF_SAMPLE_KERNEL) && (f & SPROF_SAMPLE_SYSCALL) &&
              !(f & (SPROF_SAMPLE_STACK_CUT | SPROF_SAMPLE_KERNEL_CHAIN | SPROF_SAMPLE_ASSIST_ENTRY)),
          "it keeps its weight and kernel flags, the walk's stack flags");
    check(join(t, 950, 0x401000, 0x7ff000, 0, NULL, NULL) == 0xaaa,
          "two samples before one return to user mode share its walk");
    check(join(t, 1500, 0x401000, 0x7ff000, 0, NULL, NULL) == 0,
          "a walk older than the sample serves no later one (the next walk is at another sp)");
    check(join(t, 1900, 0x401012, 0x7ff100, 0, NULL, NULL) == 0xbbb, "pc - 2: a system call restarted");
    put_walk(t, 3000, 0x401020, 0x7ff200, 0xccc);
    check(join(t, 2900, 0x401020, 0x7ff208, 0, NULL, NULL) == 0, "another sp: not joined");
    put_walk(t, 4000, 0x401030, 0x7ff300, 0xddd);
    stack_bytes[17] ^= 1; /* a system call wrote above sp after the sample */
    check(join(t, 3900, 0x401030, 0x7ff300, 0, NULL, NULL) == 0, "other stack bytes: not joined");
    stack_bytes[17] ^= 1;

    /* rt_sigreturn's kernel time, the handler on an alternate stack: the
     * walk comes at the context the call restored (the copy's ucontext:
     * rbp, rbx, rsp, rip at 40 + 8 * 10, 11, 15, 16), on the thread's stack */
    {
        uint64_t walk[64];
        memset(walk, 0, sizeof walk);
        struct sprof_rec_sample *r = (struct sprof_rec_sample *)walk;
        uint32_t size = (uint32_t)sizeof *r + 2 * 8u + 8u + 8u + 8u; /* ret[2], fpoff[2], coff[1] padded, cval[1] */
        r->h.type = SPROF_REC_SAMPLE;
        r->flags = SPROF_SAMPLE_ASSIST_ENTRY;
        r->nframes = 2;
        r->ncand = 1;
        r->time_ns = 4600;
        r->pc = 0x401040;
        r->sp = 0x7ffe000;
        r->fp = 0x7ffe040;
        uint64_t *ret = (uint64_t *)(r + 1);
        ret[0] = 0xeee, ret[1] = 0xfff;
        uint32_t *fpoff = (uint32_t *)(ret + 2);
        fpoff[0] = 0x40, fpoff[1] = 0x80;
        uint32_t *coff = fpoff + 2;
        coff[0] = 0x18;
        ((uint64_t *)(coff + 2))[0] = 0x401234;
        uint32_t hdr[2] = {size, 0};
        uint64_t hash = sprof_perf_assist_hash(stack_bytes, 0);
        memcpy((uint8_t *)walk + size, hdr, 8);
        memcpy((uint8_t *)walk + size + 8, &hash, 8);
        sprof_perf_assist_take(t, walk, size + 16u);
        uint64_t saved[4];
        const int at[4] = {10, 11, 15, 16};
        const uint64_t ctx[4] = {0x7ffe040, 0x5555, 0x7ffe000, 0x401040};
        for (int k = 0; k < 4; k++) {
            memcpy(&saved[k], stack_bytes + 40 + 8 * at[k], 8);
            memcpy(stack_bytes + 40 + 8 * at[k], &ctx[k], 8);
        }
        uint64_t buf[512];
        memset(buf, 0, sizeof buf);
        struct sprof_rec_sample *s = (struct sprof_rec_sample *)buf;
        s->h.size = sizeof *s;
        s->flags = SPROF_SAMPLE_STACK_CUT | SPROF_SAMPLE_OFF_STACK | SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_SYSCALL;
        s->time_ns = 4500;
        s->weight_ns = 250000;
        s->pc = TRAMPOLINE_RET;
        s->sp = 0x9000100; /* the alternate stack */
        uint32_t got = sprof_perf_assist_join(t, s, sizeof buf, stack_bytes, sizeof stack_bytes);
        const uint32_t *co = (const uint32_t *)(s + 1);
        const uint64_t *cv = (const uint64_t *)(const void *)(co + 10); /* 4 + 1 + 3 + 1 = 9 words, padded */
        check(got == sizeof *s + 40u + 72u && s->nframes == 0 && s->ncand == 9, "rt_sigreturn: joined to the walk at the restored context");
        check(s->pc == TRAMPOLINE_RET && s->sp == 0x9000100 && s->time_ns == 4500 && s->weight_ns == 250000 &&
                  (s->flags & SPROF_SAMPLE_KERNEL) && (s->flags & SPROF_SAMPLE_OFF_STACK) && !(s->flags & SPROF_SAMPLE_STACK_CUT),
              "it keeps its pc, sp, time, weight and flags, not the cut");
        check(co[0] == 120 && cv[0] == 0x7ffe040 && co[1] == 128 && cv[1] == 0x5555 && co[2] == 160 && cv[2] == 0x7ffe000 &&
                  co[3] == 168 && cv[3] == 0x401040,
              "the ucontext's rbp, rbx, rsp and rip at their offsets");
        check(co[4] == SPROF_CAND_REBASE && cv[4] == 0x7ffe000 && co[5] == 0x48 && cv[5] == 0xeee && co[6] == 0x40 &&
                  cv[6] == 0x7ffe080 && co[7] == 0x88 && cv[7] == 0xfff && co[8] == 0x18 && cv[8] == 0x401234,
              "then the walk's stack from its sp: records' return and link words, its candidates");
        /* the ucontext names another context than the next walk's: not joined */
        put_walk(t, 4800, 0x401050, 0x7ffe100, 0x111);
        s->h.size = sizeof *s;
        s->nframes = s->ncand = 0;
        s->flags = SPROF_SAMPLE_STACK_CUT | SPROF_SAMPLE_OFF_STACK | SPROF_SAMPLE_KERNEL;
        s->time_ns = 4700;
        check(sprof_perf_assist_join(t, s, sizeof buf, stack_bytes, sizeof stack_bytes) == 0,
              "rt_sigreturn: a walk at another context is not its");
        for (int k = 0; k < 4; k++) memcpy(stack_bytes + 40 + 8 * at[k], &saved[k], 8);
    }

    /* the drain waits for a walk not taken yet, not for ever */
    check(sprof_perf_assist_wait(t, 5000, 6000) == 1, "waits for the walk of a newer sample");
    check(sprof_perf_assist_wait(t, 5000, 5000 + 30000000ull) == 0, "not beyond 20 ms");
    check(sprof_perf_assist_wait(t, 3500, 6000) == 0, "not for a sample older than the newest walk");
    fill = 100;
    check(sprof_perf_assist_wait(t, 5000, 6000) == 0, "not with the ring over a quarter full");
    fill = 0;

    /* many walks: the arena keeps the newest (1 MiB of them) */
    for (int i = 0; i < 40000; i++) put_walk(t, 10000 + (uint64_t)i, 0x402000, 0x7fe000, 0x1000 + (uint64_t)i);
    check(join(t, 10000 + 39990, 0x402000, 0x7fe000, 0, NULL, NULL) == 0x1000 + 39990, "the newest walks are kept");

    /* a thread whose walks do not match is signalled no more */
    for (int i = 0; i < 200; i++) join(t, 60000 + (uint64_t)i, 0x403000, 0x7fd000, 0, NULL, NULL);
    check(!atomic_load(&t->assist_on), "64 unmatched, fewer than 1 in 5 matched: walks stopped");
    check(sprof_perf_assist_wait(t, 70000, 70001) == 0, "no waiting once stopped");
    sprof_perf_assist_free(t);
    check(t->assist == NULL, "freed");
    if (failures) printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
