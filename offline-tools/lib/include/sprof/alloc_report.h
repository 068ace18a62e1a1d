/* Spinel allocation reports (SPINEL_ALLOC_REPORT / SPINEL_ALLOC_SITES) ->
 * the joined profile, with allocation sites named through the symmap.
 *
 * The input is folded text whose root frame is "alloc" and whose leaf is
 * the allocated type, with the sites in between as glibc's
 * backtrace_symbols() prints them:
 *
 *   alloc;./app(+0x2bc5) [0x5a0a1e7acbc5];String 5
 *   alloc;./app(sp_Foo_bar+0x1d) [0x...];./app(main+0x40) [0x...];Array 2
 *   alloc;[0x5a0a1e7acbc5];String 1
 *
 * Each site of the profiled binary becomes the Ruby frames there (inline
 * chain, `.rb` line for --lines); other sites keep their symbol name, or
 * stay as written when nothing is known about them. docs/perf-script.md. */
#ifndef SPROF_ALLOC_REPORT_H
#define SPROF_ALLOC_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "sprof/perf_script.h"
#include "sprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Add a report file ("-" = stdin). The count of each line becomes both
 * its sample count and its weight. 0, or -1 + one line in err. */
int sprof_profile_add_alloc_report(sprof_profile *p, const char *path, const char *symmap_path,
                                   const sprof_perf_options *opt, char *err, size_t errlen);

/* Same over an open stream (rewound once if seekable, to learn the load
 * address of absolute-only sites); `symmap` may be NULL. */
int sprof_profile_add_alloc_report_stream(sprof_profile *p, FILE *in, const char *name,
                                          const sprof_symmap *symmap,
                                          const sprof_perf_options *opt, char *err,
                                          size_t errlen);

/* 1 if the text looks like an allocation report: the first line that is not
 * a comment or blank is "alloc;...;TYPE COUNT". */
int sprof_alloc_report_detect(const char *text, size_t len);

#ifdef __cplusplus
}
#endif
#endif
