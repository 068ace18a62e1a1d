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

/* What a rule's limit measures: the total share (pp), or the total CPU
 * seconds per run, relative (% of before's) or absolute (s). */
enum gate_unit { GATE_PP = 0, GATE_PCT = 1, GATE_SECONDS = 2 };

typedef struct gate_rule {
    const char *method; /* NULL: any method (--fail-if-any) */
    size_t method_len;
    double limit_pp;    /* the limit, in the rule's unit */
    enum gate_unit unit;
} gate_rule;

typedef struct gate_hit {
    const sprof_diff_row *row;
    double change_pp, limit_pp; /* in the unit of the strictest rule it broke */
    enum gate_unit unit;
    double q;
} gate_hit;

typedef struct gate {
    gate_rule *rules;
    size_t nrules;
    size_t cpu_rules; /* rules in % or s: they need CPU weights */
    gate_hit *hits;
    size_t nhits;
    const char **missing; /* --fail-if methods in neither profile */
    size_t nmissing;
} gate;

/* Parse "METHOD:+LIMIT" (method may contain ':'; the last ':' splits) or,
 * with any_method, "+LIMIT"; LIMIT is PP (total share, percentage points),
 * N% (total CPU seconds per run, relative to before) or Ns (absolute
 * seconds). 0, or -1 with a message on stderr. */
int gate_add_rule(gate *g, const char *spec, int any_method);

/* Check every rule against the table. 0, or -1 on out of memory. */
int gate_check(gate *g, const sprof_diff_table *t);

/* One line: "sprof-diff: gate: FAIL: ..." or "sprof-diff: gate: pass: ...". */
void gate_print_verdict(FILE *out, const gate *g);

/* "gate":{...} for --json (nothing if no rule). */
void gate_write_json(FILE *out, const gate *g);

void gate_free(gate *g);

#endif
