/* Calls each of lazybind_callee.c's functions once, through the PLT, linked
 * with -z lazy: every call binds its symbol first, in ld.so's
 * _dl_runtime_resolve (the stack realigned below its xsave area, its CFA
 * kept in rbx) and _dl_fixup. Loaded and unloaded again and again by
 * lazybind_main.c, so each round binds them all again. */
#include "lazybind_funcs.h"

#define DECLARE(n) int lazy_f##n(int x);
LAZY_EACH(DECLARE)

int lazy_call_all(int x);
int lazy_call_all(int x)
{
#define CALL(n) x = lazy_f##n(x);
    LAZY_EACH(CALL)
    return x;
}
