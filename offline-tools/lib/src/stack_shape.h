/* Shape an unwound, symbolized stack before it joins the profile:
 *  - a fiber stack is rooted at a synthetic [Fiber] frame above the fiber
 *    body (the stale chain through __start_context/sp_fiber_trampoline
 *    back into whoever resumed it is dropped);
 *  - otherwise the stack is rooted at the outermost `main` (libc's _start,
 *    __libc_start_main, __libc_start_call_main outside it are dropped), or
 *    at a thread's start routine (start_thread, clone3 and the sprof
 *    runtime's pthread_create wrapper dropped);
 *  - a stack that reaches libc's process start without main, through a
 *    step that cannot have skipped a frame (main tail-called the function
 *    inside it: CPython's Py_BytesMain, node::Start), is rooted at that
 *    function;
 *  - a stack that reaches none keeps all its frames and is incomplete;
 *  - GC-root bookkeeping helpers (sp_gc_cleanup, _sp_gc_root_push/pop, ...)
 *    are dropped everywhere but the leaf.
 * Internal to offline-tools/lib. */
#ifndef SPROF_STACK_SHAPE_H
#define SPROF_STACK_SHAPE_H

#include <stdint.h>

#include "sprof/profile.h"

/* A synthetic frame ([Fiber], [thread NAME TID]) interned in p. */
uint32_t sprof_synthetic_frame(sprof_profile *p, const char *name, uint8_t kind);

/* stack: frame indices LEAF FIRST, n of them; shaped in place. linked
 * (NULL: none known) says per frame whether it was reached from the frame
 * inside it by a step that skips nothing (a CFI step; inline frames).
 * Returns the new count; *complete = 1 if the stack reaches main, a thread
 * start, a fiber base or, exactly, libc's process start (or the sample is
 * in libc's start code itself). */
uint32_t sprof_shape_stack(sprof_profile *p, uint32_t *stack, const uint8_t *linked, uint32_t n,
                           int *complete);

#endif
