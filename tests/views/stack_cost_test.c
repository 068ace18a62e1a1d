/* The class a sample is charged to (sprof_pstack_cost): native leaves under
 * the allocator count as gc, under a runtime helper as runtime, under Ruby
 * code as native; other leaves keep their own class. */
#include <stdio.h>
#include <string.h>

#include "sprof/profile.h"
#include "fold_check.h" /* CHECK and check_report, shared with the fold unit tests */

static uint32_t frame(sprof_profile *p, const char *name, uint8_t cost)
{
    sprof_pframe f;
    memset(&f, 0, sizeof f);
    f.name = name;
    f.c_name = name;
    f.file = "";
    f.module = "app";
    f.kind = cost == SPROF_COST_USER ? SPROF_KIND_IMETH : SPROF_KIND_NATIVE;
    f.cost = cost;
    return sprof_profile_intern_frame(p, &f);
}

static uint8_t cost_of(sprof_profile *p, const uint32_t *frames, uint32_t n)
{
    sprof_pstack s = { n, (uint32_t *)frames, 1, 1, 0 };
    return sprof_pstack_cost(p, &s);
}

int main(void)
{
    sprof_profile p;
    sprof_profile_init(&p);
    uint32_t main_f = frame(&p, "main", SPROF_COST_NATIVE);
    uint32_t ruby = frame(&p, "Indexer#tokenize", SPROF_COST_USER);
    uint32_t alloc = frame(&p, "sp_gc_alloc", SPROF_COST_GC);
    uint32_t helper = frame(&p, "sp_String_split", SPROF_COST_RUNTIME);
    uint32_t calloc_f = frame(&p, "calloc", SPROF_COST_NATIVE);
    uint32_t intmalloc = frame(&p, "_int_malloc", SPROF_COST_NATIVE);
    uint32_t memcpy_f = frame(&p, "memcpy", SPROF_COST_NATIVE);

    uint32_t under_gc[] = { main_f, ruby, helper, alloc, calloc_f, intmalloc };
    CHECK(cost_of(&p, under_gc, 6) == SPROF_COST_GC, "calloc;_int_malloc under sp_gc_alloc is gc");
    uint32_t under_rt[] = { main_f, ruby, helper, memcpy_f };
    CHECK(cost_of(&p, under_rt, 4) == SPROF_COST_RUNTIME, "memcpy under a runtime helper is runtime");
    uint32_t under_ruby[] = { main_f, ruby, memcpy_f };
    CHECK(cost_of(&p, under_ruby, 3) == SPROF_COST_NATIVE, "memcpy called from Ruby code stays native");
    uint32_t ruby_leaf[] = { main_f, ruby };
    CHECK(cost_of(&p, ruby_leaf, 2) == SPROF_COST_USER, "a Ruby leaf is user");
    uint32_t gc_leaf[] = { main_f, ruby, alloc };
    CHECK(cost_of(&p, gc_leaf, 3) == SPROF_COST_GC, "an allocator leaf is gc");
    uint32_t helper_leaf[] = { main_f, ruby, alloc, helper };
    CHECK(cost_of(&p, helper_leaf, 4) == SPROF_COST_RUNTIME, "a runtime leaf keeps its class even under gc");
    uint32_t all_native[] = { main_f, calloc_f };
    CHECK(cost_of(&p, all_native, 2) == SPROF_COST_NATIVE, "native all the way is native");
    CHECK(cost_of(&p, NULL, 0) == SPROF_COST_NATIVE, "empty stack is native");

    sprof_profile_free(&p);
    return check_report("stack cost classes");
}
