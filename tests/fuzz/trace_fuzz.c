/* libFuzzer harness for the trace reader (offline-tools/lib/src/trace_reader.c):
 * every record of any byte string is read and every array it exposes is
 * touched, so an out-of-bounds view shows up under ASan. */
#include <stdint.h>
#include <string.h>

#include "sprof/trace_reader.h"

static volatile uint64_t sink;

static void touch_string(const char *s)
{
    sink += strlen(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    sprof_trace *t = sprof_trace_open_mem(data, size, "fuzz", err, sizeof err);
    if (!t) return 0;
    for (int pass = 0; pass < 2; pass++) {
        sprof_trace_record r;
        int rc;
        while ((rc = sprof_trace_next(t, &r, err, sizeof err)) > 0) {
            switch (r.type) {
            case SPROF_REC_INFO: touch_string(r.u.info.exe_path); break;
            case SPROF_REC_MAPPING:
                touch_string(r.u.mapping.path);
                for (uint32_t i = 0; i < r.u.mapping.build_id_len; i++) sink += r.u.mapping.build_id[i];
                break;
            case SPROF_REC_THREAD: touch_string(r.u.thread.name); break;
            case SPROF_REC_SAMPLE: {
                const sprof_sample_view *s = &r.u.sample;
                for (uint32_t i = 0; i < s->nframes; i++) {
                    uint64_t v;
                    uint32_t o;
                    memcpy(&v, &s->ret[i], 8);
                    memcpy(&o, &s->fpoff[i], 4);
                    sink += v + o;
                }
                for (uint32_t i = 0; i < s->ncand; i++) {
                    uint64_t v;
                    uint32_t o;
                    memcpy(&v, &s->cand_val[i], 8);
                    memcpy(&o, &s->cand_off[i], 4);
                    sink += v + o;
                }
                break;
            }
            case SPROF_REC_STATS: sink += r.u.stats.samples_written; break;
            default: break;
            }
        }
        sink += (uint64_t)sprof_trace_truncated(t) + sprof_trace_offset(t);
        sprof_trace_rewind(t);
    }
    sprof_trace_close(t);
    return 0;
}
