/* Which cost class a sample is charged to (see sprof_pstack_cost in profile.h). */
#include "sprof/profile.h"

uint8_t sprof_pstack_cost(const sprof_profile *p, const sprof_pstack *s)
{
    for (uint32_t j = s->nframes; j-- > 0;) {
        uint32_t fi = s->frames[j];
        uint8_t cost = fi < p->nframes ? p->frames[fi].cost : SPROF_COST_NATIVE;
        if (cost >= SPROF_COST_COUNT)
            cost = SPROF_COST_NATIVE;
        if (cost == SPROF_COST_NATIVE)
            continue;
        /* the leaf itself, or the first non-native caller of a native leaf */
        if (j + 1 == s->nframes || cost == SPROF_COST_GC || cost == SPROF_COST_RUNTIME)
            return cost;
        return SPROF_COST_NATIVE;
    }
    return SPROF_COST_NATIVE;
}
