/* Shape an unwound, symbolized stack (see stack_shape.h). */
#include "stack_shape.h"

#include "frame_roles.h"

uint32_t sprof_synthetic_frame(sprof_profile *p, const char *name, uint8_t kind)
{
    sprof_pframe f = { .name = name, .c_name = "", .file = "", .module = "", .kind = kind,
                       .cost = SPROF_COST_USER, .flags = SPROF_PFRAME_SYNTHETIC };
    return sprof_profile_intern_frame(p, &f);
}

uint32_t sprof_shape_stack(sprof_profile *p, uint32_t *stack, uint32_t n, int *complete)
{
    *complete = 0;
    /* A fiber: everything from the innermost fiber base outward is the
     * stale chain of whoever created or resumed it. */
    for (uint32_t i = 1; i < n; i++) {
        if (sprof_is_fiber_base(p->frames[stack[i]].c_name)) {
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
            if (sprof_is_main(p->frames[stack[i]].c_name)) {
                n = i + 1;
                *complete = 1;
                break;
            }
        }
    }
    if (!*complete) {
        /* A thread: drop start_thread/clone3 outside its start routine. */
        for (uint32_t i = n; i-- > 1;) {
            if (sprof_is_thread_start(p->frames[stack[i]].c_name)) {
                uint32_t j = i;
                while (j > 1 && sprof_is_thread_start(p->frames[stack[j - 1]].c_name))
                    j--;
                const sprof_pframe *w = &p->frames[stack[j - 1]];
                if (j > 1 && sprof_is_runtime_thread_wrapper(w->c_name, w->module, w->file))
                    j--; /* the profiler's own wrapper is not the program's */
                n = j;
                *complete = 1;
                break;
            }
        }
    }
    if (!*complete && n > 0) {
        /* Reaching libc's process start without main: complete when the
         * frame inside it is what libc calls besides main (exit handlers,
         * constructors) or the sample is in the start code itself; else
         * main's frame was lost on the way (a frameless function hid its
         * caller): keep what there is, marked incomplete. */
        uint32_t outer = n;
        while (outer > 0 && sprof_is_process_start(p->frames[stack[outer - 1]].c_name))
            outer--;
        if (outer < n)
            *complete = outer == 0 || sprof_is_called_by_libc_start(p->frames[stack[outer - 1]].c_name);
    }
    /* GC-root bookkeeping helpers are inlined around calls; outside the
     * leaf they are attribution noise between Ruby frames. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || !sprof_is_gc_root_helper(p->frames[stack[i]].c_name))
            stack[k++] = stack[i];
    return k;
}

