/* Load sprof traces into a profile:
 *   1. stream the records; merge identical raw samples (raw_samples.c);
 *   2. join the trace to the symmap by build-id (refuse a mismatch);
 *   3. unwind each distinct raw sample once (unwind.c), symbolize each
 *      distinct PC once (symbolize.c), shape the stack (fiber root, libc
 *      start frames, GC-root helpers, thread root) and merge it into the
 *      profile's stacks. A kernel-time sample (format 1.1) gets a synthetic
 *      leaf ([syscall write], [page fault], [kernel]) of class kernel on
 *      top of its user stack; a SYSCALL_SKID sample loses its leaf function
 *      (it is charged to the caller).
 * Each trace's counters are kept in p->traces for the accounting warnings. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <sys/mman.h>

#include "address_space.h"
#include "draw_split.h"
#include "jit_map.h"
#include "stack_shape.h"
#include "raw_samples.h"
#include "sprof/profile.h"
#include "sprof/trace_reader.h"
#include "symbolize.h"
#include "thread_names.h"
#include "unwind.h"

#define MAX_UNWIND_FRAMES 2048
#define MAX_STACK_FRAMES (MAX_UNWIND_FRAMES * 8)

typedef struct loader {
    sprof_profile *p;
    const sprof_load_options *opt;
    sprof_symmap *symmap;
    const char *symmap_path;
    sprof_module_cache modules;
    sprof_symbolizer *sym;
    uint64_t *pcs;
    uint8_t *pc_exact; /* per pc: found by a CFI step (sprof_unwind_steps) */
    uint32_t *stack;   /* leaf first while shaping */
    uint8_t *linked;   /* per stack frame: reached exactly from the one inside it */
    uint32_t *rooted;  /* root first */
    int any_cpu_trace, any_trace;
    int had_traces; /* an earlier call already loaded traces into p */
} loader;

/* One trace being read. */
typedef struct trace_state {
    const char *path;
    sprof_address_space as;
    sprof_raw_table raw;
    sprof_thread_names threads;
    char *exe_path;
    uint32_t pid;
    int jit_tried;          /* its perf map looked for (at the first anonymous mapping) */
    sprof_module *jit_mod;  /* its anonymous executable memory's module */
    uint64_t start_ns, start_realtime_ns;
    uint64_t last_kept_ns; /* monotonic time of the latest sample kept */
    int have_info;
    uint64_t dropped;
    uint64_t kept, filtered, truncated;
    uint64_t counted; /* the kept samples as counted (sample_count): the unit of stack counts */
    uint64_t count_frac_ns; /* sample_count's carried fraction of a period */
    int forced;      /* joined to a symmap of another build under --force */
    int cut;         /* the file ends without END */
    uint64_t cut_at; /* where the reading stopped */
    sprof_trace_accounting acct; /* path owned by the profile once added */
    /* --timeline: every kept sample, by its raw entry until the stacks are known */
    sprof_timeline_sample *tl;
    size_t ntl, captl;
    uint32_t *stack_of_raw; /* raw entry -> profile stack */
    sprof_draw_split draws; /* the cpuclock pacer's draws: the trapezoid rule (format 2.9) */
} trace_state;

static void hex(const uint8_t *id, size_t len, char *out, size_t outlen)
{
    if (len == 0) {
        snprintf(out, outlen, "none");
        return;
    }
    size_t o = 0;
    for (size_t i = 0; i < len && o + 3 <= outlen; i++)
        o += (size_t)snprintf(out + o, outlen - o, "%02x", id[i]);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* ---- unwinder oracle over the trace's address space ---- */

typedef struct code_ctx {
    loader *L;
    trace_state *T;
} code_ctx;

static int oracle_is_code(void *ctx, uint64_t pc)
{
    code_ctx *c = ctx;
    return sprof_as_find(&c->T->as, pc) != NULL;
}

/* The n bytes of the module's file at pc (0 if outside the file). */
static int code_bytes(code_ctx *c, uint64_t pc, uint8_t *out, size_t n)
{
    const sprof_map_entry *me = sprof_as_find(&c->T->as, pc);
    if (!me)
        return 0;
    sprof_elf_module *elf = sprof_module_elf(me->mod);
    uint64_t off = pc - me->start + me->file_offset;
    if (!elf || off > elf->map_size || elf->map_size - off < n)
        return 0;
    memcpy(out, (const uint8_t *)elf->map + off, n);
    return 1;
}

/* x86-64 Linux signal-return trampoline (glibc's __restore_rt; the
 * kernel has none of its own there): mov $15 (rt_sigreturn), %rax; syscall */
static int oracle_sigreturn_at(void *ctx, uint64_t pc)
{
    static const uint8_t tramp[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
    uint8_t b[sizeof tramp];
    return code_bytes(ctx, pc, b, sizeof b) && memcmp(b, tramp, sizeof tramp) == 0;
}

/* The CFI row at pc from the symmap (the program) or the module's
 * .eh_frame; *vaddr is pc in the module's addresses. */
static int cfi_row_at(code_ctx *c, const sprof_map_entry *me, uint64_t pc, sprof_cfi_row *row,
                      uint64_t *vaddr)
{
    if (me->mod->is_main && c->L->symmap &&
        sprof_symmap_file_offset_to_vaddr(c->L->symmap, pc - me->start + me->file_offset, vaddr) == 0 &&
        sprof_symmap_cfi_lookup(c->L->symmap, *vaddr, row) == 0 && row->cfa_reg != SPROF_CFA_UNDEFINED)
        return 0;
    sprof_elf_module *elf = sprof_module_elf(me->mod);
    if (!elf || sprof_elf_offset_to_vaddr(elf, pc - me->start + me->file_offset, vaddr) != 0)
        return -1;
    return sprof_elf_cfi_lookup(elf, *vaddr, row) == 0 && row->cfa_reg != SPROF_CFA_UNDEFINED ? 0 : -1;
}

static int oracle_cfi(void *ctx, uint64_t pc, sprof_cfi_row *row)
{
    code_ctx *c = ctx;
    const sprof_map_entry *me = sprof_as_find(&c->T->as, pc);
    if (!me)
        return -1;
    uint64_t vaddr;
    if (cfi_row_at(c, me, pc, row, &vaddr) == 0)
        return 0;
    /* glibc's clone and clone3 end their CFI just before their `syscall`
     * (after it, the child's frame is not the one described), so the
     * parent's return from that system call has no row: perf_event's
     * kernel-mode samples in clone3 unwound from the frame-pointer chain
     * alone, main;sp_Main_run;clone3 without pthread_create (4.5 % of a
     * program that starts short threads). `syscall` changes no register
     * the CFI tracks: the row that ends at that instruction applies. So
     * does it a few instructions on (the compare and branches after it,
     * no push or pop), where perf_event's samples of the call land on a
     * host that takes the interrupt late (SPROF_SYSCALL_SKID_BYTES). */
    uint8_t sc[2];
    uint64_t before;
    for (uint64_t k = 0; k < SPROF_SYSCALL_SKID_BYTES && pc >= k + 3; k++) /* the syscall at pc - 2 - k */
        if (code_bytes(c, pc - 2 - k, sc, 2) && sc[0] == 0x0f && sc[1] == 0x05 &&
            cfi_row_at(c, me, pc - 3 - k, row, &before) == 0 && row->hi == before + 1)
            return 0;
    sprof_elf_module *elf = sprof_module_elf(me->mod);
    if (!elf || sprof_elf_offset_to_vaddr(elf, pc - me->start + me->file_offset, &vaddr) != 0)
        return -1;
    /* A PLT stub's CFI is a DWARF expression we do not model; a bound stub
     * is a lone indirect jmp, so the return address is at sp (as at the
     * first byte of any function). */
    const sprof_elf_symbol *sym = sprof_elf_symbol_at(elf, vaddr);
    size_t len = sym ? strlen(sym->name) : 0;
    if (len > 4 && strcmp(sym->name + len - 4, "@plt") == 0) {
        *row = (sprof_cfi_row){ .lo = sym->lo, .hi = sym->hi, .cfa_reg = SPROF_CFA_RSP,
                                .cfa_offset = 8, .ra_offset = -8, .rbx_rule = SPROF_REG_SAME };
        return 0;
    }
    return -1;
}

/* ---- reading ---- */

static int keep_sample(const loader *L, const trace_state *T, const sprof_sample_view *s)
{
    const sprof_load_options *o = L->opt;
    if (o->from_ns || o->to_ns) {
        uint64_t rel = s->time_ns > T->start_ns ? s->time_ns - T->start_ns : 0;
        if (rel < o->from_ns || (o->to_ns && rel >= o->to_ns))
            return 0;
    }
    if (o->tids && o->ntids) {
        size_t i;
        for (i = 0; i < o->ntids; i++)
            if (o->tids[i] == s->tid)
                break;
        if (i == o->ntids)
            return 0;
    }
    return 1;
}

/* How many samples a sample counts for under --weight=samples. One, except
 * for samples that stand for more (or less) than one period by design: a
 * kernel-time sample from the tick kernel sampler (docs/runtime.md: the
 * kernel checks that timer only at its tick, so one sample stands for all
 * the kernel time since the last), a thread's unsampled tail charged at
 * its exit, and the cpuclock pacer's partial samples (landings after a page
 * fault, less the kernel time recorded there). Those count as the samples
 * the asked rate would have taken in their weight; the fractions are carried from one such sample to the next
 * (*frac, in ns), so a thousand threads of a fifth of a period each count
 * as two hundred samples, not as none or a thousand. */
static uint64_t sample_count(const sprof_sample_view *s, uint32_t hz, uint64_t *frac)
{
    if (!(s->flags & (SPROF_SAMPLE_KERNEL_TICK | SPROF_SAMPLE_THREAD_TAIL | SPROF_SAMPLE_PARTIAL)) || !hz)
        return 1;
    uint64_t period = 1000000000ull / hz;
    if (!period)
        return 1;
    uint64_t total = *frac + s->weight_ns;
    *frac = total % period;
    return total / period;
}

/* The accounting figures of the last STATS record (cumulative). */
static void note_stats(sprof_trace_accounting *a, const struct sprof_rec_stats *st)
{
    a->have_stats = 1;
    a->cpu_ns_total = st->cpu_ns_total;
    a->user_cpu_ns = st->user_cpu_ns;
    a->system_cpu_ns = st->system_cpu_ns;
    a->weight_ns_total = st->weight_ns_total;
    a->kernel_weight_ns = st->kernel_weight_ns;
    a->achieved_millihz = st->achieved_millihz;
    a->threads_seen = st->threads_seen;
    a->samples_dropped = st->samples_dropped;
    a->signals_lost = st->signals_lost;
    a->kernel_sampling = st->kernel_sampling;
    a->kernel_hz = st->kernel_hz;
    a->own_cpu_ns = st->own_cpu_ns;
}

/* --timeline: one entry per kept sample; its stack is its raw entry's,
 * known once the raw entries are unwound (timeline_finish). */
static int timeline_add(trace_state *T, const sprof_sample_view *s, uint64_t count, uint32_t raw_index)
{
    if (T->ntl == T->captl) {
        size_t cap = T->captl ? T->captl * 2 : 4096;
        sprof_timeline_sample *v = realloc(T->tl, cap * sizeof *v);
        if (!v)
            return -1;
        T->tl = v;
        T->captl = cap;
    }
    T->tl[T->ntl++] = (sprof_timeline_sample){ s->time_ns, s->weight_ns, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count,
                                               raw_index, s->tid, s->flags };
    return 0;
}

typedef struct tid_seen {
    uint32_t tid;
    UT_hash_handle hh;
} tid_seen;

static void tids_free(tid_seen **set)
{
    tid_seen *e, *tmp;
    HASH_ITER(hh, *set, e, tmp) {
        HASH_DEL(*set, e);
        free(e);
    }
}

/* Move the trace's timeline into the profile (stacks resolved) and name
 * its threads, in the order of their first sample. */
static int timeline_finish(sprof_profile *p, trace_state *T)
{
    if (!T->ntl)
        return 0;
    if (!p->timeline_origin_ns || T->start_ns < p->timeline_origin_ns)
        p->timeline_origin_ns = T->start_ns;
    if (!p->timeline) { /* the first trace: its array becomes the profile's (no second copy) */
        p->timeline = T->tl;
        T->tl = NULL;
        T->captl = 0;
    } else {
        sprof_timeline_sample *v = realloc(p->timeline, (p->ntimeline + T->ntl) * sizeof *v);
        if (!v)
            return -1;
        p->timeline = v;
    }
    const sprof_timeline_sample *src = T->tl ? T->tl : p->timeline; /* in place: write index <= read index */
    tid_seen *seen = NULL, *e;
    int rc = 0;
    for (size_t k = 0; k < p->nthreads && rc == 0; k++) { /* from earlier traces */
        if (!(e = malloc(sizeof *e)))
            rc = -1;
        else {
            e->tid = p->threads[k].tid;
            HASH_ADD(hh, seen, tid, sizeof e->tid, e);
        }
    }
    for (size_t i = 0; i < T->ntl && rc == 0; i++) {
        sprof_timeline_sample s = src[i];
        s.stack = T->stack_of_raw[s.stack];
        if (s.stack == UINT32_MAX)
            continue; /* a sample whose stack was not added */
        p->timeline[p->ntimeline++] = s;
        HASH_FIND(hh, seen, &s.tid, sizeof s.tid, e);
        if (e)
            continue;
        sprof_thread_label *t = realloc(p->threads, (p->nthreads + 1) * sizeof *t);
        if (!t || !(e = malloc(sizeof *e))) {
            if (t)
                p->threads = t;
            rc = -1;
            break;
        }
        p->threads = t;
        e->tid = s.tid;
        HASH_ADD(hh, seen, tid, sizeof e->tid, e);
        const char *name = sprof_thread_names_get(&T->threads, s.tid);
        p->threads[p->nthreads].tid = s.tid;
        snprintf(p->threads[p->nthreads].name, sizeof p->threads[p->nthreads].name, "%s", name ? name : "");
        p->nthreads++;
    }
    tids_free(&seen);
    return rc;
}

/* The module of a trace's anonymous executable memory: of its own when the
 * program's JIT wrote /tmp/perf-<pid>.map during the trace (the names of
 * its compiled functions, by address), else the one all such memory
 * shares (named [anonymous code]). A map that is there but not used, or
 * had malformed lines, is noted for the views to print. */
static sprof_module *anon_module(loader *L, trace_state *T)
{
    if (T->jit_tried)
        return T->jit_mod;
    T->jit_tried = 1;
    char path[64], why[256] = "";
    uint64_t skipped = 0;
    snprintf(path, sizeof path, "/tmp/perf-%" PRIu32 ".map", T->pid);
    sprof_jit_map *map = T->pid ? sprof_jit_map_load(path, T->start_realtime_ns, &skipped, why, sizeof why) : NULL;
    sprof_profile *p = L->p;
    if (!map && why[0] && !p->jit_note[0])
        snprintf(p->jit_note, sizeof p->jit_note, "%s: %s is not used for its JIT code's names: %s", T->path, path,
                 why);
    if (map && skipped && !p->jit_note[0])
        snprintf(p->jit_note, sizeof p->jit_note, "%s: %" PRIu64 " malformed line(s) of %s left out", T->path,
                 skipped, path);
    if (!map) {
        T->jit_mod = sprof_module_get(&L->modules, "", (const uint8_t *)"", 0, 0);
        return T->jit_mod;
    }
    /* one module per trace: the same pid in another trace is another program */
    uint8_t id[12];
    memcpy(id, &T->pid, 4);
    memcpy(id + 4, &T->start_realtime_ns, 8);
    T->jit_mod = sprof_module_get(&L->modules, path, id, sizeof id, 0);
    if (!T->jit_mod || T->jit_mod->jit) {
        sprof_jit_map_free(map); /* out of memory, or a trace read twice */
        return T->jit_mod;
    }
    T->jit_mod->jit = map;
    T->jit_mod->elf_state = -1; /* a text file: never opened as ELF */
    return T->jit_mod;
}

static int read_trace(loader *L, trace_state *T, sprof_trace *t, char *err, size_t errlen)
{
    sprof_trace_record rec;
    int rc;
    while ((rc = sprof_trace_next(t, &rec, err, errlen)) == 1) {
        switch (rec.type) {
        case SPROF_REC_INFO:
            if (!T->have_info) {
                T->have_info = 1;
                T->start_ns = rec.u.info.start_monotonic_ns;
                T->start_realtime_ns = rec.u.info.start_realtime_ns;
                T->pid = rec.u.info.pid;
                T->acct.mode = rec.u.info.mode;
                T->acct.mechanism = rec.u.info.mechanism;
                T->acct.hz = rec.u.info.hz;
                free(T->exe_path);
                T->exe_path = strdup(rec.u.info.exe_path ? rec.u.info.exe_path : "");
                if (!L->any_trace && !L->had_traces)
                    L->p->hz = rec.u.info.hz;
                L->any_trace = 1;
                if (rec.u.info.mode != SPROF_MODE_WALL)
                    L->any_cpu_trace = 1;
            }
            break;
        case SPROF_REC_MAPPING: {
            const sprof_mapping_view *m = &rec.u.mapping;
            if (m->prot && !(m->prot & PROT_EXEC))
                break;
            if (!m->path || !m->path[0]) { /* anonymous: JIT code, named by absolute address */
                sprof_module *mod = anon_module(L, T);
                if (!mod || sprof_as_add(&T->as, m->start, m->end, m->start, mod) != 0) {
                    snprintf(err, errlen, "%s: out of memory", T->path);
                    return -1;
                }
                break;
            }
            sprof_module *mod = sprof_module_get(&L->modules, m->path, m->build_id, m->build_id_len, 0);
            if (mod && !mod->mapped_size)
                mod->mapped_size = m->end - m->start;
            if (!mod || sprof_as_add(&T->as, m->start, m->end, m->file_offset, mod) != 0) {
                snprintf(err, errlen, "%s: out of memory", T->path);
                return -1;
            }
            break;
        }
        case SPROF_REC_THREAD: {
            const sprof_thread_view *th = &rec.u.thread;
            if (!th->name || !th->name[0])
                break;
            if (sprof_thread_names_set(&T->threads, th->tid, th->name) != 0) {
                snprintf(err, errlen, "%s: out of memory", T->path);
                return -1;
            }
            break;
        }
        case SPROF_REC_SAMPLE:
            T->acct.read_weight_ns += rec.u.sample.weight_ns;
            if (rec.u.sample.flags & SPROF_SAMPLE_KERNEL)
                T->acct.read_kernel_weight_ns += rec.u.sample.weight_ns;
            if (!keep_sample(L, T, &rec.u.sample)) {
                T->filtered++;
                sprof_draw_last *left_out = rec.u.sample.flags & SPROF_SAMPLE_DRAW
                                                ? sprof_draw_split_thread(&T->draws, rec.u.sample.tid, 0)
                                                : NULL;
                if (left_out)
                    sprof_draw_split_note(left_out, 0, 0, 0);
                break;
            }
            T->kept++;
            if (rec.u.sample.time_ns > T->last_kept_ns)
                T->last_kept_ns = rec.u.sample.time_ns;
            if (rec.u.sample.flags & SPROF_SAMPLE_TRUNCATED)
                T->truncated++;
            uint64_t count = sample_count(&rec.u.sample, T->acct.hz, &T->count_frac_ns);
            T->counted += count;
            uint32_t raw_index;
            /* a draw's weight is the CPU since the previous one: half of it
             * is that one's (draw_split.h), in the stacks and the timeline alike */
            sprof_sample_view weighed = rec.u.sample;
            sprof_draw_last *draw = NULL;
            if ((weighed.flags & SPROF_SAMPLE_DRAW) && !(draw = sprof_draw_split_thread(&T->draws, weighed.tid, 1))) {
                snprintf(err, errlen, "%s: out of memory", T->path);
                return -1;
            }
            sprof_draw_last prev = draw ? *draw : (sprof_draw_last){ 0 };
            uint64_t give = sprof_draw_split_give(draw, weighed.flags, weighed.weight_ns);
            weighed.weight_ns -= give;
            weighed.flags &= ~(uint32_t)(SPROF_SAMPLE_DRAW | SPROF_SAMPLE_DRAW_PREV); /* not a stack's identity */
            if (sprof_raw_add(&T->raw, &weighed, L->opt->per_thread, count, &raw_index) != 0 ||
                (L->opt->timeline && timeline_add(T, &weighed, count, raw_index) != 0)) {
                snprintf(err, errlen, "%s: out of memory", T->path);
                return -1;
            }
            if (draw)
                sprof_draw_split_note(draw, 1, raw_index, L->opt->timeline ? T->ntl : 0);
            if (give) {
                T->raw.v[prev.raw1 - 1].weight_ns += give;
                if (prev.tl1)
                    T->tl[prev.tl1 - 1].weight_ns += give;
            }
            /* the raw table points into the file, it does not need it in RAM */
            sprof_trace_release_read(t);
            break;
        case SPROF_REC_STATS:
            T->dropped = rec.u.stats.samples_dropped; /* cumulative: the last one wins */
            note_stats(&T->acct, &rec.u.stats);
            break;
        default:
            break;
        }
    }
    if (rc < 0)
        return -1;
    if (!T->have_info && T->kept > 0) {
        snprintf(err, errlen, "%s: samples before the INFO record", T->path);
        return -1;
    }
    return 0;
}

/* ---- joining the trace to the symmap ---- */

static int same_id(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    return alen > 0 && alen == blen && memcmp(a, b, alen) == 0;
}

/* Mark the main binary's mappings (symbolized through the symmap) or
 * refuse a trace and symmap of different builds. */
static int join_symmap(loader *L, trace_state *T, char *err, size_t errlen)
{
    if (!L->symmap)
        return 0;
    size_t sid_len;
    const uint8_t *sid = sprof_symmap_build_id(L->symmap, &sid_len);
    const char *bin = sprof_symmap_binary_path(L->symmap);
    const sprof_module *main_mod = NULL;
    for (size_t i = 0; i < T->as.n && !main_mod; i++) {
        const sprof_module *m = T->as.v[i].mod;
        if (same_id(m->build_id, m->build_id_len, sid, sid_len))
            main_mod = m;
    }
    const sprof_module *exe = NULL;
    if (!main_mod) {
        /* the executable's own mapping, to name its build in the message */
        for (size_t i = 0; i < T->as.n && !exe; i++)
            if (T->exe_path && T->exe_path[0] && strcmp(T->as.v[i].mod->path, T->exe_path) == 0)
                exe = T->as.v[i].mod;
        for (size_t i = 0; i < T->as.n && !exe; i++)
            if (bin && bin[0] && strcmp(base_name(T->as.v[i].mod->path), base_name(bin)) == 0)
                exe = T->as.v[i].mod;
        if (exe && (sid_len == 0 || exe->build_id_len == 0))
            main_mod = exe; /* one side has no build-id: trust the path */
    }
    if (!main_mod && !exe && T->cut) {
        /* not a build mismatch: the program was stopped before the runtime
         * wrote what the join needs */
        snprintf(err, errlen,
                 "%s: the trace is cut short at byte %" PRIu64 ", before %s: the program was "
                 "stopped as sprof started (no samples to read); profile it again",
                 T->path, T->cut_at,
                 !T->have_info ? "its INFO record" : T->as.n ? "the mapping of the executable" : "its mappings");
        return -1;
    }
    if (!main_mod) {
        if (!L->opt->force) {
            char a[80], b[80];
            hex(exe ? exe->build_id : NULL, exe ? exe->build_id_len : 0, a, sizeof a);
            hex(sid, sid_len, b, sizeof b);
            snprintf(err, errlen,
                     "%s (build-id %s) and %s (build-id %s) come from different builds; "
                     "use --force to fold anyway",
                     T->path, a, L->symmap_path, b);
            return -1;
        }
        T->forced = 1;
        main_mod = exe;
        if (!main_mod)
            return 0; /* nothing to join: everything is named from ELF files */
    }
    /* Re-point every mapping of that file at a module flagged as main. */
    char *path = strdup(main_mod->path);
    uint8_t id[32];
    uint32_t idlen = main_mod->build_id_len;
    memcpy(id, main_mod->build_id, idlen);
    if (!path) {
        snprintf(err, errlen, "%s: out of memory", T->path);
        return -1;
    }
    sprof_module *m = sprof_module_get(&L->modules, path, id, idlen, 1);
    for (size_t i = 0; m && i < T->as.n; i++)
        if (strcmp(T->as.v[i].mod->path, path) == 0)
            T->as.v[i].mod = m;
    free(path);
    if (!m) {
        snprintf(err, errlen, "%s: out of memory", T->path);
        return -1;
    }
    return 0;
}

/* ---- merging stacks ---- */

/* The synthetic leaf of a kernel-time sample: no code, no line, class kernel. */
static uint32_t kernel_frame(sprof_profile *p, const char *name)
{
    sprof_pframe f = { .name = name, .c_name = "", .file = "", .module = "", .kind = SPROF_KIND_NATIVE,
                       .cost = SPROF_COST_KERNEL, .flags = SPROF_PFRAME_SYNTHETIC };
    return sprof_profile_intern_frame(p, &f);
}

/* Stands where a cut stack (STACK_CUT) lost frames: no code, class native. */
static uint32_t unrecorded_frame(sprof_profile *p)
{
    sprof_pframe f = { .name = "[frames not recorded]", .c_name = "", .file = "", .module = "",
                       .kind = SPROF_KIND_NATIVE, .cost = SPROF_COST_NATIVE, .flags = SPROF_PFRAME_SYNTHETIC };
    return sprof_profile_intern_frame(p, &f);
}

static int expand_trace(loader *L, trace_state *T, sprof_trace *t, char *err, size_t errlen)
{
    sprof_profile *p = L->p;
    code_ctx ctx = { L, T };
    sprof_unwind_env env = { &ctx, oracle_is_code, oracle_cfi, oracle_sigreturn_at };
    if (L->opt->timeline) {
        T->stack_of_raw = malloc((T->raw.distinct ? T->raw.distinct : 1) * sizeof *T->stack_of_raw);
        if (!T->stack_of_raw) {
            snprintf(err, errlen, "%s: out of memory", T->path);
            return -1;
        }
        for (size_t ri = 0; ri < T->raw.distinct; ri++)
            T->stack_of_raw[ri] = UINT32_MAX;
    }
    for (size_t ri = 0; ri < T->raw.distinct; ri++) {
        const sprof_raw_sample *r = &T->raw.v[ri];
        sprof_sample_view s;
        sprof_raw_view(r, &s);
        /* distinct samples are in file order: a second pass that gives the
         * trace's pages back behind it, as the read did */
        sprof_trace_release(t, r->body);
        sprof_unwind_info ui;
        size_t npcs = sprof_unwind_steps(&s, &env, L->pcs, L->pc_exact, MAX_UNWIND_FRAMES, &ui);
        /* A skidded sample's leaf function only held the syscall instruction
         * its signal waited at: the time was spent in the caller. pcs[0] is
         * that function's pc (its inline frames expand from it too). */
        size_t first = (s.flags & SPROF_SAMPLE_SYSCALL_SKID) && npcs > 1 ? 1 : 0;
        uint32_t n = 0;
        /* the unwind needed a word the sampler could not record and jumped to
         * the recorded chain: frames in between may be missing. Say so in the
         * stack itself, and count it incomplete below. */
        int cut = (s.flags & SPROF_SAMPLE_STACK_CUT) && ui.missing_word;
        for (size_t i = first; i < npcs; i++) {
            int gap = cut && i == ui.gap_at && i > first && n < MAX_STACK_FRAMES;
            if (gap) {
                L->linked[n] = 0;
                L->stack[n++] = unrecorded_frame(p);
            }
            const uint32_t *fr;
            uint32_t k = sprof_symbolize(L->sym, sprof_as_find(&T->as, L->pcs[i] - (i > 0)),
                                         L->pcs[i], i > 0, &fr);
            if (k == 0) {
                snprintf(err, errlen, "%s: out of memory", T->path);
                return -1;
            }
            for (uint32_t j = 0; j < k && n < MAX_STACK_FRAMES; j++) {
                /* a pc's inline frames are one physical frame */
                L->linked[n] = j > 0 || (i > first && L->pc_exact[i] && !gap);
                L->stack[n++] = fr[j];
            }
        }
        /* no recorded chain to take over: the missing frames are the outermost */
        if (cut && ui.gap_at >= npcs && n < MAX_STACK_FRAMES) {
            L->linked[n] = 0;
            L->stack[n++] = unrecorded_frame(p);
        }
        int complete;
        n = sprof_shape_stack(p, L->stack, L->linked, n, &complete);
        if (s.flags & SPROF_SAMPLE_THREAD_TAIL) /* a thread's start routine: its root by construction */
            complete = 1;
        /* Incomplete where the missing frames are in the stack kept, not
         * where they were in what the shaping dropped beyond its root: a
         * fiber's stale chain back into whoever started it, on the thread's
         * stack, which perf_event's copy of the fiber's stack cannot hold
         * (a ucontext fiber under perf_event read 96 % incomplete for 0 %) */
        if (cut && complete) {
            uint32_t gap = unrecorded_frame(p);
            for (uint32_t i = 0; i < n && complete; i++)
                complete = L->stack[i] != gap;
        }
        if (!complete)
            p->stats.incomplete += r->count;
        uint32_t m = 0;
        if (L->opt->per_thread) {
            const char *tname = sprof_thread_names_get(&T->threads, s.tid);
            char name[300];
            if (tname && tname[0])
                snprintf(name, sizeof name, "[thread %s %" PRIu32 "]", tname, s.tid);
            else
                snprintf(name, sizeof name, "[thread %" PRIu32 "]", s.tid);
            L->rooted[m++] = sprof_synthetic_frame(p, name, SPROF_KIND_NATIVE);
        }
        for (uint32_t i = n; i-- > 0;)
            L->rooted[m++] = L->stack[i];
        char kname[64];
        if (sprof_kernel_leaf_name(s.flags, kname, sizeof kname))
            L->rooted[m++] = kernel_frame(p, kname);
        uint32_t si;
        if (sprof_profile_add_stack_at(p, L->rooted, m, r->count, r->weight_ns, L->opt->per_thread ? s.tid : 0,
                                       &si) != 0) {
            snprintf(err, errlen, "%s: out of memory", T->path);
            return -1;
        }
        if (T->stack_of_raw)
            T->stack_of_raw[ri] = si;
    }
    if (L->opt->timeline && timeline_finish(p, T) != 0) {
        snprintf(err, errlen, "%s: out of memory", T->path);
        return -1;
    }
    return 0;
}

static void trace_state_free(trace_state *T)
{
    sprof_as_free(&T->as);
    sprof_raw_free(&T->raw);
    sprof_thread_names_free(&T->threads);
    sprof_draw_split_free(&T->draws);
    free(T->exe_path);
    free(T->tl);
    free(T->stack_of_raw);
}

/* Widen the profile's wall-clock span by this trace's: its start (or the
 * start of the --from window) to its last kept sample, converted from the
 * monotonic clock the samples carry through the INFO record's pair. */
static void note_time_span(sprof_profile *p, const trace_state *T, uint64_t from_ns)
{
    if (!T->start_realtime_ns || !T->kept)
        return;
    uint64_t start = T->start_realtime_ns + from_ns;
    uint64_t end = T->start_realtime_ns + (T->last_kept_ns > T->start_ns ? T->last_kept_ns - T->start_ns : 0);
    if (end < start)
        end = start;
    if (!p->start_realtime_ns || start < p->start_realtime_ns)
        p->start_realtime_ns = start;
    if (end > p->end_realtime_ns)
        p->end_realtime_ns = end;
}

static int add_accounting(sprof_profile *p, sprof_trace_accounting *a, const char *path, char *err,
                          size_t errlen)
{
    sprof_trace_accounting *v = realloc(p->traces, (p->ntraces + 1) * sizeof *v);
    if (v)
        p->traces = v;
    if (!v || !(a->path = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    p->traces[p->ntraces++] = *a;
    return 0;
}

static int load_one(loader *L, const char *path, char *err, size_t errlen)
{
    sprof_trace *t = sprof_trace_open(path, err, errlen);
    if (!t)
        return -1;
    trace_state T;
    memset(&T, 0, sizeof T);
    T.path = path;
    int rc = read_trace(L, &T, t, err, errlen);
    if (rc == 0 && sprof_trace_truncated(t))
        L->p->stats.truncated_files++;
    T.cut = sprof_trace_truncated(t);
    T.cut_at = sprof_trace_offset(t);
    if (rc == 0) {
        sprof_as_finish(&T.as);
        rc = join_symmap(L, &T, err, errlen);
    }
    if (rc == 0)
        rc = expand_trace(L, &T, t, err, errlen);
    if (rc == 0) {
        /* in the unit of the stacks' counts (a tick kernel sample counts as
         * the periods it stands for), so incomplete <= samples */
        L->p->stats.samples += T.counted;
        L->p->stats.filtered += T.filtered;
        L->p->stats.truncated += T.truncated;
        L->p->stats.dropped += T.dropped;
        if (T.forced)
            L->p->stats.forced += T.counted;
        note_time_span(L->p, &T, L->opt->from_ns);
        rc = add_accounting(L->p, &T.acct, path, err, errlen);
    }
    trace_state_free(&T);
    sprof_trace_close(t);
    return rc;
}

int sprof_profile_add_traces(sprof_profile *p, const char *const *trace_paths, size_t ntraces,
                             const char *symmap_path, const sprof_load_options *opt, char *err,
                             size_t errlen)
{
    static const sprof_load_options defaults;
    loader L;
    memset(&L, 0, sizeof L);
    L.p = p;
    L.opt = opt ? opt : &defaults;
    L.symmap_path = symmap_path;
    L.had_traces = p->hz != 0;
    if (symmap_path) {
        L.symmap = sprof_symmap_open(symmap_path, err, errlen);
        if (!L.symmap)
            return -1;
        size_t len;
        const uint8_t *id = sprof_symmap_build_id(L.symmap, &len);
        if (len > sizeof p->build_id)
            len = sizeof p->build_id;
        memcpy(p->build_id, id, len);
        p->build_id_len = (uint32_t)len;
        const char *bin = sprof_symmap_binary_path(L.symmap);
        if (bin && bin[0] && !p->binary_path)
            p->binary_path = strdup(bin);
    }
    L.sym = sprof_symbolizer_new(p, L.symmap, L.opt->no_inline);
    L.pcs = malloc(MAX_UNWIND_FRAMES * sizeof *L.pcs);
    L.pc_exact = malloc(MAX_UNWIND_FRAMES);
    L.stack = malloc(MAX_STACK_FRAMES * sizeof *L.stack);
    L.linked = malloc(MAX_STACK_FRAMES);
    L.rooted = malloc((MAX_STACK_FRAMES + 2) * sizeof *L.rooted); /* + thread root + kernel leaf */
    int rc = 0;
    if (!L.sym || !L.pcs || !L.pc_exact || !L.stack || !L.linked || !L.rooted) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < ntraces; i++)
        rc = load_one(&L, trace_paths[i], err, errlen);
    if (L.sym)
        p->stats.unresolved_pcs += sprof_symbolizer_unresolved(L.sym);
    /* cpu unless every trace (of this and earlier calls) was wall */
    if (L.any_trace && !(L.had_traces && p->mode == SPROF_MODE_CPU))
        p->mode = L.any_cpu_trace ? SPROF_MODE_CPU : SPROF_MODE_WALL;
    sprof_symbolizer_free(L.sym);
    sprof_module_cache_free(&L.modules);
    if (L.symmap)
        sprof_symmap_close(L.symmap);
    free(L.pcs);
    free(L.pc_exact);
    free(L.stack);
    free(L.linked);
    free(L.rooted);
    return rc;
}
