/* A profile's folded output as a string (the caller frees it): what the
 * tests/fold unit tests compare. */
#ifndef FOLDED_TEXT_H
#define FOLDED_TEXT_H

#include <stdio.h>

#include "sprof/profile.h"

static inline char *folded_text(const sprof_profile *p, const sprof_fold_format *fmt)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    sprof_profile_write_folded(p, f, fmt);
    fclose(f);
    return buf;
}

#endif
