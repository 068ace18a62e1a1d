/* Unit tests for the demangler, clone-suffix stripping, the quirk repair,
 * block detection and the classification table (compiler-plugin/). */
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "rb_scopes.h"
#include "ruby_names.h"
#include "sprof/symmap.h"

static int failures;

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                              \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fputc('\n', stderr);                                                              \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)

static const struct {
    const char *c, *ruby;
    int kind; /* -1: not demangled */
} demangle_cases[] = {
    { "sp_Shape_area", "Shape#area", SPROF_KIND_IMETH },
    { "sp_Vec2__plus", "Vec2#+", SPROF_KIND_IMETH },
    { "sp_Vec2__minus", "Vec2#-", SPROF_KIND_IMETH },
    { "sp_Vec2__mul", "Vec2#*", SPROF_KIND_IMETH },
    { "sp_Vec2__div", "Vec2#/", SPROF_KIND_IMETH },
    { "sp_Vec2__mod", "Vec2#%", SPROF_KIND_IMETH },
    { "sp_Vec2__uminus", "Vec2#-@", SPROF_KIND_IMETH },
    { "sp_Point__cmp", "Point#<=>", SPROF_KIND_IMETH },
    { "sp_Point__eq_eq", "Point#==", SPROF_KIND_IMETH },
    { "sp_Point__neq", "Point#!=", SPROF_KIND_IMETH },
    { "sp_Point__lt", "Point#<", SPROF_KIND_IMETH },
    { "sp_Point__le", "Point#<=", SPROF_KIND_IMETH },
    { "sp_Point__gt", "Point#>", SPROF_KIND_IMETH },
    { "sp_Point__ge", "Point#>=", SPROF_KIND_IMETH },
    { "sp_Buf__lshift", "Buf#<<", SPROF_KIND_IMETH },
    { "sp_Matrix__aref", "Matrix#[]", SPROF_KIND_IMETH },
    { "sp_Matrix__aset", "Matrix#[]=", SPROF_KIND_IMETH },
    { "sp_Matrix_cls__aref", "Matrix.[]", SPROF_KIND_CMETH },
    { "sp_Tep_Url_save_p", "Tep::Url#save?", SPROF_KIND_IMETH },
    { "sp_Tep_Url_save_bang", "Tep::Url#save!", SPROF_KIND_IMETH },
    { "sp_Tep_Url_name_eq", "Tep::Url#name=", SPROF_KIND_IMETH },
    { "sp_Geo_Box_cls_make", "Geo::Box.make", SPROF_KIND_CMETH },
    { "sp_Geo_cls_dist2", "Geo.dist2", SPROF_KIND_CMETH },
    { "sp_A_B_C_go", "A::B::C#go", SPROF_KIND_IMETH },
    { "sp_Sphere__implicit_852_intersect", "Sphere#intersect", SPROF_KIND_IMETH },
    { "sp_Sphere__implicit_852__plus", "Sphere#+", SPROF_KIND_IMETH },
    { "sp_Foo_while_kw", "Foo#while", SPROF_KIND_IMETH },
    { "sp_fib", "fib", SPROF_KIND_TOPLEVEL },
    { "sp_empty_p", "empty?", SPROF_KIND_TOPLEVEL },
    { "sp_run_all_bang", "run_all!", SPROF_KIND_TOPLEVEL },
    { "sp_Foo_cls_new", "Foo.new", SPROF_KIND_CMETH },
    { "sp_Foo_initialize", "Foo#initialize", SPROF_KIND_IMETH },
    { "sp_Foo", NULL, -1 },
    { "sp_", NULL, -1 },
    { "main", NULL, -1 },
    { "_sp_proc_fn_3", NULL, -1 },
};

static const struct {
    const char *name;
    size_t base_len;
} suffix_cases[] = {
    { "sp_Vec2__plus.isra.0", 13 },
    { "sp_Vec2__plus.constprop.0.isra.0", 13 },
    { "sp_gc_alloc.cold", 11 },
    { "sp_fib.part.0", 6 },
    { "sp_fib.lto_priv.0", 6 },
    { "sp_fib", 6 },
    { "weird.name", 10 },
    { ".hidden", 7 },
};

static const struct {
    const char *c;
    int kind, cost; /* -1: no rule */
} classify_cases[] = {
    { "sp_gc_alloc", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_gc_collect", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_gc_mark_all", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_gc_cleanup", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "_sp_gc_root_push", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "_sp_gc_root_pop", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_str_alloc", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_str_sweep", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_StrArray_gc_scan", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_obj_pool_get", SPROF_KIND_RUNTIME, SPROF_COST_GC },
    { "sp_String_concat", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "sp_str_cat", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "sp_StrArray_push", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "sp_StrIntHash_get", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "sp_StrStrHash_set", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "sp_IntArray_push", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "sp_fiber_trampoline", SPROF_KIND_RUNTIME, SPROF_COST_RUNTIME },
    { "main", SPROF_KIND_NATIVE, SPROF_COST_NATIVE },
    { "sp_Shape_area", -1, -1 },
    { "sp_Foo_mark", -1, -1 }, /* a Ruby method named mark is not the collector */
    { "sp_fib", -1, -1 },
    { "memcpy", -1, -1 },
};

int main(void)
{
    for (size_t i = 0; i < sizeof demangle_cases / sizeof *demangle_cases; i++) {
        char out[256] = "";
        uint8_t kind = 99;
        int ok = sprof_demangle(demangle_cases[i].c, out, sizeof out, &kind);
        if (demangle_cases[i].kind < 0) {
            CHECK(!ok, "%s: demangled to %s, expected no demangling", demangle_cases[i].c, out);
            continue;
        }
        CHECK(ok, "%s: not demangled", demangle_cases[i].c);
        CHECK(strcmp(out, demangle_cases[i].ruby) == 0, "%s: got %s, want %s", demangle_cases[i].c, out,
              demangle_cases[i].ruby);
        CHECK(kind == demangle_cases[i].kind, "%s: kind %d, want %d", demangle_cases[i].c, kind,
              demangle_cases[i].kind);
    }
    for (size_t i = 0; i < sizeof suffix_cases / sizeof *suffix_cases; i++) {
        size_t n = sprof_base_name_len(suffix_cases[i].name);
        CHECK(n == suffix_cases[i].base_len, "%s: base length %zu, want %zu", suffix_cases[i].name, n,
              suffix_cases[i].base_len);
    }
    for (size_t i = 0; i < sizeof classify_cases / sizeof *classify_cases; i++) {
        const sprof_classify_rule *r = sprof_classify(classify_cases[i].c);
        if (classify_cases[i].kind < 0) {
            CHECK(!r, "%s: matched rule %s, expected none", classify_cases[i].c, r ? r->pattern : "");
            continue;
        }
        CHECK(r && r->kind == classify_cases[i].kind && r->cost == classify_cases[i].cost,
              "%s: got %s (kind %d cost %d)", classify_cases[i].c, r ? r->pattern : "no rule",
              r ? r->kind : -1, r ? r->cost : -1);
    }
    char out[256];
    uint8_t kind = 0;
    CHECK(sprof_repair_map_name("Geo_cls_dist2", out, sizeof out, &kind) && strcmp(out, "Geo.dist2") == 0 &&
              kind == SPROF_KIND_CMETH,
          "Geo_cls_dist2 repair: %s", out);
    CHECK(!sprof_repair_map_name("Geo.dist2", out, sizeof out, &kind), "Geo.dist2 must stay");
    CHECK(!sprof_repair_map_name("fib", out, sizeof out, &kind), "fib must stay");
    CHECK(sprof_strip_implicit("Sphere__implicit_852#hit", out, sizeof out) && strcmp(out, "Sphere#hit") == 0,
          "implicit strip: %s", out);
    /* Spinel's map spellings of a class clone. */
    CHECK(sprof_strip_implicit("Sphere::::implicit::852#intersect", out, sizeof out) &&
              strcmp(out, "Sphere#intersect") == 0,
          "map clone spelling: %s", out);
    CHECK(sprof_strip_implicit("Geo::Ray::implicit::7.make", out, sizeof out) && strcmp(out, "Geo::Ray.make") == 0,
          "map clone spelling (::implicit::): %s", out);
    CHECK(!sprof_strip_implicit("Implicit#implicit", out, sizeof out), "no clone: %s", out);

    /* .rb scopes: def..end by layout, one-line and endless defs, class bodies. */
    static const char rb[] = "class Consumer\n"           /* 1 */
                             "  def total\n"              /* 2 */
                             "    if @n\n"                /* 3 */
                             "      @n\n"                 /* 4 */
                             "    end\n"                  /* 5 */
                             "  end\n"                    /* 6 */
                             "  def one; 1; end\n"        /* 7 */
                             "  def two = 2\n"            /* 8 */
                             "  def x=(v)\n"              /* 9 */
                             "    @x = v\n"               /* 10 */
                             "  end\n"                    /* 11 */
                             "end\n"                      /* 12 */
                             "f = Fiber.new do\n"         /* 13 */
                             "  1\n"                      /* 14 */
                             "end\n"                      /* 15 */
                             "module Geo\n"               /* 16 */
                             "  def self.d(a) = a * a\n"  /* 17 */
                             "  # def not_code\n"         /* 18 */
                             "end\n"                      /* 19 */
                             "def unclosed\n";            /* 20 */
    sprof_rb_scope *sc;
    size_t nsc;
    CHECK(sprof_rb_scan_text(rb, sizeof rb - 1, &sc, &nsc) == 0 && nsc == 8, "rb scan: %zu scopes", nsc);
    if (nsc == 8) {
        static const struct { uint32_t lo, hi; uint8_t type; const char *name; } want[] = {
            { 1, 12, SPROF_RB_CLASS, "Consumer" }, { 2, 6, SPROF_RB_DEF, NULL }, { 7, 7, SPROF_RB_DEF, NULL },
            { 8, 8, SPROF_RB_DEF, NULL },          { 9, 11, SPROF_RB_DEF, NULL }, { 16, 19, SPROF_RB_MODULE, "Geo" },
            { 17, 17, SPROF_RB_DEF, NULL },        { 20, 20, SPROF_RB_DEF, NULL },
        };
        for (size_t i = 0; i < nsc; i++)
            CHECK(sc[i].lo == want[i].lo && sc[i].hi == want[i].hi && sc[i].type == want[i].type &&
                      (want[i].name ? sc[i].name && strcmp(sc[i].name, want[i].name) == 0 : !sc[i].name),
                  "rb scope %zu: %u-%u type %u name %s", i, sc[i].lo, sc[i].hi, sc[i].type,
                  sc[i].name ? sc[i].name : "-");
    }
    sprof_rb_scopes_free(sc, nsc);

    CHECK(sprof_block_function_type("_sp_proc_fn_12") == 1, "_sp_proc_fn_12");
    CHECK(sprof_block_function_type("_fiber_body_3") == 2, "_fiber_body_3");
    CHECK(sprof_block_function_type("_sp_proc_fn_") == 0, "_sp_proc_fn_");
    CHECK(sprof_block_function_type("_sp_proc_fn_1x") == 0, "_sp_proc_fn_1x");
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("ruby-names: all cases pass\n");
    return 0;
}
