/* perf_event mechanism: one software task-clock event per thread, opened by
 * the thread itself when it starts. The kernel samples on its hrtimer,
 * walks the user frame pointers and copies a little of the user stack into
 * the event's ring buffer; no signal is delivered. The writer thread drains
 * the rings and turns each PERF_RECORD_SAMPLE into a SAMPLE record
 * (sprof_build_from_dump derives candidates and frame offsets from the dump). */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

#if defined(__x86_64__)
#include <asm/perf_regs.h>
#define REG_MASK                                                                                    \
    ((1ull << PERF_REG_X86_BX) | (1ull << PERF_REG_X86_CX) | (1ull << PERF_REG_X86_BP) |           \
     (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))
/* values come in bit order: bx (1), cx (2), bp (6), sp (7), ip (8); cx tells
 * a system-call entry (it holds the return address) from a fault; bx is the
 * CFA base of ld.so's lazy-binding trampoline (sprof_add_rbx) */
#define REG_COUNT 5
#define REG_SYSCALL(regs) ((regs)[1]) /* cx */
#define REG_BX(regs) ((regs)[0])
#define REG_IDX_FP 2
#define REG_IDX_SP 3
#define REG_IDX_PC 4
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
#define REG_MASK ((1ull << PERF_REG_ARM64_X29) | (1ull << PERF_REG_ARM64_SP) | (1ull << PERF_REG_ARM64_PC))
#define REG_COUNT 3
#define REG_SYSCALL(regs) 0 /* no system-call fingerprint (sprof_syscall_return: x86-64 only) */
#define REG_BX(regs) 0
#define REG_IDX_FP 0
#define REG_IDX_SP 1
#define REG_IDX_PC 2
#endif

/* Ring size: ~200 ms of samples at the asked rate (the stack copy dominates
 * a sample's size), so a writer delayed by a loaded machine does not lose
 * any; 16..512 pages. Halved until mmap succeeds (the locked memory budget:
 * perf_event_mlock_kb per user, then RLIMIT_MEMLOCK per process). */
size_t sprof_perf_data_pages(void)
{
    return sprof_perf_data_pages_for(g_sprof.cfg.perf_stack);
}

size_t sprof_perf_data_pages_for(uint32_t stack_bytes)
{
    uint64_t want = (uint64_t)g_sprof.cfg.hz * (stack_bytes + 256u) / 5u;
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = 16;
    while (pages < 512 && (uint64_t)pages * (uint64_t)page < want) pages *= 2;
    return pages;
}

static uint32_t max_stack_sysctl(void)
{
    int fd = open("/proc/sys/kernel/perf_event_max_stack", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 127;
    char buf[32] = {0};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    long v = n > 0 ? strtol(buf, NULL, 10) : 127;
    return v > 0 ? (uint32_t)v : 127;
}

static uint32_t chain_max;

/* kernel: sample kernel mode too (perf_event_paranoid <= 1 or
 * CAP_PERFMON). A kernel-mode sample still carries the user registers and
 * stack (REGS_USER, STACK_USER, the user callchain): the context that
 * entered the kernel. tid 0: the calling thread; the writer opens the
 * events of the threads the program starts by their tid. */
static int open_event(int kernel, pid_t tid, uint32_t stack_bytes, uint64_t period)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period;
    /* CPU: where the thread runs, for the writer to run there too (output/writer_place.c) */
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_READ |
                    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.read_format = 0;
    a.sample_regs_user = REG_MASK;
    a.sample_stack_user = stack_bytes;
    a.exclude_kernel = kernel ? 0 : 1;
    a.disabled = 1; /* enabled once the thread's set-up is done: sprof's own work is not the program's */
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    if (!chain_max) {
        uint32_t sys = max_stack_sysctl();
        chain_max = g_sprof.cfg.max_depth + 1 < sys ? g_sprof.cfg.max_depth + 1 : sys;
    }
    a.sample_max_stack = (uint16_t)chain_max;
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int sprof_perf_probe(void)
{
#if !defined(REG_MASK)
    return -1;
#else
    int fd = open_event(0, 0, g_sprof.cfg.perf_stack, g_sprof.period_ns);
    if (fd < 0) return -1;
    close(fd);
    return 0;
#endif
}

int sprof_perf_probe_kernel(void)
{
#if !defined(REG_MASK)
    return -1;
#else
    int fd = open_event(1, 0, g_sprof.cfg.perf_stack, g_sprof.period_ns);
    if (fd < 0) return -1;
    close(fd);
    return 0;
#endif
}

/* A new event for thread tid copying stack_bytes of its stack per sample
 * every period, and its ring; not enabled, its descriptor not yet adopted. */
int sprof_perf_open_ring(pid_t tid, uint32_t stack_bytes, uint64_t period, int *fd_out, void **base_out,
                         size_t *len_out)
{
    int fd = open_event(g_sprof.ksample == SPROF_KSAMPLE_PERF, tid, stack_bytes, period);
    if (fd < 0) return -1;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t pages = sprof_perf_data_pages_for(stack_bytes); pages >= 4; pages /= 2) {
        size_t len = (size_t)page * (pages + 1);
        void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            *fd_out = fd;
            *base_out = p;
            *len_out = len;
            return 0;
        }
        if (errno != EPERM && errno != ENOMEM) break;
    }
    int err = errno;
    close(fd);
    errno = err;
    return -1;
}

int sprof_perf_thread_start(struct sprof_thread *t)
{
    int fd;
    if (!t->perf_stack) t->perf_stack = g_sprof.cfg.perf_stack;
    if (sprof_perf_open_ring((pid_t)t->tid, t->perf_stack, g_sprof.period_ns, &fd, &t->perf_base, &t->perf_len) != 0)
        return -1;
    sprof_fd_adopt(fd, &t->perf_fd, SPROF_FD_PERF); /* high, identity kept */
    return 0;
}

/* Have the kernel signal thread tid (sprof's signal, si_fd = fd) at each
 * overflow of event fd: perf queues it once the event has an owner.
 * 0, or -1 (fd < 0 included). Raw system calls: fcntl() on sprof's own
 * descriptors is refused by its interposer (fd_interpose.c). Shared by the
 * live walks (perf_assist.c) and the phase kicks (perf_phase.c). */
int sprof_perf_signal_owner(int fd, pid_t tid)
{
    struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = tid};
    long fl = fd >= 0 ? syscall(SYS_fcntl, fd, F_GETFL) : -1;
    if (fl < 0 || syscall(SYS_fcntl, fd, F_SETOWN_EX, &owner) != 0 || syscall(SYS_fcntl, fd, F_SETSIG, g_sprof.sig) != 0 ||
        syscall(SYS_fcntl, fd, F_SETFL, fl | O_ASYNC) != 0)
        return -1;
    return 0;
}

void sprof_perf_thread_enable(struct sprof_thread *t)
{
    int fd = sprof_fd_checked(&t->perf_fd);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

uint64_t sprof_perf_count(struct sprof_thread *t)
{
    uint64_t v = 0;
    int fd = sprof_fd_checked(&t->perf_fd);
    if (fd < 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v) return 0;
    return v + t->perf_count_base;
}

void sprof_perf_thread_stop(struct sprof_thread *t)
{
    sprof_perf_phase_disable(t);
    int fd = sprof_fd_checked(&t->perf_fd);
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

static uint8_t wrap_buf[65536 + 64];
static uint8_t *rec_buf;
static uint32_t rec_cap;

/* Weight of a sample when kernel time is sampled. The event's timer fires
 * every period of the thread's CPU, and the task clock's advance since the
 * previous sample is normally one period. More means periods no sample was
 * taken for:
 *  - with the tick sampler, those whose timer fired in kernel mode: the
 *    tick's KERNEL samples have that time, and a user sample stands for
 *    one period (scaled: perf_ktick.c);
 *  - with kernel mode sampled too, a period cut short by the thread
 *    blocking (a thread that runs 20 us between sleeps lost 18 % of its
 *    samples that way: the advance carries them to its next sample, in the
 *    same code) or the kernel throttling the event on a loaded machine,
 *    whose whole stretch would land on the next sample (3 pp on one of 50
 *    methods): at most 4 periods are carried. What is left out shows in
 *    the coverage figure. */
static uint64_t sample_weight(const struct sprof_thread *t, uint64_t delta)
{
    const uint64_t period = sprof_perf_period_now(t); /* dithered: perf_period.c */
    uint64_t cap = g_sprof.ksample == SPROF_KSAMPLE_PERF ? 4 * period : period;
    return delta < cap ? delta : cap;
}

/* The runtime's own code when it is a library of its own (preloaded
 * libsprof.so); [0, 0) when it is linked into the program, where it cannot
 * be told apart from the program's. A sample taken while the runtime works
 * for itself (stopping at exit, an interposed call made by the program) is
 * sprof's CPU, never the program's: the pc in our code, or a frame of ours
 * with the program's own code further out (the thread trampoline of the
 * pthread_create wrapper sits at the root of every thread the program
 * starts: a root frame of ours alone does not count). */
static uint64_t own_lo, own_hi, exe_lo, exe_hi;
/* the dynamic linker's code (its load bias is AT_BASE; none in a static program) */
static uint64_t ldso_lo, ldso_hi, ldso_base;

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uint64_t self = (uint64_t)(uintptr_t)data;
    int program = !info->dlpi_name || !info->dlpi_name[0];
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (program && !exe_hi) {
            exe_lo = lo;
            exe_hi = hi;
        }
        if (!program && self >= lo && self < hi) {
            own_lo = lo;
            own_hi = hi;
        }
        if (!program && ldso_base && info->dlpi_addr == ldso_base && !ldso_hi) {
            ldso_lo = lo;
            ldso_hi = hi;
        }
    }
    return 0;
}

/* At start, on the program's thread: dl_iterate_phdr takes the loader's
 * lock, which sprof's own threads never take (sprof_own_thread_create). */
void sprof_perf_locate_code(void)
{
    own_lo = own_hi = exe_lo = exe_hi = ldso_lo = ldso_hi = 0;
    ldso_base = getauxval(AT_BASE);
    dl_iterate_phdr(find_text, (void *)(uintptr_t)&find_text);
}

int sprof_in_dynamic_linker(uint64_t pc)
{
    return pc >= ldso_lo && pc < ldso_hi;
}

static int in(uint64_t a, uint64_t lo, uint64_t hi)
{
    return a >= lo && a < hi;
}

/* Is the sample in sprof's signal handler? The kernel's chain goes
 * through the handler's frames to the signal-return trampoline only where
 * they have frame records: a library function the handler called (glibc
 * has none: clock_gettime, ioctl, __errno_location) hides the handler's
 * own, and the chain goes on into the interrupted code. Where the chain
 * holds the trampoline of sprof's signal, the copy's signal frame names
 * the signal (sprof_dump_signal). The handler blocks every signal: no
 * other frame is inside it. A sample in 2 of 20 runs of a fiber program,
 * and 1-2 in corpus runs, showed the handler under the program's code,
 * now that the phase kicks run it ~500 times a CPU second. */
static int in_own_signal(const uint64_t *regs, const uint64_t *chain, uint32_t n, const uint8_t *dump, uint64_t dyn)
{
    const uint64_t restorer = g_sprof.sig_restorer;
    if (!restorer || !g_sprof.sig) return 0;
    uint32_t i = 0;
    while (i < n && chain[i] != restorer) i++;
    return i < n && sprof_dump_signal(regs[REG_IDX_SP], regs[REG_IDX_FP], dump, dyn, restorer) == g_sprof.sig;
}

static int in_own_work(const uint64_t *regs, const uint64_t *chain, uint32_t n, const uint8_t *dump, uint64_t dyn)
{
    if (own_lo == own_hi || exe_lo == exe_hi) return 0;
    /* sprof's code running (its start, its exit, an interposer's own work) */
    const uint64_t pc = regs[REG_IDX_PC];
    if (in(pc, own_lo, own_hi)) return 1;
    if (!in(pc, exe_lo, exe_hi) && in_own_signal(regs, chain, n, dump, dyn)) return 1;
    int ours = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (in(chain[i], own_lo, own_hi)) ours = 1;
        else if (ours && in(chain[i], exe_lo, exe_hi)) return 1; /* the program called into us */
    }
    return 0;
}

static uint8_t kick_buf[64 * 1024] __attribute__((aligned(8)));

static uint8_t half_buf[32 * 1024] __attribute__((aligned(8)));

/* A PARTIAL record of rec's stack standing for w of CPU. */
static void emit_part(struct sprof_thread *t, struct sprof_rec_sample *rec, uint32_t size, uint64_t w)
{
    rec->weight_ns = w;
    rec->flags |= SPROF_SAMPLE_PARTIAL;
    sprof_count_sample(t, rec);
    sprof_out_append(rec, size);
}

/* The phase kicks before a sample whose count is `value` (perf_phase.c).
 * A kick comes in user mode only, so the stretch its restart dropped (from
 * the previous sample to the kick) does not end at a point independent of
 * the program, as a period of the grid does: it is split between its two
 * ends, as the trapezoid rule does, half to the previous sample's stack and
 * half to the kick's (PARTIAL records, weighed as the samples are). At
 * 4 kHz, 5 runs each alternated, worst error by cpu weight: acc_pagefault
 * 1.98-2.88 pp with the stretch on the sample after the kick (as before
 * these records: a period after user code, its page-touching method high)
 * -> 0.72-1.07, acc_io 0.22-1.41 -> 0.50-1.34. All of it at the kick read
 * acc_io's compute 1.0-2.0 pp high (a stretch that ends at a kick began in
 * the system calls before it as often as not); the period after the kick
 * split the same way as well read alike (0.24-1.13, 0.18-1.19). Where the
 * previous sample is not kept, all of it goes to the kick; a kick in
 * sprof's own code, or outside the recording (before its start was done,
 * after it stopped), leaves its stretch to the next sample. */
static void emit_kicks(struct sprof_thread *t, uint64_t value)
{
    uint32_t size;
    uint64_t dropped;
    uint64_t stop_time = atomic_load_explicit(&g_sprof.stop_time_ns, memory_order_relaxed);
    uint64_t start_done = atomic_load_explicit(&g_sprof.start_done_ns, memory_order_relaxed);
    for (uint64_t prev = t->perf_last_count;
         sprof_perf_phase_next_kick(t, value, kick_buf, sizeof kick_buf, &size, &dropped);
         prev = t->perf_last_count) {
        struct sprof_rec_sample *k = (struct sprof_rec_sample *)(void *)kick_buf;
        if (in(k->pc, own_lo, own_hi) || (stop_time && k->time_ns >= stop_time) || k->time_ns < start_done) {
            t->perf_last_count -= dropped;
            continue;
        }
        uint64_t w = sprof_perf_clock_scale(t, dropped);
        g_sprof.clock_excess_ns += dropped - w;
        sprof_perf_period_note_part(t, dropped);
        sprof_maps_cover(k->pc);
        uint32_t last_len;
        const void *last = sprof_perf_phase_last_sample(t, prev, &last_len);
        if (last && last_len <= sizeof half_buf && w >= 2) {
            memcpy(half_buf, last, last_len);
            emit_part(t, (struct sprof_rec_sample *)(void *)half_buf, last_len, w / 2);
            w -= w / 2;
        }
        emit_part(t, k, size, w);
    }
}

static void handle_sample(struct sprof_thread *t, const uint8_t *p, uint32_t len, int kernel_mode)
{
    const uint8_t *end = p + len;
#define TAKE(dst) do { if ((size_t)(end - p) < sizeof(dst)) return; memcpy(&(dst), p, sizeof(dst)); p += sizeof(dst); } while (0)
    uint32_t pid, tid, cpu[2]; /* cpu, reserved */
    uint64_t time, value, nr;
    TAKE(pid);
    TAKE(tid);
    TAKE(time);
    TAKE(cpu);
    TAKE(value);
    TAKE(nr);
    if (nr > (uint64_t)(end - p) / 8) return;
    const uint8_t *chain = p;
    p += nr * 8;
    uint64_t abi;
    TAKE(abi);
    uint64_t regs[REG_COUNT] = {0};
    if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
        TAKE(regs);
    }
    uint64_t dump_size;
    TAKE(dump_size);
    if (dump_size > (uint64_t)(end - p)) return;
    const uint8_t *dump = p;
    p += dump_size;
    uint64_t dyn = 0;
    if (dump_size) {
        TAKE(dyn);
        if (dyn > dump_size) dyn = dump_size;
    }
#undef TAKE
    (void)pid;
    atomic_store_explicit(&t->seen_cpu1, (int)cpu[0] + 1, memory_order_relaxed);
    /* user chain: skip context markers; first user entry is the pc itself */
    uint64_t kchain[512];
    uint32_t nk = 0, nuser = 0;
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t ip;
        memcpy(&ip, chain + i * 8, 8);
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) continue;
        nuser++;
        if (nuser == 1) continue;
        if (nk < 512) kchain[nk++] = ip;
    }
    if (abi == PERF_SAMPLE_REGS_ABI_NONE) return; /* no user context (cannot happen with exclude_kernel) */
    if (t->kicks) emit_kicks(t, value + t->perf_count_base);
    uint64_t stop_time = atomic_load_explicit(&g_sprof.stop_time_ns, memory_order_relaxed);
    if (in_own_work(regs, kchain, nk, dump, dyn) || (stop_time && time >= stop_time) ||
        time < atomic_load_explicit(&g_sprof.start_done_ns, memory_order_relaxed)) {
        /* sprof's own work: not a sample, and its CPU is carried to no one;
         * but it is the thread's CPU, which the asked rate is per second
         * of: the delivered-rate window counts it (perf_period.c) */
        uint64_t based = value + t->perf_count_base;
        if (based > t->perf_last_count) sprof_perf_period_note_lost(t, based - t->perf_last_count);
        t->perf_last_count = based;
        return;
    }
    sprof_maps_cover(regs[REG_IDX_PC]); /* before the chain is validated against the table */
    if (sprof_in_dynamic_linker(regs[REG_IDX_PC])) sprof_maps_loader(); /* a library it loads */
    struct sprof_rec_sample *rec = (struct sprof_rec_sample *)rec_buf;
    memset(rec, 0, sizeof *rec);
    rec->tid = tid;
    rec->time_ns = time;
    value += t->perf_count_base; /* the counts of the thread's earlier events (sprof_perf_adapt) */
    const uint64_t advance = value > t->perf_last_count ? value - t->perf_last_count : 0;
    t->perf_last_count = value;
    rec->weight_ns = g_sprof.ksample != SPROF_KSAMPLE_NONE ? sample_weight(t, advance) : advance;
    /* A user-mode sample at a system call's return address (rcx still
     * holding it) is that call's time too: the kernel leaves a system call
     * with interrupts off, so a timer that fires there is taken just after
     * sysret (the instruction there is one compare): acc_cheapcall's
     * getppid read 2.6-3.0 % as [syscall] against 4.1-4.7 %, the rest on
     * the wrapper's user pc. With the tick sampler too: the tick held
     * there is taken in user mode as well and charged to utime, so no
     * kernel sample has that time (acc_io's [syscall] 11-13 pp low). */
    if (kernel_mode || g_sprof.ksample != SPROF_KSAMPLE_NONE) {
        int nr = sprof_syscall_return_near(regs[REG_IDX_PC], REG_SYSCALL(regs), 0);
        if (nr >= -1) rec->flags |= sprof_syscall_flags(nr);
        else if (kernel_mode) rec->flags |= SPROF_SAMPLE_KERNEL;
    }
    uint64_t cpu_weight = sprof_perf_clock_scale(t, rec->weight_ns); /* the thread's own CPU (perf_clock.c) */
    g_sprof.clock_excess_ns += rec->weight_ns - cpu_weight;
    if (g_sprof.ksample == SPROF_KSAMPLE_TICK) /* its period, scaled to the CPU the tick left to user mode */
        cpu_weight = sprof_perf_ktick_weight(t, cpu_weight, sprof_perf_clock_scale(t, advance));
    /* perf_period.c counts periods in the task clock; with the tick
     * sampler, in user mode's CPU (the kernel's periods are the tick's) */
    sprof_perf_period_note(t, g_sprof.ksample == SPROF_KSAMPLE_TICK ? cpu_weight : rec->weight_ns);
    rec->weight_ns = cpu_weight;
    if (g_sprof.mech == SPROF_MECH_WALL_PERF) rec->weight_ns += atomic_exchange(&t->wait_ns, 0);
    uint64_t sp = regs[REG_IDX_SP], stack_hi = t->stack_hi;
    int off = !(sp >= t->stack_lo && sp < t->stack_hi);
    if (off) {
        rec->flags |= SPROF_SAMPLE_OFF_STACK;
        stack_hi = sp + SPROF_FIBER_WINDOW;
    }
    uint32_t size = sprof_build_from_dump(rec, rec_cap, regs[REG_IDX_PC], sp, regs[REG_IDX_FP], kchain, nk,
                                          nuser >= chain_max, dump, dyn, stack_hi, off ? t->stack_lo : 0,
                                          off ? t->stack_hi : 0, off ? 0 : t->root_floor, g_sprof.cfg.max_depth);
    if (!size) return;
    if ((rec->flags & SPROF_SAMPLE_STACK_CUT) && t->assist) { /* the live stack its handler walked */
        uint32_t joined = sprof_perf_assist_join(t, rec, rec_cap, dump, dyn);
        if (joined) size = joined;
    }
    sprof_perf_note_reach(t, rec);
    size = sprof_add_rbx(rec, rec_cap, REG_BX(regs), stack_hi); /* after: it is no stack word */
    sprof_count_sample(t, rec);
    sprof_out_append(rec, size);
    if (t->kicks) sprof_perf_phase_note_sample(t, rec, size, value);
}

/* Bytes of sample data in a thread's perf ring (after its header page). */
static uint64_t ring_data_size(const struct sprof_thread *t)
{
    return t->perf_len - (uint64_t)sysconf(_SC_PAGESIZE);
}

uint32_t sprof_perf_fill_256(const struct sprof_thread *t)
{
    if (!t->perf_base) return 0;
    const struct perf_event_mmap_page *pg = t->perf_base;
    uint64_t size = ring_data_size(t);
    uint64_t used = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) - pg->data_tail;
    return size ? (uint32_t)(used * 256 / size) : 0;
}

/* Writer thread (io_lock held). Returns the number of records consumed. */
uint64_t sprof_perf_drain(struct sprof_thread *t, uint64_t now_mono)
{
    if (atomic_load(&t->state) == SLOT_ACTIVE) sprof_perf_clock_look(t, now_mono);
    uint64_t n = sprof_perf_drain_ring(t);
    if (atomic_load(&t->state) == SLOT_ACTIVE) sprof_perf_period_update(t);
    if (atomic_load(&t->state) == SLOT_ACTIVE) sprof_perf_phase_begin(t);
    if (atomic_load(&t->state) == SLOT_ACTIVE) sprof_perf_adapt(t);
    return n;
}

/* The records in the thread's ring now, turned into trace records. */
uint64_t sprof_perf_drain_ring(struct sprof_thread *t)
{
    if (!t->perf_base) return 0;
    if (!rec_buf) {
        rec_cap = sprof_scratch_size(g_sprof.cfg.max_depth);
        rec_buf = mmap(NULL, rec_cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (rec_buf == MAP_FAILED) {
            rec_buf = NULL;
            return 0;
        }
    }
    struct perf_event_mmap_page *pg = t->perf_base;
    uint64_t size = ring_data_size(t);
    uint8_t *data = (uint8_t *)t->perf_base + (t->perf_len - size); /* after the header page */
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = pg->data_tail;
    uint64_t n = 0, now = t->assist ? sprof_now_ns(CLOCK_MONOTONIC) : 0;
    while (tail < head) {
        struct perf_event_header h;
        uint64_t off = tail % size;
        if (off + sizeof h <= size) memcpy(&h, data + off, sizeof h);
        else {
            size_t first = (size_t)(size - off);
            memcpy(&h, data + off, first);
            memcpy((uint8_t *)&h + first, data, sizeof h - first);
        }
        if (h.size < sizeof h || h.size > head - tail) break;
        const uint8_t *rec;
        if (off + h.size <= size) rec = data + off;
        else {
            /* h.size is 16-bit: wrap_buf always holds it */
            size_t first = (size_t)(size - off);
            memcpy(wrap_buf, data + off, first);
            memcpy(wrap_buf + first, data, h.size - first);
            rec = wrap_buf;
        }
        uint64_t sample_ns;
        if (h.type == PERF_RECORD_SAMPLE && t->assist && h.size >= sizeof h + 16) {
            memcpy(&sample_ns, rec + sizeof h + 8, 8); /* after pid, tid */
            if (sprof_perf_assist_wait(t, sample_ns, now)) break; /* its walk comes with the next pass */
        }
        if (h.type == PERF_RECORD_SAMPLE)
            handle_sample(t, rec + sizeof h, h.size - (uint32_t)sizeof h,
                          (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL);
        else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            uint64_t lost;
            memcpy(&lost, rec + sizeof h + 8, 8);
            atomic_fetch_add(&t->lost, lost);
        }
        tail += h.size;
        n++;
    }
    __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
    return n;
}
