/* _exit/_Exit interposition, the same in both link forms (see interpose.c).
 * exit() finishes the trace from the runtime's destructor; _exit skips
 * destructors, so a program that ends with it (a shell, a forked child
 * that must not run atexit handlers) would leave its trace without END.
 * _exit is async-signal-safe and may be called from a signal handler:
 * sprof_before_exit neither joins threads nor blocks without bound. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_internal.h"

typedef void (*exit_fn)(int);

/* Resolved here, not at the call: dlsym is not async-signal-safe. */
static exit_fn real_exit;

/* priority 101: before the runtime's start, in any link order */
__attribute__((constructor(101))) static void resolve_exit(void) { real_exit = (exit_fn)dlsym(RTLD_NEXT, "_exit"); }

__attribute__((noreturn)) static void finish_and_exit(int status)
{
    sprof_before_exit();
    if (real_exit) real_exit(status);
    for (;;) syscall(SYS_exit_group, status); /* what _exit does, should dlsym have failed */
}

SPROF_EXPORT void _exit(int status) { finish_and_exit(status); }

SPROF_EXPORT void _Exit(int status) { finish_and_exit(status); }
