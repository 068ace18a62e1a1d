/* sprof symmap reader: mmap an app.symmap, validate it once, answer lookups.
 *
 * Depends on libc only. The on-disk format is specified in docs/symmap-format.md.
 * All addresses here are LINK-TIME virtual addresses of the binary (what
 * `nm` prints). Turning a runtime PC into a link-time address is the
 * caller's job, helped by sprof_symmap_file_offset_to_vaddr().
 *
 * Callers pass `pc - 1` for return addresses (every frame but the leaf), so
 * that a call's return address that lands in inlined GC-root cleanup code
 * is attributed to the call site instead.
 */
#ifndef SPROF_SYMMAP_H
#define SPROF_SYMMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What kind of code a frame is. Values are stored on disk: append only. */
enum sprof_kind {
    SPROF_KIND_TOPLEVEL = 0, /* top-level Ruby method: sp_<method> */
    SPROF_KIND_IMETH = 1,    /* instance method: Class#method */
    SPROF_KIND_CMETH = 2,    /* class / module singleton method: Class.method */
    SPROF_KIND_BLOCK = 3,    /* block, proc, lambda, fiber body */
    SPROF_KIND_RUNTIME = 4,  /* Spinel runtime helper (sp_String_*, sp_gc_*) */
    SPROF_KIND_NATIVE = 5,   /* anything else: main, libc, C helpers */
    SPROF_KIND_COUNT
};

/* Where the time goes, in the coarse classes users ask about. Stored on
 * disk, but only the first SPROF_COST_STORED_COUNT: a symmap never carries
 * KERNEL (the writer refuses it, the reader rejects it); the offline tools
 * give it only to the synthetic leaf of a kernel-time sample. */
enum sprof_cost {
    SPROF_COST_USER = 0,    /* Ruby methods and blocks */
    SPROF_COST_RUNTIME = 1, /* Spinel runtime helpers other than the collector */
    SPROF_COST_GC = 2,      /* collector and allocator */
    SPROF_COST_NATIVE = 3,  /* libc, other native code */
    SPROF_COST_STORED_COUNT,
    SPROF_COST_KERNEL = SPROF_COST_STORED_COUNT, /* kernel time on the thread's behalf ([syscall write]) */
    SPROF_COST_COUNT
};

/* Frame flags (bit set). Stored on disk. */
enum sprof_frame_flags {
    SPROF_FRAME_INLINED = 1u << 0,      /* this frame is an inlined copy, no symbol of its own */
    SPROF_FRAME_NAME_APPROX = 1u << 1,  /* Ruby name from the demangler, not Spinel's map */
    SPROF_FRAME_NO_DEBUG = 1u << 2,     /* from the symbol table only, no DWARF */
    SPROF_FRAME_NAME_GUESSED = 1u << 3, /* Ruby name guessed (always with NAME_APPROX): a block placed
                                         * without the .rb source, or in no known method */
    SPROF_FRAME_FOLDED = 1u << 4,       /* several Ruby methods share this code (identical code
                                         * folding): the name lists them */
};

/* How far a frame's Ruby name can be trusted, from its flags. */
enum sprof_name_trust { SPROF_TRUST_EXACT = 0, SPROF_TRUST_FROM_C = 1, SPROF_TRUST_GUESSED = 2 };
static inline enum sprof_name_trust sprof_frame_trust(unsigned flags)
{
    return (flags & SPROF_FRAME_NAME_GUESSED) ? SPROF_TRUST_GUESSED
           : (flags & SPROF_FRAME_NAME_APPROX) ? SPROF_TRUST_FROM_C
                                               : SPROF_TRUST_EXACT;
}

const char *sprof_kind_name(enum sprof_kind k);  /* "toplevel", "imeth", ... */
const char *sprof_cost_name(enum sprof_cost c);  /* "user", "runtime", "gc", "native", "kernel" */

/* One frame at a PC. Strings point into the mapped file (valid until close);
 * a missing string is "" (never NULL). */
typedef struct sprof_frame {
    const char *c_name;    /* C symbol, clone suffix kept (sp_Vec2__plus.isra.0) */
    const char *ruby_name; /* Vec2#+, block in Foo#bar; for non-Ruby code == base C name */
    const char *file;      /* .rb (or .c) file of `line` */
    uint32_t line;         /* innermost frame: line of the PC; outer frames: the call-site line */
    uint32_t def_line;     /* line of the `def` (Spinel map) or of the function, 0 if unknown */
    uint8_t kind;          /* enum sprof_kind */
    uint8_t cost;          /* enum sprof_cost */
    uint16_t flags;        /* enum sprof_frame_flags */
    uint64_t func_lo;      /* link-time start of the containing C function (same for its inlined frames) */
    uint64_t func_hi;      /* end (exclusive) */
} sprof_frame;

/* One compact CFI row: how to find the caller's frame at addresses
 * [lo, next row's lo). x86-64 register numbers as DWARF: 3 = rbx, 6 = rbp,
 * 7 = rsp. SPROF_CFA_UNDEFINED: no rule (no CFI, or an expression we do not
 * model). rbx is tracked because hand-written trampolines keep their CFA in
 * it (ld.so's _dl_runtime_resolve: lazy binding's xsave area realigns the
 * stack): rows read from a symmap have no rbx rule (SPROF_REG_UNKNOWN) and
 * never an rbx CFA; rows compiled from a library's .eh_frame have both. */
enum sprof_cfa_reg { SPROF_CFA_UNDEFINED = 0, SPROF_CFA_RBX = 3, SPROF_CFA_RSP = 7, SPROF_CFA_RBP = 6 };
enum sprof_reg_rule { SPROF_REG_UNKNOWN = 0, SPROF_REG_SAME = 1, SPROF_REG_SAVED = 2 };
typedef struct sprof_cfi_row {
    uint64_t lo;          /* link-time start address */
    uint64_t hi;          /* end (exclusive) */
    uint8_t cfa_reg;      /* enum sprof_cfa_reg */
    int32_t cfa_offset;   /* CFA = reg + cfa_offset */
    int32_t ra_offset;    /* return address saved at CFA + ra_offset (x86-64: -8) */
    uint8_t rbp_saved;    /* 1: caller's rbp saved at CFA + rbp_offset; 0: rbp unchanged */
    int32_t rbp_offset;
    uint8_t rbx_rule;     /* enum sprof_reg_rule: the caller's rbx */
    int32_t rbx_offset;   /* SPROF_REG_SAVED: at CFA + rbx_offset */
} sprof_cfi_row;

/* One loadable segment (PT_LOAD) of the binary, to map runtime PCs back. */
typedef struct sprof_segment {
    uint64_t vaddr, memsz, file_offset, filesz;
    uint32_t flags; /* PF_X | PF_W | PF_R as in ELF */
} sprof_segment;

typedef struct sprof_symmap sprof_symmap;

/* Map and validate `path`. On failure returns NULL and writes one line to
 * err: "<path>: <what is wrong>". A hostile file can never cause an
 * out-of-bounds read afterwards: everything is checked here, once. */
sprof_symmap *sprof_symmap_open(const char *path, char *err, size_t errlen);
/* Same, over bytes already in memory (fuzzing, tests). `name` names it in errors.
 * The bytes must stay alive until close; they are not copied (unless they are
 * not 8-byte aligned: then an aligned private copy is read instead).
 * An open map is read-only: lookups from several threads at once are safe. */
sprof_symmap *sprof_symmap_open_mem(const void *data, size_t size, const char *name,
                                    char *err, size_t errlen);
void sprof_symmap_close(sprof_symmap *m);

/* GNU build-id of the binary (raw bytes); *len = 0 if it had none. */
const uint8_t *sprof_symmap_build_id(const sprof_symmap *m, size_t *len);
/* Path of the binary as given to the generator (for messages). */
const char *sprof_symmap_binary_path(const sprof_symmap *m);
/* 1 if the binary is position independent (ET_DYN). */
int sprof_symmap_is_pie(const sprof_symmap *m);
size_t sprof_symmap_segment_count(const sprof_symmap *m);
const sprof_segment *sprof_symmap_segment(const sprof_symmap *m, size_t i);
/* File offset in the binary -> link-time vaddr, through the PT_LOAD
 * segments. A runtime PC maps as: file_off = pc - map_start + map_pgoff.
 * Returns 0 on success, -1 if no segment covers the offset. */
int sprof_symmap_file_offset_to_vaddr(const sprof_symmap *m, uint64_t file_off, uint64_t *vaddr);

/* Frames at link-time address `addr`, innermost first: the inlined chain,
 * then the containing function. Writes at most `max` frames to out and
 * returns how many there are at that address (may exceed max); 0 when no
 * function covers addr. O(log n), no allocation. */
size_t sprof_symmap_lookup(const sprof_symmap *m, uint64_t addr, sprof_frame *out, size_t max);

/* CFI row covering addr; returns 0 and fills row, or -1 if none. */
int sprof_symmap_cfi_lookup(const sprof_symmap *m, uint64_t addr, sprof_cfi_row *row);

/* Iteration for --dump and tests. */
size_t sprof_symmap_function_count(const sprof_symmap *m);
/* The i-th function (sorted by address) as a frame (not inlined, line = def_line). */
void sprof_symmap_function(const sprof_symmap *m, size_t i, sprof_frame *out);
size_t sprof_symmap_cfi_count(const sprof_symmap *m);
void sprof_symmap_cfi_row_at(const sprof_symmap *m, size_t i, sprof_cfi_row *row);
size_t sprof_symmap_line_count(const sprof_symmap *m);
/* i-th line-table row: address, file, line (rows sorted by address). */
void sprof_symmap_line_at(const sprof_symmap *m, size_t i, uint64_t *addr, const char **file, uint32_t *line);

/* Added by the symmap library: inline trees and flat intervals, for --dump. */
#define SPROF_SYMMAP_NO_PARENT ((size_t)-1)
size_t sprof_symmap_inline_count(const sprof_symmap *m);
/* i-th inline node (parents precede children). out: names, kind, cost, flags
 * (INLINED), file/def_line of its definition, line = call_line, func_lo/hi of
 * its function. parent: node index or SPROF_SYMMAP_NO_PARENT; func_index:
 * the function it is inlined in; call_file/call_line: where its caller
 * called it. Any out-pointer may be NULL. */
void sprof_symmap_inline_at(const sprof_symmap *m, size_t i, sprof_frame *out, size_t *parent,
                            size_t *func_index, const char **call_file, uint32_t *call_line);
/* Flat address intervals, each naming the innermost inline node there. */
size_t sprof_symmap_interval_count(const sprof_symmap *m);
void sprof_symmap_interval_at(const sprof_symmap *m, size_t i, uint64_t *lo, uint64_t *hi, size_t *node);

#ifdef __cplusplus
}
#endif
#endif
