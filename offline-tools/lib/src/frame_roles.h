/* Well-known function names that shape a stack: roots (main, thread and
 * process start), fiber bases, GC-root bookkeeping helpers. Compared on
 * the C name without a compiler clone suffix (.isra.0, .cold, ...).
 * Internal to offline-tools/lib. */
#ifndef SPROF_FRAME_ROLES_H
#define SPROF_FRAME_ROLES_H

/* sp_gc_cleanup, _sp_gc_root_push, _sp_gc_root_pop, ...: inlined around
 * calls; never kept between two frames. */
int sprof_is_gc_root_helper(const char *c_name);
/* __start_context, sp_fiber_trampoline: the base of a ucontext fiber stack. */
int sprof_is_fiber_base(const char *c_name);
/* main */
int sprof_is_main(const char *c_name);
/* _start, __libc_start_main, __libc_start_call_main: libc's frames outside
 * main. Reaching them WITHOUT main means main's frame was lost. */
int sprof_is_process_start(const char *c_name);
/* What libc's start code calls other than main: exit and its handlers,
 * constructors, the dynamic loader's startup. */
int sprof_is_called_by_libc_start(const char *c_name);
/* start_thread, clone, clone3: libc's frames outside a thread's start routine. */
int sprof_is_thread_start(const char *c_name);
/* A frame of sprof's own runtime: module libsprof*.so (preloaded), or a
 * file of runtime-stub/src/ (libsprof_rt.a linked in). */
int sprof_is_runtime_code(const char *module, const char *file);
/* The sprof runtime's own pthread_create wrapper (runtime-stub/src/host/interpose.c,
 * `trampoline` in libsprof.so or linked in from libsprof_rt.a), which sits
 * between start_thread and the program's start routine. */
int sprof_is_runtime_thread_wrapper(const char *c_name, const char *module, const char *file);

#endif
