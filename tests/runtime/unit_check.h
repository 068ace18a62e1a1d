/* The unit tests' one check: prints ok/FAIL, what was checked and the
 * figure it was judged on; main returns failures != 0. */
#ifndef SPROF_TESTS_UNIT_CHECK_H
#define SPROF_TESTS_UNIT_CHECK_H
#include <stdio.h>

static int failures;
static void check(int ok, const char *what, double got)
{
    printf("%s %s (%.4f)\n", ok ? "ok  " : "FAIL", what, got);
    if (!ok) failures++;
}
#endif
