/* "Say so": what every view carries when a profile is less than it seems,
 * beyond the recording's own accounting (sprof/accounting.h):
 *  - incomplete stacks: samples whose stack reaches neither main, a fiber
 *    base nor a thread's start (sprof_profile_stats.incomplete), so their
 *    callers are unknown and the callers' inclusive figures are too low;
 *  - approximate names: samples with at least one frame whose Ruby name is
 *    a guess (SPROF_FRAME_NAME_APPROX: no Spinel map, named from the C
 *    name; docs/ruby-names.md);
 *  - forced: samples of traces read with --force against a symmap of
 *    another build, so their names and lines are likely wrong;
 *  - anonymous code: samples in JIT-compiled code whose JIT wrote no perf
 *    map (/tmp/perf-PID.map), shown as one [anonymous code] frame.
 * One set of figures and sentences, so stderr, titles, legends, headers and
 * export metadata all say the same thing. Spec: docs/views.md ("Incomplete
 * stacks and guessed names"). */
#ifndef SPROF_CAVEATS_H
#define SPROF_CAVEATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_caveats {
    uint64_t samples;      /* samples in the profile (sum over its stacks) */
    uint64_t incomplete;   /* of which: the stack does not reach main/[Fiber]/a thread start */
    uint64_t approx_names; /* of which: some frame's Ruby name is a guess */
    uint64_t forced;       /* of which: named through a symmap of another build (--force) */
    uint64_t anon_code;    /* of which: some frame is JIT code without a name ([anonymous code]) */
} sprof_caveats;

enum sprof_caveat {
    SPROF_CAVEAT_INCOMPLETE = 0,
    SPROF_CAVEAT_APPROX_NAMES = 1,
    SPROF_CAVEAT_FORCED = 2,
    SPROF_CAVEAT_ANON_CODE = 3,
    SPROF_CAVEAT_COUNT
};

/* The figures of p (never fails; a profile without samples has none). */
void sprof_caveats_of(const sprof_profile *p, sprof_caveats *c);

/* 1 and the full sentence in buf ("12 of 100 samples (12.0%) have an
 * incomplete stack: ...; ..."), no tool prefix, no newline; 0 (buf "")
 * if the caveat does not apply. */
int sprof_caveat_text(const sprof_caveats *c, enum sprof_caveat which, char *buf, size_t buflen);

/* The short form for a title line or a name: "warning: 12.0% of samples
 * have incomplete stacks, 30.0% guessed names" (only the parts that
 * apply, a forced symmap first); returns 0 and buf "" if none does. */
int sprof_caveats_short(const sprof_caveats *c, char *buf, size_t buflen);

/* Print each applying caveat to out as "<tool>: warning: <sentence>\n"
 * (`label`, if not NULL, after "warning: ": "before side: "). Returns how
 * many were printed. */
size_t sprof_caveats_print(FILE *out, const char *tool, const char *label, const sprof_caveats *c);

#ifdef __cplusplus
}
#endif
#endif
