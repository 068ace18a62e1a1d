/* Exports of the joined profile to other tools' formats:
 *   pprof   profile.proto, gzipped (pprof, Pyroscope, Grafana, ...);
 *   speedscope  https://www.speedscope.app/file-format-schema.json;
 *   timeline    sprof's own timeline page (HTML).
 * Both write through a temp file + rename (nothing at `path` on error).
 * Format details and choices: docs/views.md. */
#ifndef SPROF_EXPORT_H
#define SPROF_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sprof_export_options {
    int weight_cpu;    /* speedscope: weights in CPU ns (unit nanoseconds) instead of samples (unit none);
                        * pprof: which value is the default sample type (both are always written) */
    const char *name;  /* profile name (speedscope), NULL: the binary's basename or "sprof" */
} sprof_export_options;

/* Uncompressed profile.proto bytes of p in *data (malloc'd, *len bytes).
 * 0, or -1 + err. */
int sprof_pprof_encode(const sprof_profile *p, const sprof_export_options *o, unsigned char **data,
                       size_t *len, char *err, size_t errlen);
/* Gzipped profile.proto to `path`. 0, or -1 + err. */
int sprof_export_pprof(const sprof_profile *p, const sprof_export_options *o, const char *path, char *err,
                       size_t errlen);

/* Speedscope JSON to a stream / to `path`. 0, or -1 (+ err). */
int sprof_write_speedscope(const sprof_profile *p, const sprof_export_options *o, FILE *out, char *err,
                           size_t errlen);
int sprof_export_speedscope(const sprof_profile *p, const sprof_export_options *o, const char *path, char *err,
                            size_t errlen);

/* The timeline page (self-contained HTML: lanes per thread over time by
 * cost class, collector and kernel markers, a selection's flame graph).
 * Needs p's timeline (traces loaded with sprof_load_options.timeline).
 * 0, or -1 (+ err). */
int sprof_write_timeline(const sprof_profile *p, FILE *out, char *err, size_t errlen);
int sprof_export_timeline(const sprof_profile *p, const char *path, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
