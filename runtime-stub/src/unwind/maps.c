/* /proc/self/maps → MAPPING records (executable mappings, with the GNU
 * build-id read from each ELF file's notes) and the handler's exec table.
 * Runs in the writer thread (or at start), never in a signal handler. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt_internal.h"

#define MAX_SEEN 4096

struct seen_map {
    uint64_t start, end, off;
    uint32_t path_hash;
};
static struct seen_map seen[MAX_SEEN];
static uint32_t nseen;

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

/* The GNU build-id in a block of PT_NOTE bytes; its length (0 if none). */
static uint32_t build_id_in_notes(const uint8_t *buf, size_t n, uint8_t out[32])
{
    size_t o = 0;
    while (o + sizeof(Elf64_Nhdr) <= n) {
        Elf64_Nhdr nh;
        memcpy(&nh, buf + o, sizeof nh);
        size_t name_off = o + sizeof nh;
        size_t desc_off = name_off + ((nh.n_namesz + 3u) & ~3u);
        size_t next = desc_off + ((nh.n_descsz + 3u) & ~3u);
        if (nh.n_namesz > n || nh.n_descsz > n || next > n) break;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
            uint32_t len = nh.n_descsz > 32 ? 32 : nh.n_descsz;
            memcpy(out, buf + desc_off, len);
            return len;
        }
        o = next;
    }
    return 0;
}

/* The vDSO is no file: read its build-id from the mapped image (whole ELF
 * file mapped from offset 0, readable), so the offline side can check the
 * vDSO it unwinds with is the same one. */
static uint32_t vdso_build_id(uint64_t start, uint64_t end, uint8_t out[32])
{
    uint64_t base = getauxval(AT_SYSINFO_EHDR);
    if (!base || base != start || end - start < sizeof(Elf64_Ehdr)) return 0;
    const uint8_t *img = (const uint8_t *)(uintptr_t)base;
    size_t size = (size_t)(end - start);
    Elf64_Ehdr eh;
    memcpy(&eh, img, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size || eh.e_phnum > (size - eh.e_phoff) / sizeof(Elf64_Phdr))
        return 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, img + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type != PT_NOTE || ph.p_offset > size || ph.p_filesz > size - ph.p_offset) continue;
        uint32_t len = build_id_in_notes(img + ph.p_offset, (size_t)ph.p_filesz, out);
        if (len) return len;
    }
    return 0;
}

/* Read the GNU build-id note of an ELF file; returns its length (0 if none). */
static uint32_t read_build_id(const char *path, uint8_t out[32])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    uint32_t len = 0;
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        goto out;
    for (unsigned i = 0; i < eh.e_phnum && !len; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) break;
        if (ph.p_type != PT_NOTE || ph.p_filesz > 65536) continue;
        uint8_t buf[4096];
        size_t n = ph.p_filesz < sizeof buf ? ph.p_filesz : sizeof buf;
        if (pread(fd, buf, n, (off_t)ph.p_offset) != (ssize_t)n) continue;
        len = build_id_in_notes(buf, n, out);
    }
out:
    close(fd);
    return len;
}

static int was_seen(uint64_t start, uint64_t end, uint64_t off, uint32_t h)
{
    for (uint32_t i = 0; i < nseen; i++)
        if (seen[i].start == start && seen[i].end == end && seen[i].off == off && seen[i].path_hash == h)
            return 1;
    return 0;
}

static void emit_mapping(uint64_t start, uint64_t end, uint64_t off, uint32_t prot, const char *path)
{
    uint8_t rec[sizeof(struct sprof_rec_mapping) + 4096 + 8];
    struct sprof_rec_mapping *m = (struct sprof_rec_mapping *)rec;
    memset(m, 0, sizeof *m);
    size_t plen = strnlen(path, 4095);
    m->h.type = SPROF_REC_MAPPING;
    m->h.size = sprof_pad8((uint32_t)(sizeof *m + plen + 1));
    m->start = start;
    m->end = end;
    m->file_offset = off;
    m->prot = prot;
    if (path[0] == '/') m->build_id_len = read_build_id(path, m->build_id);
    else if (!strcmp(path, "[vdso]")) m->build_id_len = vdso_build_id(start, end, m->build_id);
    memset(rec + sizeof *m, 0, m->h.size - sizeof *m);
    memcpy(rec + sizeof *m, path, plen);
    sprof_out_append(rec, m->h.size);
}

/* [s, e) one of the n sorted ranges? */
static int in_first(const uint64_t *r, uint32_t n, uint64_t s, uint64_t e)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (r[2 * mid] < s) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && r[2 * lo] == s && r[2 * lo + 1] == e;
}

/* Does [s, e) overlap one of the n sorted, disjoint ranges? */
static int overlaps(const uint64_t *r, uint32_t n, uint64_t s, uint64_t e)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) { /* the first range ending above s */
        uint32_t mid = (lo + hi) / 2;
        if (r[2 * mid + 1] <= s) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && r[2 * lo] < e;
}

/* Code unmapped since the last read (dlclose; a JIT freeing a region)
 * stays in the table, VOLATILE, for GHOST_NS: perf_event's samples are
 * handled after the fact, and a program that loads and unloads a library
 * again and again (mapped at the same place each time) has return
 * addresses into it on its stacks while a read between two loads left it
 * out; those words must still count as code, or the offline unwinder
 * misses them and skips that library's frames. Its bytes are read only
 * through code_read (unwind_x86_64.c), which fails where nothing is. */
#define GHOST_MAX 256
#define GHOST_NS 2000000000ull
static struct { uint64_t s, e, until; } ghosts[GHOST_MAX];
static uint32_t nghosts;
static uint64_t prev[2 * 4096];
static uint8_t prev_kind[4096];
static uint32_t nprev;

static uint32_t add_ghosts(uint64_t *ranges, uint8_t *kinds, uint32_t nr, uint32_t cap)
{
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
    for (uint32_t i = 0; i < nprev; i++) {
        uint64_t s = prev[2 * i], e = prev[2 * i + 1];
        if (prev_kind[i] != SPROF_EXEC_VOLATILE || overlaps(ranges, nr, s, e)) continue;
        uint32_t g = 0;
        while (g < nghosts && !(ghosts[g].s == s && ghosts[g].e == e)) g++;
        if (g == nghosts && nghosts < GHOST_MAX) nghosts++;
        if (g < nghosts) ghosts[g].s = s, ghosts[g].e = e, ghosts[g].until = now + GHOST_NS;
    }
    memcpy(prev, ranges, nr * 16u);
    memcpy(prev_kind, kinds, nr);
    nprev = nr;
    uint32_t keep = 0;
    for (uint32_t g = 0; g < nghosts; g++) {
        /* dropped once mapped again (or over an earlier ghost, which ranges
         * holds by now) */
        if (now >= ghosts[g].until || overlaps(ranges, nr, ghosts[g].s, ghosts[g].e)) continue;
        uint64_t s = ghosts[g].s, e = ghosts[g].e;
        ghosts[keep++] = ghosts[g];
        if (nr >= cap) continue;
        uint32_t at = nr; /* sorted insert: the ghosts are few */
        while (at > 0 && ranges[2 * (at - 1)] > s) at--;
        memmove(ranges + 2 * at + 2, ranges + 2 * at, (nr - at) * 16u);
        memmove(kinds + at + 1, kinds + at, nr - at);
        ranges[2 * at] = s;
        ranges[2 * at + 1] = e;
        kinds[at] = SPROF_EXEC_VOLATILE;
        nr++;
    }
    nghosts = keep;
    return nr;
}

/* /proc/self/maps stays open (an owned descriptor, checked before each
 * use; a forked child's is closed with the others and opened afresh) and
 * its buffer mapped: an open and a 64 KiB map and unmap were half of each
 * read's ~85 us. */
static int maps_fd = -1;
static char *maps_buf;
static size_t maps_cap;

int sprof_maps_scan(int emit_records)
{
    int fd = sprof_fd_checked(&maps_fd);
    if (fd < 0) fd = sprof_fd_adopt(open("/proc/self/maps", O_RDONLY | O_CLOEXEC), &maps_fd, SPROF_FD_FILE);
    if (fd < 0) return -1;
    /* mapped, not malloc'ed: the writer thread never calls malloc
     * (host/own_threads.c) */
    if (!maps_buf) {
        char *b = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b == MAP_FAILED) return -1;
        maps_buf = b;
        maps_cap = 1 << 16;
    }
    size_t len = 0;
    for (;;) {
        if (len + 4096 > maps_cap) {
            char *nb = mremap(maps_buf, maps_cap, maps_cap * 2, MREMAP_MAYMOVE);
            if (nb == MAP_FAILED) break;
            maps_buf = nb;
            maps_cap *= 2;
        }
        ssize_t n = pread(fd, maps_buf + len, maps_cap - len - 1, (off_t)len);
        if (n <= 0) break;
        len += (size_t)n;
    }
    char *buf = maps_buf;
    buf[len] = 0;

    static uint64_t ranges[2 * 4096];
    static uint8_t kinds[4096];
    /* the file mappings of the first read: the program, the libraries it
     * started with, the vDSO (sprof_exec_kind) */
    static uint64_t first[2 * 4096];
    static uint32_t nfirst;
    static int first_done;
    uint32_t nr = 0;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long s, e, off;
        char perms[8] = {0};
        int path_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &path_at) < 4) continue;
        if (perms[2] != 'x') continue;
        const char *path = path_at > 0 && (size_t)path_at <= strlen(line) ? line + path_at : "";
        if (!strcmp(path, "[vsyscall]")) continue;
        if (nr < 4096) {
            ranges[2 * nr] = s;
            ranges[2 * nr + 1] = e;
            int file = path[0] == '/' || !strcmp(path, "[vdso]");
            if (!first_done && file && nfirst < 4096) {
                first[2 * nfirst] = s;
                first[2 * nfirst + 1] = e;
                nfirst++;
            }
            kinds[nr] = file && in_first(first, nfirst, s, e) ? SPROF_EXEC_STABLE : SPROF_EXEC_VOLATILE;
            nr++;
        }
        uint32_t h = hash_str(path);
        if (emit_records && !was_seen(s, e, off, h)) {
            uint32_t prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
            emit_mapping(s, e, off, prot, path);
            if (nseen < MAX_SEEN) seen[nseen++] = (struct seen_map){s, e, off, h};
        }
    }
    first_done = 1;
    /* code ranges the previous read did not have (both lists sorted) */
    int fresh = 0;
    for (uint32_t i = 0, j = 0; i < nr; i++) {
        while (j < nprev && prev[2 * j] < ranges[2 * i]) j++;
        if (j == nprev || prev[2 * j] != ranges[2 * i] || prev[2 * j + 1] != ranges[2 * i + 1]) fresh++;
    }
    nr = add_ghosts(ranges, kinds, nr, 4096);
    sprof_exec_table_publish(ranges, kinds, nr); /* maps are sorted by address */
    return fresh;
}

void sprof_maps_reset(void)
{
    nseen = 0;
}

/* A read of the maps on demand: at most every 10 ms, backing off to once
 * a second while reading does not help. */
struct maps_pace {
    uint64_t next_ok, gap;
};
#define PACE_MIN_NS 10000000ull
#define PACE_MAX_NS 1000000000ull

/* The time now if a read is due, else 0. */
static uint64_t pace_due(const struct maps_pace *p)
{
    uint64_t now = sprof_now_ns(CLOCK_MONOTONIC);
    return now >= p->next_ok ? now : 0;
}

static void pace_after(struct maps_pace *p, uint64_t now, int helped)
{
    p->gap = helped ? PACE_MIN_NS : (p->gap * 2 < PACE_MAX_NS ? p->gap * 2 : PACE_MAX_NS);
    p->next_ok = now + p->gap;
}

/* A sample whose pc lies in no executable range the table knows: code
 * mapped since the maps were last read (dlopen, a JIT's new region). Read
 * them again before that sample is recorded, so that its MAPPING comes
 * first and (perf_event) its chain validates, paced (a pc that is no code:
 * a jump through a bad pointer). With this the periodic read can be rare
 * (writer.c). Writer thread, io_lock held. */
void sprof_maps_cover(uint64_t pc)
{
    static struct maps_pace pace = {0, PACE_MIN_NS};
    if (!pc || sprof_is_exec(pc)) return;
    uint64_t now = pace_due(&pace);
    if (!now) return;
    sprof_maps_scan(1);
    pace_after(&pace, now, sprof_is_exec(pc));
}

/* A sample in the dynamic linker: it may be loading or binding a library
 * the table does not have yet (dlopen), and a return address into that
 * library, a word of the stack, is kept as a candidate only once the table
 * has it: lazybind's stacks through ld.so's trampoline lost their caller
 * in 13-31 % of the first 100 ms (loaded machine), counted complete. Read
 * the maps again, paced, helped when a read finds new code (a library
 * unloaded stays in the table as a ghost for 2 s, so one loaded again at
 * the same place is known). Writer thread, io_lock held. */
void sprof_maps_loader(void)
{
    static struct maps_pace pace = {0, PACE_MIN_NS};
    uint64_t now = pace_due(&pace);
    if (!now) return;
    pace_after(&pace, now, sprof_maps_scan(1) > 0);
    atomic_store_explicit(&g_sprof.maps_loader_due_ns, pace.next_ok, memory_order_relaxed);
}
