/* What the method-level views (callgraph, top, speedscope) share: frames
 * merged by display name into "methods", the focus/ignore stack selection,
 * the weight of a stack, and printing of weights.
 *
 * A method is every frame with the same display name (sprof_pframe_display
 * with Ruby names, no lines, no class suffix): a Ruby method whatever line
 * or clone (.isra, .constprop, inlined copy) it was seen at. */
#ifndef SPROF_VIEW_METHODS_H
#define SPROF_VIEW_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_method {
    char *name;          /* display name */
    const char *c_name;  /* C name of the first frame seen (borrowed from the profile) */
    const char *file;    /* Ruby code: a .rb file if any frame had one, else the first non-empty
                          * file; other code: the first non-.rb file ("" if none) */
    uint32_t def_line;   /* first non-zero def_line seen */
    uint8_t cost;        /* enum sprof_cost of the first frame seen */
    uint8_t kind;        /* enum sprof_kind of the first frame seen */
    uint16_t name_flags; /* NAME_APPROX / NAME_GUESSED / FOLDED of any of its frames */
} sprof_method;

typedef struct sprof_methods {
    sprof_method *methods;
    size_t nmethods;
    uint32_t *of_frame; /* profile frame index -> method index */
    size_t nframes;
} sprof_methods;

/* 0, or -1 + err (out of memory). */
int sprof_methods_build(sprof_methods *m, const sprof_profile *p, char *err, size_t errlen);
void sprof_methods_free(sprof_methods *m);

/* Which stacks a view keeps (pprof's -focus / -ignore, on method names,
 * POSIX extended regexes, unanchored):
 *   focus:  keep only stacks with at least one method matching it;
 *   ignore: then drop stacks with any method matching it.
 * Either may be NULL. keep[i] is set to 1/0 for each profile stack.
 * 0, or -1 + err (bad regex, out of memory). */
int sprof_methods_select(const sprof_methods *m, const sprof_profile *p, const char *focus,
                         const char *ignore, uint8_t *keep, char *err, size_t errlen);

/* What a stack weighs in a view: samples, or CPU (wall) nanoseconds. */
static inline uint64_t sprof_pstack_weight(const sprof_pstack *s, int weight_cpu)
{
    return weight_cpu ? s->cpu_ns : s->samples;
}

/* --weight=auto: CPU time when the profile came from traces (hz known)
 * with CPU weights, samples otherwise (folded files carry counts only). */
int sprof_profile_has_cpu_weights(const sprof_profile *p);

/* Parse "samples" | "cpu" | "auto" into *weight_cpu (auto resolved on p).
 * 0, or -1 if the word is unknown. */
int sprof_parse_weight(const char *word, const sprof_profile *p, int *weight_cpu);

/* Human-readable weight: "1234" samples, or "1.23s" / "45.6ms" / "789us" / "12ns". */
const char *sprof_format_weight(uint64_t v, int weight_cpu, char *buf, size_t buflen);

/* 100 * part / total, 0 when total is 0. */
double sprof_percent(uint64_t part, uint64_t total);

/* 1 if path names a Ruby source file (ends in ".rb"). */
int sprof_is_ruby_file(const char *path);

#ifdef __cplusplus
}
#endif
#endif
