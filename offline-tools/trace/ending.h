/* sprof-trace info: how a trace ended and what went wrong while it was
 * recorded (END reason, STATS problems, format 1.3). */
#ifndef SPROF_TRACE_ENDING_H
#define SPROF_TRACE_ENDING_H

#include <stdint.h>
#include <stdio.h>

#include "sprof/trace_reader.h"

/* The "file:" line's note after the name ("" for a clean END). */
const char *ending_file_note(const sprof_trace *t);
/* "ended:" and "problems:" lines. st: the last STATS (NULL if none);
 * samples: SAMPLE records read. */
void ending_print(FILE *o, const sprof_trace *t, const sprof_info_view *iv, const struct sprof_rec_stats *st,
                  uint64_t samples);

#endif
