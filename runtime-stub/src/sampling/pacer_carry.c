/* cpuclock + tick: the CPU of pacer signals that landed at a system-call
 * return, kept per call path until the tick sampler catches the thread in
 * user mode under that path (signal handler context, one thread: no
 * locking, no allocation).
 *
 * Why: a pacer signal reaches a thread at its next exit to user mode. A
 * thread that makes a system call every few us takes it at that call's
 * return, not where it was when the pacer decided (a compute step that has
 * returned by then). The landing says little about the leaf, but its
 * frame-pointer chain above the function that made the call says which
 * activation subtree the time was spent in. The tick sampler's user-mode
 * landings are unbiased (the kernel queues its signal on the way back from
 * the tick interrupt itself), so the first one under the same call path is
 * a draw from where that subtree spends its time: it takes the carried CPU.
 * Charging it to the next landing anywhere (the way before) put the time
 * of an interleaved compute/syscall loop on the compute phase after it
 * (acc_cheapcall: 40 pp on kernel 6.18, where the pacer's IPI hardly ever
 * beats a 6 us step to its system call).
 *
 * The key of a landing with return addresses r[0..n) (r[0] returns into
 * the caller of the frame rbp points at, which for a frameless libc wrapper
 * is the caller of the function that called it) is r[1..n): the call site
 * that entered the subtree and everything above it. A tick landing
 * with returns q[0..m) is under that path when q[j..m) == r[1..n) for some
 * j >= 0 (its pc, and q[0..j), are inside the subtree).
 *
 * A path no tick lands under for a while, though ticks land on chains that
 * reach the same outermost frame (a phase that has ended: a calibration
 * loop, a start-up step), gets its CPU as a sample of its own: at the call
 * site r[1] (pc there, callers r[2..n)), a chain without stack words, like
 * a kernel-collected one. That is one level above the subtree, never a
 * call that did not happen: r[0] may be in a frameless function (a libc
 * wrapper) whose caller only the stack words would show. Giving it to the
 * next landing anywhere (the way before) charged another method. Where the
 * ticks' chains do not reach that frame (rbp is data in frameless code
 * above them), nothing says whether they are under the path: the CPU then
 * goes the old way, to the next kept landing. Each entry keeps its path's
 * return addresses in the thread's scratch, past the walk's area.
 */
#include <string.h>

#include "rt_internal.h"

/* tick user-mode landings on comparable chains (reaching the path's
 * outermost frame) an entry may wait for one under its path (~64 x 4 ms of
 * CPU at a 250 Hz tick) */
#define SPROF_CARRY_MAX_AGE 64u
/* ... and tick landings on chains that cannot tell (frameless code using
 * rbp as data under the path: no tick there will ever match) */
#define SPROF_CARRY_MAX_UNKNOWN 8u
#define SPROF_CARRY_STACK 0xffffffffu /* depth of a key that is a fiber's sp */
/* a tick landing this close to a fiber key's sp is on the same stack: fiber
 * stacks are separate mappings of 64 KiB and more, and one frame's depth
 * below the switch is well within it */
#define SPROF_CARRY_STACK_NEAR (16u * 1024u)

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static int chain_usable(const struct sprof_rec_sample *rec)
{
    /* a chain that breaks (commonly at libc's outermost frames) breaks at the same
     * place for landings on the same path: still a key; a cut one is not */
    return !(rec->flags & (SPROF_SAMPLE_TRUNCATED | SPROF_SAMPLE_STACK_CUT));
}

static uint64_t *entry_path(struct sprof_thread *t, const struct sprof_carry *c)
{
    uint32_t depth = g_sprof.cfg.max_depth;
    return (uint64_t *)(void *)(t->scratch + sprof_scratch_size(depth)) + (size_t)(c - t->carries) * depth;
}

uint32_t sprof_carry_area_size(uint32_t max_depth)
{
    return SPROF_CARRIES * max_depth * 8u;
}

/* the entry's CPU as a sample at the call site r[1] (see above); into the
 * carry of the next kept landing when the ring is full or when asked */
static void flush_entry(struct sprof_thread *t, struct sprof_carry *c, uint64_t now_ns, int to_next)
{
    if (c->depth == SPROF_CARRY_STACK) to_next = 1; /* a fiber's key has no call site to write */
    uint64_t ns = to_next ? 0 : c->ns - sprof_site_take(t, 0, c->ns);
    uint32_t n = c->depth - 1; /* r[2..depth] */
    uint32_t size = (uint32_t)sizeof(struct sprof_rec_sample) + n * 8u + sprof_pad8(n * 4u);
    struct sprof_rec_sample *rec = ns ? sprof_ring_reserve(&t->ring, size) : NULL;
    if (rec) {
        const uint64_t *r = entry_path(t, c);
        memset(rec, 0, sizeof *rec);
        rec->h.type = SPROF_REC_SAMPLE;
        rec->h.size = size;
        rec->tid = t->tid;
        rec->flags = SPROF_SAMPLE_PARTIAL;
        rec->nframes = (uint16_t)n;
        rec->fp0_off = SPROF_FPOFF_UNKNOWN;
        rec->time_ns = now_ns;
        rec->weight_ns = ns;
        rec->pc = r[1] - 1; /* in the call instruction */
        memcpy(rec + 1, r + 2, n * 8u);
        uint32_t *off = (uint32_t *)(void *)((uint8_t *)(rec + 1) + n * 8u);
        for (uint32_t i = 0; i < n; i++) off[i] = SPROF_FPOFF_UNKNOWN;
        if (n & 1) off[n] = 0;
        sprof_ring_commit(&t->ring, size);
    } else {
        t->pacer_carry_ns += to_next ? c->ns : ns;
    }
    memset(c, 0, sizeof *c);
}

/* The entry for (key, depth); else a free one, or the oldest flushed,
 * started for it. The caller adds the CPU. */
static struct sprof_carry *find_slot(struct sprof_thread *t, uint64_t key, uint32_t depth, uint64_t root,
                                     uint64_t now_ns)
{
    struct sprof_carry *slot = NULL, *oldest = &t->carries[0];
    for (int i = 0; i < SPROF_CARRIES; i++) {
        struct sprof_carry *c = &t->carries[i];
        if (c->ns && c->depth == depth && c->key == key) return c;
        if (!c->ns && !slot) slot = c;
        if (c->age > oldest->age) oldest = c;
    }
    if (!slot) {
        flush_entry(t, oldest, now_ns, 0);
        slot = oldest;
    }
    slot->key = key;
    slot->depth = depth;
    slot->root = root;
    return slot; /* zeroed by the flush, or never used */
}

/* A landing on a stack that is not the thread's own (a fiber's): its chain
 * ends within a frame or two (the walk finds no record under makecontext's
 * trampoline), so no path names it, and walking an unknown stack costs
 * system calls (page probes). The stack itself does: the user time before
 * a fiber's switch was spent on that fiber's stack, and a tick landing on
 * it, near the switch's depth, is a draw from where. Depth
 * SPROF_CARRY_STACK marks such a key (the landing's sp). */
void sprof_carry_keep_stack(struct sprof_thread *t, uint64_t sp, uint64_t ns, uint64_t now_ns)
{
    find_slot(t, sp, SPROF_CARRY_STACK, 0, now_ns)->ns += ns;
    t->carries_live = 1;
}

static int same_stack(uint64_t a, uint64_t b)
{
    return (a > b ? a - b : b - a) < SPROF_CARRY_STACK_NEAR;
}

int sprof_carry_keep(struct sprof_thread *t, const struct sprof_rec_sample *rec, uint64_t ns)
{
    if (!chain_usable(rec) || rec->nframes < 3 || rec->nframes > g_sprof.cfg.max_depth)
        return 0; /* a key of >= 2 frames: not "anywhere" */
    const uint64_t *r = (const uint64_t *)(rec + 1);
    uint32_t depth = rec->nframes - 1u;
    uint64_t h = 0;
    for (uint32_t i = rec->nframes; i-- > 1;) h = mix(h, r[i]);
    struct sprof_carry *slot = find_slot(t, h, depth, r[rec->nframes - 1], rec->time_ns);
    if (!slot->ns) memcpy(entry_path(t, slot), r, rec->nframes * 8u);
    slot->ns += ns;
    t->carries_live = 1;
    return 1;
}

uint64_t sprof_carry_claim(struct sprof_thread *t, const struct sprof_rec_sample *rec)
{
    if (!t->carries_live) return 0;
    int usable = chain_usable(rec);
    const uint64_t *q = (const uint64_t *)(rec + 1);
    uint64_t got = 0, h = 0;
    int live = 0;
    uint32_t matched = 0; /* bit i: entry i is under this landing's path */
    for (uint32_t k = 1; usable && k <= rec->nframes; k++) {
        h = mix(h, q[rec->nframes - k]);
        for (int i = 0; i < SPROF_CARRIES; i++)
            if (t->carries[i].ns && t->carries[i].depth == k && t->carries[i].key == h) matched |= 1u << i;
    }
    for (int i = 0; i < SPROF_CARRIES; i++) {
        const struct sprof_carry *c = &t->carries[i];
        if (c->ns && c->depth == SPROF_CARRY_STACK && same_stack(c->key, rec->sp)) matched |= 1u << i;
    }
    for (int i = 0; i < SPROF_CARRIES; i++) {
        struct sprof_carry *c = &t->carries[i];
        if (!c->ns) continue;
        if (matched & (1u << i)) {
            got += c->ns;
            memset(c, 0, sizeof *c);
        } else if (c->depth == SPROF_CARRY_STACK || (usable && rec->nframes && q[rec->nframes - 1] == c->root)) {
            if (++c->age > SPROF_CARRY_MAX_AGE) flush_entry(t, c, rec->time_ns, 0);
            else live = 1;
        } else if (++c->unknown > SPROF_CARRY_MAX_UNKNOWN) {
            flush_entry(t, c, rec->time_ns, 1);
        } else {
            live = 1;
        }
    }
    t->carries_live = live;
    /* the system-call time the tick sampler recorded meanwhile is in the
     * carried CPU too: off, as for any carried landing */
    return got - sprof_site_take(t, 0, got);
}

void sprof_carry_flush_all(struct sprof_thread *t, uint64_t now_ns)
{
    for (int i = 0; i < SPROF_CARRIES; i++)
        if (t->carries[i].ns) flush_entry(t, &t->carries[i], now_ns, t->carries[i].unknown > t->carries[i].age);
    t->carries_live = 0;
}

void sprof_carry_reset(struct sprof_thread *t)
{
    memset(t->carries, 0, sizeof t->carries);
    t->carries_live = 0;
}
