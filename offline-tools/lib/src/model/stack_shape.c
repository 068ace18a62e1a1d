/* Shape an unwound, symbolized stack (see stack_shape.h). */
#include "stack_shape.h"

#include <stdlib.h>
#include <string.h>

#include "frame_roles.h"
#include "profile_internal.h"

enum {
    ROLE_KNOWN = 1u << 0,
    ROLE_FIBER_BASE = 1u << 1,
    ROLE_MAIN = 1u << 2,
    ROLE_THREAD_START = 1u << 3,
    ROLE_PROCESS_START = 1u << 4,
    ROLE_CALLED_BY_START = 1u << 5,
    ROLE_GC_HELPER = 1u << 6,
    ROLE_WRAPPER = 1u << 7,
};

/* A frame's roles, from its names once, then from the per-frame cache
 * (frames never change once interned). */
static unsigned roles(sprof_profile *p, uint32_t f)
{
    struct sprof_profile_internal *in = p->internal;
    if (f >= in->roles_cap) {
        size_t cap = in->roles_cap ? in->roles_cap : 256;
        while (cap <= f)
            cap *= 2;
        uint8_t *v = realloc(in->roles, cap);
        if (!v)
            return 0; /* out of memory: computed each time below */
        memset(v + in->roles_cap, 0, cap - in->roles_cap);
        in->roles = v;
        in->roles_cap = cap;
    }
    if (f < in->roles_cap && in->roles[f])
        return in->roles[f];
    const sprof_pframe *fr = &p->frames[f];
    const char *c = fr->c_name;
    unsigned r = ROLE_KNOWN;
    if (sprof_is_fiber_base(c))
        r |= ROLE_FIBER_BASE;
    if (sprof_is_main(c))
        r |= ROLE_MAIN;
    if (sprof_is_thread_start(c))
        r |= ROLE_THREAD_START;
    if (sprof_is_process_start(c))
        r |= ROLE_PROCESS_START;
    if (sprof_is_called_by_libc_start(c))
        r |= ROLE_CALLED_BY_START;
    if (sprof_is_gc_root_helper(c))
        r |= ROLE_GC_HELPER;
    if (sprof_is_runtime_thread_wrapper(c, fr->module, fr->file))
        r |= ROLE_WRAPPER;
    if (f < in->roles_cap)
        in->roles[f] = (uint8_t)r;
    return r;
}

uint32_t sprof_synthetic_frame(sprof_profile *p, const char *name, uint8_t kind)
{
    sprof_pframe f = { .name = name, .c_name = "", .file = "", .module = "", .kind = kind,
                       .cost = SPROF_COST_USER, .flags = SPROF_PFRAME_SYNTHETIC };
    return sprof_profile_intern_frame(p, &f);
}

uint32_t sprof_shape_stack(sprof_profile *p, uint32_t *stack, const uint8_t *linked, uint32_t n,
                           int *complete)
{
    *complete = 0;
    /* A fiber: everything from the innermost fiber base outward is the
     * stale chain of whoever created or resumed it. */
    for (uint32_t i = 1; i < n; i++) {
        if (roles(p, stack[i]) & ROLE_FIBER_BASE) {
            stack[i] = sprof_synthetic_frame(p, "[Fiber]", SPROF_KIND_BLOCK);
            n = i + 1;
            *complete = 1;
            break;
        }
    }
    if (!*complete) {
        /* Root at the outermost main; drop libc's start frames outside it
         * (or outside a thread's start routine). */
        for (uint32_t i = n; i-- > 0;) {
            if (roles(p, stack[i]) & ROLE_MAIN) {
                n = i + 1;
                *complete = 1;
                break;
            }
        }
    }
    if (!*complete) {
        /* A thread: drop start_thread/clone3 outside its start routine.
         * Only the outermost frames: a thread that starts threads has
         * clone3 at its leaf too, under pthread_create, and a stack that
         * lost its root is not rooted by that. */
        uint32_t j = n;
        while (j > 1 && roles(p, stack[j - 1]) & ROLE_THREAD_START)
            j--;
        if (j < n) {
            if (j > 1 && (roles(p, stack[j - 1]) & ROLE_WRAPPER))
                j--; /* the profiler's own wrapper is not the program's */
            n = j;
            *complete = 1;
        }
    }
    if (!*complete && n > 0) {
        /* Reaching libc's process start without main: complete when the
         * frame inside it is what libc calls besides main (exit handlers,
         * constructors) or the sample is in the start code itself. Also
         * when the step into the start code was exact (CFI): the frame
         * inside is the one libc's call to main returns to, so main
         * tail-called it (CPython's main jumps to Py_BytesMain, node's to
         * node::Start), rooted there as at main. Else main's frame may have
         * been lost on the way (the frame-pointer chain skips a frameless
         * function's caller): keep what there is, marked incomplete. */
        /* outer: the innermost start frame among the outermost ones; a
         * stripped program's own start code (_start) has no name, and
         * neither has its main when the step into libc was exact */
        uint32_t outer = n;
        for (uint32_t i = n; i > 0; i--) {
            unsigned r = roles(p, stack[i - 1]);
            if (r & ROLE_PROCESS_START)
                outer = i - 1;
            else if (!(p->frames[stack[i - 1]].flags & SPROF_PFRAME_UNRESOLVED))
                break;
        }
        if (outer < n) {
            *complete = outer == 0 || (roles(p, stack[outer - 1]) & ROLE_CALLED_BY_START) != 0;
            if (!*complete && linked && linked[outer]) {
                n = outer;
                *complete = 1;
            }
        }
    }
    /* GC-root bookkeeping helpers are inlined around calls; outside the
     * leaf they are attribution noise between Ruby frames. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || !(roles(p, stack[i]) & ROLE_GC_HELPER))
            stack[k++] = stack[i];
    return k;
}

