/* What every tests/fold unit test shares: CHECK (on failure print
 * file:line and the message, count it, go on) and the end-of-test report.
 * One test program per translation unit, so the counter is static. */
#ifndef FOLD_CHECK_H
#define FOLD_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* The exit status of test `name` after all its checks: prints
 * "name: N failure(s)" (1) or "name: ok" (0). */
static inline int check_report(const char *name)
{
    if (failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

#endif
