/* Well-known function names that shape a stack (see frame_roles.h). */
#include "frame_roles.h"

#include <string.h>

/* Length of the name without a clone suffix ("foo.isra.0" -> 3). */
static size_t base_len(const char *name)
{
    const char *dot = strchr(name, '.');
    return dot && dot != name ? (size_t)(dot - name) : strlen(name);
}

static int base_is(const char *name, const char *want)
{
    size_t n = base_len(name);
    return strlen(want) == n && memcmp(name, want, n) == 0;
}

static int base_in(const char *name, const char *const *set)
{
    for (; *set; set++)
        if (base_is(name, *set))
            return 1;
    return 0;
}

int sprof_is_gc_root_helper(const char *c_name)
{
    static const char *const exact[] = { "sp_gc_cleanup", "_sp_gc_cleanup", NULL };
    return base_in(c_name, exact) || strncmp(c_name, "_sp_gc_root_", 12) == 0 ||
           strncmp(c_name, "sp_gc_root_", 11) == 0;
}

int sprof_is_fiber_base(const char *c_name)
{
    static const char *const set[] = { "__start_context", "sp_fiber_trampoline", NULL };
    return base_in(c_name, set);
}

int sprof_is_main(const char *c_name)
{
    return base_is(c_name, "main");
}

int sprof_is_process_start(const char *c_name)
{
    static const char *const set[] = {
        "_start", "__libc_start_main", "__libc_start_main_impl", "__libc_start_call_main",
        "_dl_start_user", /* ld.so's start code: it runs the constructors (_dl_init) */
        NULL,
    };
    return base_in(c_name, set);
}

int sprof_is_called_by_libc_start(const char *c_name)
{
    static const char *const set[] = {
        "exit", "__run_exit_handlers", "_exit", "_init", "_fini", "__libc_csu_init",
        "call_init", "_dl_init", "_dl_start", "_dl_start_user", "_dl_start_final",
        "__libc_early_init", "__libc_init_first", "_dl_fini", "__libc_start_call_main", NULL,
    };
    return base_in(c_name, set);
}

int sprof_is_thread_start(const char *c_name)
{
    static const char *const set[] = {
        "start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal", NULL,
    };
    return base_in(c_name, set);
}

static int is_runtime_module(const char *module)
{
    const char *slash = strrchr(module, '/');
    const char *base = slash ? slash + 1 : module;
    return strncmp(base, "libsprof", 8) == 0;
}

int sprof_is_runtime_code(const char *module, const char *file)
{
    return is_runtime_module(module) || strstr(file, "/runtime-stub/src/") != NULL;
}

int sprof_is_runtime_thread_wrapper(const char *c_name, const char *module, const char *file)
{
    /* any frame of libsprof.so right inside start_thread is the wrapper,
     * named or not (another build of the library gives libsprof.so+0x...) */
    if (is_runtime_module(module))
        return 1;
    /* linked in from libsprof_rt.a: the static `trampoline` of interpose.c */
    size_t flen = strlen(file);
    return (base_is(c_name, "trampoline") || base_is(c_name, "sprof_thread_trampoline")) &&
           flen >= 11 && strcmp(file + flen - 11, "interpose.c") == 0;
}
