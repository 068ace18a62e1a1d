/* The library whose 2000 functions lazybind_caller.c calls through its PLT. */
#include "lazybind_funcs.h"

#define DEFINE(n) int lazy_f##n(int x);                                                                  \
    int lazy_f##n(int x) { return x * 3 + n; }
LAZY_EACH(DEFINE)
