/* The CI gate of sprof-diff: --fail-if 'METHOD:+PP' and --fail-if-any +PP
 * trip when a method's total share grew by more than PP percentage points
 * and the change is significant (docs/ci.md). */
#ifndef SPROF_DIFF_GATE_H
#define SPROF_DIFF_GATE_H

#include <stddef.h>
#include <stdio.h>

#include "sprof/diff.h"

/* Exit status of a tripped gate (usage errors are 2, other errors 1). */
#define SPROF_DIFF_EXIT_GATE 3

typedef struct gate_rule {
    const char *method; /* NULL: any method (--fail-if-any) */
    size_t method_len;
    double limit_pp;
} gate_rule;

typedef struct gate_hit {
    const sprof_diff_row *row;
    double change_pp, limit_pp;
} gate_hit;

typedef struct gate {
    gate_rule *rules;
    size_t nrules;
    gate_hit *hits;
    size_t nhits;
    const char **missing; /* --fail-if methods in neither profile */
    size_t nmissing;
} gate;

/* Parse "METHOD:+PP" (method may contain ':'; the last ':' splits) or, with
 * any_method, "+PP". 0, or -1 with a message on stderr. */
int gate_add_rule(gate *g, const char *spec, int any_method);

/* Check every rule against the table. 0, or -1 on out of memory. */
int gate_check(gate *g, const sprof_diff_table *t);

/* One line: "sprof-diff: gate: FAIL: ..." or "sprof-diff: gate: pass: ...". */
void gate_print_verdict(FILE *out, const gate *g);

/* "gate":{...} for --json (nothing if no rule). */
void gate_write_json(FILE *out, const gate *g);

void gate_free(gate *g);

#endif
