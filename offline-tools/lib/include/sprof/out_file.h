/* Output files that never look complete when they are not: data goes to a
 * temporary file in the destination's directory, renamed into place only
 * by sprof_out_commit(). "-" means stdout (written directly). */
#ifndef SPROF_OUT_FILE_H
#define SPROF_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_out_file {
    FILE *fp;       /* write here */
    char *path;     /* final path (NULL for stdout) */
    char *tmp_path; /* temporary file, renamed to path on commit */
    int in_place;   /* path is a device or FIFO: written directly, never renamed over */
} sprof_out_file;

/* 0, or -1 + err "<path>: <why>". */
int sprof_out_open(sprof_out_file *o, const char *path, char *err, size_t errlen);
/* Flush, close and rename into place; checks every write error on the way.
 * On failure the temporary file is removed. 0, or -1 + err. */
int sprof_out_commit(sprof_out_file *o, char *err, size_t errlen);
/* Give up: close and remove the temporary file (safe to call twice). */
void sprof_out_abort(sprof_out_file *o);

#ifdef __cplusplus
}
#endif
#endif
