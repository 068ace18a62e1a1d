/* Printable names of the enums stored in symmaps. */
#include "sprof/symmap.h"

const char *sprof_kind_name(enum sprof_kind k)
{
    static const char *const names[SPROF_KIND_COUNT] = {
        "toplevel", "imeth", "cmeth", "block", "runtime", "native",
    };
    return (unsigned)k < SPROF_KIND_COUNT ? names[k] : "?";
}

const char *sprof_cost_name(enum sprof_cost c)
{
    static const char *const names[SPROF_COST_COUNT] = { "user", "runtime", "gc", "native", "kernel" };
    return (unsigned)c < SPROF_COST_COUNT ? names[c] : "?";
}
