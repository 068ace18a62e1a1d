/* Symbolize each distinct (module, offset, is_return) once (see symbolize.h). */
#include "symbolize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "frame_roles.h"
#include "jit_map.h"

#define MAX_INLINE_DEPTH 64

typedef struct sym_key {
    uint64_t offset; /* file offset in the module, or the raw pc when unmapped */
    uint32_t module; /* module id + 1; 0 = unmapped */
    uint32_t is_return;
} sym_key;

typedef struct sym_entry {
    UT_hash_handle hh;
    sym_key key;
    uint32_t n;
    uint32_t frames[]; /* innermost first */
} sym_entry;

struct sprof_symbolizer {
    sprof_profile *p;
    const sprof_symmap *symmap;
    int no_inline;
    sym_entry *table;
    uint64_t unresolved;
};

sprof_symbolizer *sprof_symbolizer_new(sprof_profile *p, const sprof_symmap *symmap, int no_inline)
{
    sprof_symbolizer *s = calloc(1, sizeof *s);
    if (s) {
        s->p = p;
        s->symmap = symmap;
        s->no_inline = no_inline;
    }
    return s;
}

void sprof_symbolizer_free(sprof_symbolizer *s)
{
    if (!s)
        return;
    sym_entry *e, *tmp;
    HASH_ITER(hh, s->table, e, tmp) {
        HASH_DEL(s->table, e);
        free(e);
    }
    free(s);
}

uint64_t sprof_symbolizer_unresolved(const sprof_symbolizer *s)
{
    return s->unresolved;
}

int sprof_link_address(const sprof_symmap *symmap, const sprof_map_entry *me, uint64_t pc,
                       uint64_t *vaddr)
{
    uint64_t off = pc - me->start + me->file_offset;
    if (me->mod->is_main && symmap)
        return sprof_symmap_file_offset_to_vaddr(symmap, off, vaddr);
    sprof_elf_module *elf = sprof_module_elf(me->mod);
    return elf ? sprof_elf_offset_to_vaddr(elf, off, vaddr) : -1;
}

/* Functions whose first byte is found where a return address belongs:
 * makecontext leaves __start_context there for a fiber's entry function to
 * return to, and a signal frame's return address is __restore_rt. Any other
 * function's entry in that place is a stale word a stack scan picked up
 * (a pointer to main kept by __libc_start_call_main, say), not a caller. */
static int is_entry_trampoline(const char *name)
{
    return strcmp(name, "__start_context") == 0 || strcmp(name, "__restore_rt") == 0;
}

/* sprof's own code in the program's stack (frame_roles.h). Mid-stack
 * these are its interposers (pthread_create, exit, close...) around the
 * libc call of the same name: "pthread_create [sprof];pthread_create" says
 * whose each is, where two bare pthread_create read as a recursion. */
static const char *runtime_name(const char *name, const char *module, const char *file, char *buf,
                                size_t len)
{
    if (!sprof_is_runtime_code(module, file))
        return name;
    snprintf(buf, len, "%s [sprof]", name);
    return buf;
}

/* Code in anonymous executable memory: a JIT's. Named from the trace's
 * perf map when its JIT wrote one; else one frame for all of it, said to
 * be unnamed (a name per address, "+0x2d40", split one function into as
 * many "methods" as it had samples: 346 of them for a node one-liner). */
static uint32_t anon_code(sprof_symbolizer *s, const sprof_module *mod, uint64_t pc, int is_return, uint32_t *out)
{
    const char *name = mod->jit ? sprof_jit_map_find(mod->jit, pc - (uint64_t)(is_return ? 1 : 0)) : NULL;
    sprof_pframe f = { .name = name ? name : "[anonymous code]", .c_name = name ? name : "", .file = "",
                       .module = mod->path, .kind = SPROF_KIND_NATIVE, .cost = SPROF_COST_NATIVE,
                       .flags = name ? SPROF_FRAME_NO_DEBUG : SPROF_PFRAME_UNRESOLVED | SPROF_PFRAME_ANON_CODE };
    if (!name) {
        f.module = "";
        s->unresolved++;
    }
    out[0] = sprof_profile_intern_frame(s->p, &f);
    return 1;
}

static uint32_t resolve(sprof_symbolizer *s, const sprof_map_entry *me, uint64_t pc, int is_return,
                        uint32_t *out)
{
    sprof_profile *p = s->p;
    char name[512];
    if (!me) {
        snprintf(name, sizeof name, "0x%" PRIx64, pc);
        sprof_pframe f = { .name = name, .c_name = name, .file = "", .module = "",
                           .kind = SPROF_KIND_NATIVE, .cost = SPROF_COST_NATIVE,
                           .flags = SPROF_PFRAME_UNRESOLVED, .address = pc };
        s->unresolved++;
        out[0] = sprof_profile_intern_frame(p, &f);
        return 1;
    }
    sprof_module *mod = me->mod;
    if (!mod->path[0] || mod->jit)
        return anon_code(s, mod, pc, is_return, out);
    uint64_t off = pc - me->start + me->file_offset;
    uint64_t vaddr;
    int have_vaddr = sprof_link_address(s->symmap, me, pc, &vaddr) == 0;
    uint64_t look = have_vaddr ? vaddr - (uint64_t)(is_return ? 1 : 0) : 0;

    if (have_vaddr && mod->is_main && s->symmap) {
        sprof_frame fr[MAX_INLINE_DEPTH];
        size_t k = sprof_symmap_lookup(s->symmap, look, fr, MAX_INLINE_DEPTH);
        /* a "return address" at a function's first byte was not pushed by
         * a call: only the entry trampolines are reached that way */
        if (k == 0 && is_return) {
            k = sprof_symmap_lookup(s->symmap, vaddr, fr, MAX_INLINE_DEPTH);
            if (k > 0 && !is_entry_trampoline(fr[k - 1].c_name))
                k = 0;
        }
        if (k > MAX_INLINE_DEPTH)
            k = MAX_INLINE_DEPTH;
        uint32_t n = 0;
        for (size_t i = 0; i < k; i++) {
            int inlined = (fr[i].flags & SPROF_FRAME_INLINED) != 0;
            if (s->no_inline && inlined)
                continue;
            sprof_pframe f = {
                .name = runtime_name(fr[i].ruby_name[0] ? fr[i].ruby_name : fr[i].c_name, mod->path,
                                     fr[i].file, name, sizeof name),
                .c_name = fr[i].c_name, .file = fr[i].file, .module = mod->path,
                .line = fr[i].line, .kind = fr[i].kind, .cost = fr[i].cost,
                .flags = fr[i].flags, .address = vaddr, .def_line = fr[i].def_line,
            };
            out[n++] = sprof_profile_intern_frame(p, &f);
        }
        if (n > 0)
            return n;
    }
    sprof_elf_module *elf = sprof_module_elf(mod);
    uint64_t elf_vaddr;
    if (elf && sprof_elf_offset_to_vaddr(elf, off, &elf_vaddr) == 0) {
        const sprof_elf_symbol *sym = sprof_elf_symbol_at(elf, elf_vaddr - (uint64_t)(is_return ? 1 : 0));
        if (!sym && is_return) {
            sym = sprof_elf_symbol_at(elf, elf_vaddr);
            if (sym && !is_entry_trampoline(sym->name))
                sym = NULL;
        }
        if (sym) {
            sprof_pframe f = { .name = runtime_name(sym->name, mod->path, "", name, sizeof name),
                               .c_name = sym->name, .file = "",
                               .module = mod->path, .kind = SPROF_KIND_NATIVE,
                               .cost = SPROF_COST_NATIVE, .flags = SPROF_FRAME_NO_DEBUG,
                               .address = elf_vaddr };
            out[0] = sprof_profile_intern_frame(p, &f);
            return 1;
        }
    }
    /* Unknown: name it by module and file offset so it can be looked up later. */
    snprintf(name, sizeof name, "%s+0x%" PRIx64, mod->basename, off);
    sprof_pframe f = { .name = name, .c_name = name, .file = "", .module = mod->path,
                       .kind = SPROF_KIND_NATIVE, .cost = SPROF_COST_NATIVE,
                       .flags = SPROF_PFRAME_UNRESOLVED, .address = off };
    s->unresolved++;
    out[0] = sprof_profile_intern_frame(p, &f);
    return 1;
}

uint32_t sprof_symbolize(sprof_symbolizer *s, const sprof_map_entry *me, uint64_t pc, int is_return,
                         const uint32_t **frames)
{
    sym_key key;
    memset(&key, 0, sizeof key);
    key.module = me ? me->mod->id + 1 : 0;
    key.offset = me ? pc - me->start + me->file_offset : pc;
    key.is_return = is_return ? 1 : 0;
    sym_entry *e;
    HASH_FIND(hh, s->table, &key, sizeof key, e);
    if (!e) {
        uint32_t tmp[MAX_INLINE_DEPTH];
        uint32_t n = resolve(s, me, pc, is_return, tmp);
        e = malloc(sizeof *e + n * sizeof(uint32_t));
        if (!e)
            return 0;
        e->key = key;
        e->n = n;
        memcpy(e->frames, tmp, n * sizeof(uint32_t));
        HASH_ADD(hh, s->table, key, sizeof key, e);
    }
    *frames = e->frames;
    return e->n;
}
