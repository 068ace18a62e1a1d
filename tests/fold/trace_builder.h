/* Build sprof trace files record by record (format: sprof/trace_format.h),
 * for tests and the fold benchmark's synthetic traces. */
#ifndef SPROF_TEST_TRACE_BUILDER_H
#define SPROF_TEST_TRACE_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sprof/trace_format.h"

typedef struct trace_builder {
    FILE *f;
} trace_builder;

int tb_open(trace_builder *b, const char *path);
void tb_info(trace_builder *b, uint32_t mode, uint32_t hz, uint64_t start_ns, const char *exe);
void tb_mapping(trace_builder *b, uint64_t start, uint64_t end, uint64_t off, const uint8_t *id,
                uint32_t idlen, const char *path);
void tb_thread(trace_builder *b, uint32_t tid, uint32_t event, uint64_t time_ns, const char *name);
/* ret/fpoff: nframes entries; cand_off/cand_val: ncand entries. */
void tb_sample(trace_builder *b, uint32_t tid, uint32_t flags, uint64_t time_ns, uint64_t weight_ns,
               uint64_t pc, uint64_t sp, uint64_t fp, uint32_t fp0_off, const uint64_t *ret,
               const uint32_t *fpoff, uint16_t nframes, const uint32_t *cand_off,
               const uint64_t *cand_val, uint16_t ncand);
void tb_stats(trace_builder *b, uint64_t written, uint64_t dropped, uint64_t truncated);
/* A whole STATS record as given (h is filled in), written `size` bytes
 * long: SPROF_REC_STATS_V1_SIZE for a format 1.0 record, sizeof *st for
 * 1.1, more for a future writer (zero bytes appended), less for a broken one. */
void tb_stats_record(trace_builder *b, const struct sprof_rec_stats *st, uint32_t size);
/* Sample flags of a kernel-time sample in system call `nr` (-1: unknown). */
uint32_t tb_syscall_flags(int nr);
/* Writes END unless `truncated`; closes. 0 ok. */
int tb_close(trace_builder *b, int truncated);

#endif
