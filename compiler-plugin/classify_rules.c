/* The classification table. Read top to bottom: the first pattern that
 * matches a function's base C name decides its kind and cost class.
 * Ruby methods found in Spinel's map never reach this table (they are
 * always kind imeth/cmeth/toplevel, cost user); blocks (_sp_proc_fn_N,
 * _fiber_body_N, functions inside a method's lines) are decided before it
 * too. A name no rule matches is `native` (or a demangled Ruby method when
 * there is no map at all). Extend by adding rows; keep gc above runtime. */
#include <fnmatch.h>
#include <stddef.h>

#include "classify.h"
#include "sprof/symmap.h"

#define GC SPROF_KIND_RUNTIME, SPROF_COST_GC
#define RT SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME
#define NAT SPROF_KIND_NATIVE, SPROF_COST_NATIVE

const sprof_classify_rule sprof_classify_rules[] = {
    /* ---- gc: the collector and the allocator ---- */
    { "sp_gc_*", GC, "collector entry points, sp_gc_alloc, sp_gc_cleanup" },
    { "_sp_gc_*", GC, "GC root bookkeeping (_sp_gc_root_push/pop)" },
    { "sp_str_alloc", GC, "string allocator" },
    { "sp_str_sweep", GC, "string sweep" },
    { "*_gc_scan", GC, "per-type mark scanners" },
    { "*_gc_mark*", GC, "mark helpers" },
    { "*_pool_*", GC, "allocation pools" },
    /* lower-case prefix only: sp_<Capital>... is a Ruby class's method */
    { "sp_[a-z]*_mark", GC, "mark helpers" },
    { "sp_[a-z]*_mark_*", GC, "mark helpers" },
    { "sp_[a-z]*_sweep", GC, "sweep helpers" },
    { "sp_[a-z]*_sweep_*", GC, "sweep helpers" },

    /* ---- runtime: Spinel's container, string, fiber and support helpers ---- */
    { "sp_String_*", RT, "string methods" },
    { "sp_str_*", RT, "string helpers" },
    { "sp_StrArray_*", RT, "string arrays" },
    { "sp_IntArray_*", RT, "integer arrays" },
    { "sp_FloatArray_*", RT, "float arrays" },
    { "sp_PtrArray_*", RT, "pointer arrays" },
    { "sp_PolyArray_*", RT, "polymorphic arrays" },
    { "sp_StrIntHash_*", RT, "String=>Integer hashes" },
    { "sp_StrStrHash_*", RT, "String=>String hashes" },
    { "sp_IntIntHash_*", RT, "Integer=>Integer hashes" },
    { "sp_fiber_*", RT, "fiber switching" },
    { "sp_Fiber_*", RT, "Fiber class support" },
    { "sp_Range_*", RT, "ranges" },
    { "sp_Proc_*", RT, "proc objects" },
    { "sp_box_*", RT, "boxing of polymorphic values" },
    { "sp_unbox_*", RT, "unboxing" },
    { "sp_poly_*", RT, "polymorphic dispatch" },
    { "sp_raise*", RT, "exceptions" },
    { "sp_exc_*", RT, "exceptions" },
    { "sp_int_*", RT, "integer helpers" },
    { "sp_float_*", RT, "float helpers" },
    { "sp_sym_*", RT, "symbols" },
    { "sp_io_*", RT, "I/O" },
    { "sp_puts*", RT, "Kernel#puts" },
    { "sp_print*", RT, "Kernel#print" },
    { "sp_format*", RT, "formatting" },
    { "sp_rt_*", RT, "runtime support" },
    { "sp_runtime_*", RT, "runtime support" },

    /* ---- native: program entry, libc and toolchain glue ---- */
    { "main", NAT, "C entry point" },
    { "_start", NAT, "process entry" },
    { "_init", NAT, "ELF init" },
    { "_fini", NAT, "ELF fini" },
    { "__libc_*", NAT, "libc" },
};
const unsigned sprof_classify_rule_count = sizeof sprof_classify_rules / sizeof *sprof_classify_rules;

const sprof_classify_rule *sprof_classify(const char *base_cname)
{
    for (unsigned i = 0; i < sprof_classify_rule_count; i++)
        if (fnmatch(sprof_classify_rules[i].pattern, base_cname, 0) == 0)
            return &sprof_classify_rules[i];
    return NULL;
}
