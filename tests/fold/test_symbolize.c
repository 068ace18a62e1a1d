/* Unit tests of the symbolizer and stack shaping with a symmap written via
 * the writer API: an inline chain expands to separate frames, return
 * addresses are looked up at pc - 1, GC-root helpers are elided between
 * frames, --no-inline, fiber rooting, unresolved frames named module+0xoff. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address_space.h"
#include "sprof/symmap_writer.h"
#include "stack_shape.h"
#include "symbolize.h"
#include "fixture_symmap.h"
#include "fold_check.h"

#define LOAD 0x555555554000ull /* runtime address of file offset 0 */

static const char *fname(const sprof_profile *p, uint32_t i)
{
    return p->frames[i].name;
}

int main(void)
{
    uint8_t *bytes;
    sprof_symmap *sm = fixture_symmap(&bytes);
    sprof_profile p;
    sprof_profile_init(&p);
    sprof_module_cache mc = { 0 };
    uint8_t id[4] = { 1, 2, 3, 4 };
    sprof_module *mod = sprof_module_get(&mc, "/nonexistent/app", id, 4, 1);
    sprof_map_entry me = { LOAD + 0x1000, LOAD + 0x11000, 0x1000, 0, mod };
    sprof_symbolizer *s = sprof_symbolizer_new(&p, sm, 0);
    const uint32_t *fr;

    /* leaf inside the inlined Baz#qux: two frames, innermost first */
    uint32_t n = sprof_symbolize(s, &me, LOAD + 0x1115, 0, &fr);
    CHECK(n == 2, "inline leaf: %u frames", n);
    if (n == 2) {
        CHECK(strcmp(fname(&p, fr[0]), "Baz#qux") == 0, "inline leaf[0] = %s", fname(&p, fr[0]));
        CHECK(strcmp(fname(&p, fr[1]), "Foo#bar") == 0, "inline leaf[1] = %s", fname(&p, fr[1]));
        CHECK(p.frames[fr[1]].line == 12, "caller line is the call site: %u", p.frames[fr[1]].line);
        CHECK(p.frames[fr[0]].flags & SPROF_FRAME_INLINED, "inlined frame flagged");
        CHECK(p.frames[fr[0]].line == 3, "inline leaf line %u", p.frames[fr[0]].line);
    }

    /* return address right after the inlined call: looked up at pc - 1 */
    n = sprof_symbolize(s, &me, LOAD + 0x1130, 1, &fr);
    CHECK(n == 2 && strcmp(fname(&p, fr[0]), "Baz#qux") == 0,
          "return address at pc-1: %u frames, first %s", n, n ? fname(&p, fr[0]) : "-");
    /* the same address as a leaf is the GC cleanup code */
    n = sprof_symbolize(s, &me, LOAD + 0x1130, 0, &fr);
    CHECK(n == 2 && strcmp(p.frames[fr[0]].c_name, "sp_gc_cleanup") == 0,
          "leaf in cleanup: %u frames, first %s", n, n ? p.frames[fr[0]].c_name : "-");
    uint32_t gc_leaf = n ? fr[0] : 0;

    /* a stack with a GC helper between two frames: the helper is dropped */
    {
        uint32_t st[8], k = 0;
        n = sprof_symbolize(s, &me, LOAD + 0x1115, 0, &fr);
        for (uint32_t i = 0; i < n; i++)
            st[k++] = fr[i];
        st[k++] = gc_leaf; /* as if a return address had been looked up naively */
        n = sprof_symbolize(s, &me, LOAD + 0x1310, 1, &fr);
        st[k++] = fr[0];
        int complete;
        k = sprof_shape_stack(&p, st, NULL, k, &complete);
        CHECK(k == 3 && complete, "gc helper elided: %u frames, complete %d", k, complete);
        for (uint32_t i = 0; i < k; i++)
            CHECK(strcmp(p.frames[st[i]].c_name, "sp_gc_cleanup") != 0, "gc helper at %u", i);
        /* but kept as the leaf */
        uint32_t st2[2] = { gc_leaf, st[k - 1] };
        k = sprof_shape_stack(&p, st2, NULL, 2, &complete);
        CHECK(k == 2 && st2[0] == gc_leaf, "gc helper kept as leaf");
    }

    /* fiber: body <- trampoline <- __start_context <- stale main */
    {
        uint32_t st[8], k = 0;
        sprof_symbolize(s, &me, LOAD + 0x1410, 0, &fr);
        st[k++] = fr[0];
        sprof_symbolize(s, &me, LOAD + 0x1490, 1, &fr);
        st[k++] = fr[0];
        sprof_symbolize(s, &me, LOAD + 0x14d0, 1, &fr);
        st[k++] = fr[0];
        sprof_symbolize(s, &me, LOAD + 0x1310, 1, &fr);
        st[k++] = fr[0];
        int complete;
        k = sprof_shape_stack(&p, st, NULL, k, &complete);
        CHECK(k == 2 && complete, "fiber: %u frames", k);
        if (k == 2) {
            CHECK(strcmp(fname(&p, st[0]), "block in Foo#bar") == 0, "fiber leaf %s", fname(&p, st[0]));
            CHECK(strcmp(fname(&p, st[1]), "[Fiber]") == 0, "fiber root %s", fname(&p, st[1]));
        }
    }

    /* a "return address" at a function's first byte, pc-1 in no function:
     * makecontext's __start_context is named by pc itself; any other entry
     * (main's address left on the stack) is a stale word, not a caller */
    n = sprof_symbolize(s, &me, LOAD + 0x14c0, 1, &fr);
    CHECK(n == 1 && strcmp(fname(&p, fr[0]), "__start_context") == 0,
          "return address at __start_context's entry: %s", n ? fname(&p, fr[0]) : "-");
    n = sprof_symbolize(s, &me, LOAD + 0x1300, 1, &fr);
    CHECK(n == 1 && strcmp(fname(&p, fr[0]), "main") != 0 && (p.frames[fr[0]].flags & SPROF_PFRAME_UNRESOLVED),
          "return address at main's entry: %s", n ? fname(&p, fr[0]) : "-");

    /* the runtime's pthread_create wrapper is dropped with start_thread */
    {
        sprof_pframe tw = { .name = "trampoline", .c_name = "trampoline", .file = "",
                            .module = "/x/lib/libsprof.so" };
        sprof_pframe st = { .name = "start_thread", .c_name = "start_thread", .file = "",
                            .module = "/lib/libc.so.6" };
        uint32_t st3[4], k = 0;
        sprof_symbolize(s, &me, LOAD + 0x1115, 0, &fr);
        st3[k++] = fr[0];
        st3[k++] = fr[1];
        st3[k++] = sprof_profile_intern_frame(&p, &tw);
        st3[k++] = sprof_profile_intern_frame(&p, &st);
        int complete;
        k = sprof_shape_stack(&p, st3, NULL, k, &complete);
        CHECK(k == 2 && complete && strcmp(fname(&p, st3[1]), "Foo#bar") == 0,
              "thread root: %u frames, root %s", k, k ? fname(&p, st3[k - 1]) : "-");
        /* a stack that reaches libc's process start without main is incomplete */
        sprof_pframe ls = { .name = "__libc_start_call_main", .c_name = "__libc_start_call_main",
                            .file = "", .module = "/lib/libc.so.6" };
        uint32_t st4[3] = { st3[0], st3[1], sprof_profile_intern_frame(&p, &ls) };
        k = sprof_shape_stack(&p, st4, NULL, 3, &complete);
        CHECK(k == 3 && !complete, "lost main: %u frames, complete %d", k, complete);
        /* ... unless the step into it was exact: main tail-called the frame
         * inside (CPython's Py_BytesMain), which roots the stack */
        uint32_t st6[3] = { st4[0], st4[1], st4[2] };
        const uint8_t cfi_steps[3] = { 1, 1, 1 }, chain_step[3] = { 1, 1, 0 };
        k = sprof_shape_stack(&p, st6, chain_step, 3, &complete);
        CHECK(k == 3 && !complete, "chain step into libc start: %u frames, complete %d", k, complete);
        k = sprof_shape_stack(&p, st6, cfi_steps, 3, &complete);
        CHECK(k == 2 && complete && st6[1] == st4[1], "tail-called main: %u frames, complete %d", k, complete);
        /* a stripped program: its main and its _start have no names */
        sprof_pframe um = { .name = "app+0x1f0b3", .c_name = "app+0x1f0b3", .file = "", .module = "/x/app",
                            .flags = SPROF_PFRAME_UNRESOLVED };
        sprof_pframe us = { .name = "app+0x1f121", .c_name = "app+0x1f121", .file = "", .module = "/x/app",
                            .flags = SPROF_PFRAME_UNRESOLVED };
        uint32_t st7[4] = { st4[0], sprof_profile_intern_frame(&p, &um), st4[2], sprof_profile_intern_frame(&p, &us) };
        const uint8_t exact4[4] = { 1, 1, 1, 1 };
        k = sprof_shape_stack(&p, st7, exact4, 4, &complete);
        CHECK(k == 2 && complete && strcmp(fname(&p, st7[1]), "app+0x1f0b3") == 0,
              "stripped program: %u frames, complete %d", k, complete);
        /* a constructor run after the runtime's: ld.so's start code runs it */
        sprof_pframe su = { .name = "_dl_start_user", .c_name = "_dl_start_user", .file = "",
                            .module = "/lib64/ld-linux-x86-64.so.2" };
        sprof_pframe di = { .name = "_dl_init", .c_name = "_dl_init", .file = "",
                            .module = "/lib64/ld-linux-x86-64.so.2" };
        uint32_t st8[4] = { st3[0], st3[1], sprof_profile_intern_frame(&p, &di), sprof_profile_intern_frame(&p, &su) };
        k = sprof_shape_stack(&p, st8, NULL, 4, &complete);
        CHECK(k == 4 && complete, "constructor under ld.so's start: %u frames, complete %d", k, complete);
        /* clone3 at the leaf (a thread starting threads: pthread_create's
         * system call) does not root a stack whose own root was lost */
        sprof_pframe c3 = { .name = "clone3", .c_name = "clone3", .file = "", .module = "/lib/libc.so.6" };
        sprof_pframe ci = { .name = "__clone_internal", .c_name = "__clone_internal", .file = "",
                            .module = "/lib/libc.so.6" };
        sprof_pframe pc = { .name = "pthread_create", .c_name = "pthread_create", .file = "",
                            .module = "/lib/libc.so.6" };
        uint32_t st5[5] = { sprof_profile_intern_frame(&p, &c3), sprof_profile_intern_frame(&p, &ci),
                            sprof_profile_intern_frame(&p, &pc), st3[0], st3[1] };
        k = sprof_shape_stack(&p, st5, NULL, 5, &complete);
        CHECK(k == 5 && !complete, "clone3 at the leaf, root lost: %u frames, complete %d", k, complete);
    }

    /* no symbol and no readable ELF file: module+0xoffset, counted */
    uint64_t before = sprof_symbolizer_unresolved(s);
    n = sprof_symbolize(s, &me, LOAD + 0x1600, 0, &fr);
    CHECK(n == 1 && strcmp(fname(&p, fr[0]), "app+0x1600") == 0, "unresolved: %s",
          n ? fname(&p, fr[0]) : "-");
    CHECK(n == 1 && (p.frames[fr[0]].flags & SPROF_PFRAME_UNRESOLVED), "unresolved flag");
    /* symbolized once: asking again does not count again */
    sprof_symbolize(s, &me, LOAD + 0x1600, 0, &fr);
    CHECK(sprof_symbolizer_unresolved(s) == before + 1, "unresolved counted once");
    /* no mapping at all */
    n = sprof_symbolize(s, NULL, 0x1234, 0, &fr);
    CHECK(n == 1 && strcmp(fname(&p, fr[0]), "0x1234") == 0, "unmapped: %s", n ? fname(&p, fr[0]) : "-");

    /* --no-inline: only the real function */
    sprof_symbolizer *s2 = sprof_symbolizer_new(&p, sm, 1);
    n = sprof_symbolize(s2, &me, LOAD + 0x1115, 0, &fr);
    CHECK(n == 1 && strcmp(fname(&p, fr[0]), "Foo#bar") == 0, "no-inline: %u frames", n);
    sprof_symbolizer_free(s2);

    sprof_symbolizer_free(s);
    sprof_module_cache_free(&mc);
    sprof_profile_free(&p);
    sprof_symmap_close(sm);
    free(bytes);
    return check_report("test_symbolize");
}
