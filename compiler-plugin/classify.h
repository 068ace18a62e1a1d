/* Cost class and kind of a C function that is not a Ruby method from the
 * map: one ordered rule table (classify_rules.c), first match wins. */
#ifndef SPROF_CLASSIFY_H
#define SPROF_CLASSIFY_H

#include <stdint.h>

typedef struct sprof_classify_rule {
    const char *pattern; /* fnmatch(3) glob on the base C name (clone suffix removed) */
    uint8_t kind;        /* enum sprof_kind */
    uint8_t cost;        /* enum sprof_cost */
    const char *why;     /* one-line reason, shown by --dump for humans */
} sprof_classify_rule;

extern const sprof_classify_rule sprof_classify_rules[];
extern const unsigned sprof_classify_rule_count;

/* First rule matching base_cname, or NULL. */
const sprof_classify_rule *sprof_classify(const char *base_cname);

#endif
