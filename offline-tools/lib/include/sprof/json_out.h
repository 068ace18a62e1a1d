/* Writing JSON text safely: every string goes through sprof_json_string,
 * which escapes quotes, backslashes and control characters and replaces
 * bytes that are not valid UTF-8 with U+FFFD, so the output always parses. */
#ifndef SPROF_JSON_OUT_H
#define SPROF_JSON_OUT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if the bytes there
 * are not valid UTF-8 (overlong, surrogate, > U+10FFFF, truncated). */
int sprof_utf8_seq_len(const unsigned char *s);

/* Write s as a quoted JSON string. */
void sprof_json_string(FILE *out, const char *s);

#ifdef __cplusplus
}
#endif
#endif
