/* pprof export: the profile as perftools.profiles.Profile (profile.proto),
 * gzipped. Field numbers as in github.com/google/pprof proto/profile.proto.
 *
 * Mapping of the model: each run of frames [real function, inlined
 * callees...] (root first in the profile) becomes one Location whose Lines
 * list the innermost frame first and the real function last, as pprof
 * expects; each distinct (Ruby name, C name, file, def line) is a Function;
 * each module path a Mapping (the profiled binary carries the build-id).
 * Sample values are [samples/count, cpu/nanoseconds] (wall/nanoseconds for
 * wall-clock traces). */
#include "sprof/export.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <zlib.h>

#include "sprof/accounting.h"
#include "sprof/caveats.h"
#include "sprof/out_file.h"
#include "sprof/proto_encode.h"
#include "sprof/trace_format.h"

enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
    PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10,
    PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
    PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,
    MAPPING_ID = 1, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
    MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
    LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
    FUNCTION_START_LINE = 5,
};

typedef struct key_slot {
    char *key;     /* owned; strings: the string; functions: joined fields; locations: frame ids */
    size_t keylen;
    uint64_t id;   /* string index, or 1-based id */
    UT_hash_handle hh;
} key_slot;

typedef struct builder {
    const sprof_profile *p;
    sprof_pbuf out, msg, sub;
    key_slot *strings, *functions, *locations, *mappings;
    char **string_list;
    size_t nstrings, string_cap;
    uint64_t nfunctions, nlocations, nmappings;
    uint64_t *func_of_frame;    /* 0 = not yet */
    uint64_t *mapping_of_frame; /* 0 = none */
    uint8_t *mapping_done;      /* per frame: mapping_of_frame computed */
    int oom;
} builder;

/* Find or add `key` in table; *added = 1 when new (id = ++*counter). */
static key_slot *intern(builder *b, key_slot **table, const void *key, size_t keylen, uint64_t *counter,
                        int *added)
{
    key_slot *s = NULL;
    *added = 0;
    HASH_FIND(hh, *table, key, keylen, s);
    if (s)
        return s;
    s = calloc(1, sizeof *s);
    char *k = malloc(keylen + 1);
    if (!s || !k) {
        free(s);
        free(k);
        b->oom = 1;
        return NULL;
    }
    memcpy(k, key, keylen);
    k[keylen] = '\0';
    s->key = k;
    s->keylen = keylen;
    s->id = ++*counter;
    HASH_ADD_KEYPTR(hh, *table, s->key, s->keylen, s);
    *added = 1;
    return s;
}

static uint64_t str_index(builder *b, const char *str)
{
    key_slot *s = NULL;
    size_t n = strlen(str);
    HASH_FIND(hh, b->strings, str, n, s);
    if (s)
        return s->id;
    if (b->nstrings == b->string_cap) {
        size_t cap = b->string_cap ? 2 * b->string_cap : 256;
        char **l = realloc(b->string_list, cap * sizeof *l);
        if (!l) {
            b->oom = 1;
            return 0;
        }
        b->string_list = l;
        b->string_cap = cap;
    }
    uint64_t counter = b->nstrings - 1; /* ids are 0-based here: string_table[0] = "" */
    int added;
    s = intern(b, &b->strings, str, n, &counter, &added);
    if (!s)
        return 0;
    b->string_list[b->nstrings++] = s->key;
    return s->id;
}

static void free_table(key_slot **table)
{
    key_slot *s, *tmp;
    HASH_ITER(hh, *table, s, tmp) {
        HASH_DEL(*table, s);
        free(s->key);
        free(s);
    }
}

static uint64_t function_id(builder *b, uint32_t fi)
{
    if (b->func_of_frame[fi])
        return b->func_of_frame[fi];
    const sprof_pframe *f = &b->p->frames[fi];
    size_t n = strlen(f->name) + strlen(f->c_name) + strlen(f->file) + 16;
    char *key = malloc(n);
    if (!key) {
        b->oom = 1;
        return 0;
    }
    int len = snprintf(key, n, "%s%c%s%c%s%c%u", f->name, 1, f->c_name, 1, f->file, 1, f->def_line);
    int added;
    key_slot *s = intern(b, &b->functions, key, (size_t)len, &b->nfunctions, &added);
    free(key);
    if (!s)
        return 0;
    if (added) {
        sprof_pbuf_reset(&b->msg);
        sprof_pb_uint64(&b->msg, FUNCTION_ID, s->id);
        sprof_pb_int64_opt(&b->msg, FUNCTION_NAME, (int64_t)str_index(b, f->name));
        sprof_pb_int64_opt(&b->msg, FUNCTION_SYSTEM_NAME, (int64_t)str_index(b, f->c_name[0] ? f->c_name : f->name));
        sprof_pb_int64_opt(&b->msg, FUNCTION_FILENAME, (int64_t)str_index(b, f->file));
        sprof_pb_int64_opt(&b->msg, FUNCTION_START_LINE, f->def_line);
        sprof_pb_message(&b->out, PROFILE_FUNCTION, &b->msg);
    }
    b->func_of_frame[fi] = s->id;
    return s->id;
}

static int same_binary(const sprof_profile *p, const char *module)
{
    if (!p->binary_path || !module[0])
        return 0;
    if (strcmp(p->binary_path, module) == 0)
        return 1;
    const char *a = strrchr(p->binary_path, '/'), *m = strrchr(module, '/');
    return strcmp(a ? a + 1 : p->binary_path, m ? m + 1 : module) == 0;
}

static uint64_t mapping_id(builder *b, uint32_t fi)
{
    if (b->mapping_done[fi])
        return b->mapping_of_frame[fi];
    b->mapping_done[fi] = 1;
    const sprof_pframe *f = &b->p->frames[fi];
    if (!f->module[0])
        return 0;
    int added;
    key_slot *s = intern(b, &b->mappings, f->module, strlen(f->module), &b->nmappings, &added);
    if (!s)
        return 0;
    if (added) {
        char hex[2 * sizeof b->p->build_id + 1] = "";
        if (same_binary(b->p, f->module)) {
            uint32_t n = b->p->build_id_len <= sizeof b->p->build_id ? b->p->build_id_len : sizeof b->p->build_id;
            for (uint32_t i = 0; i < n; i++)
                snprintf(hex + 2 * i, 3, "%02x", b->p->build_id[i]);
        }
        sprof_pbuf_reset(&b->msg);
        sprof_pb_uint64(&b->msg, MAPPING_ID, s->id);
        sprof_pb_int64_opt(&b->msg, MAPPING_FILENAME, (int64_t)str_index(b, f->module));
        sprof_pb_int64_opt(&b->msg, MAPPING_BUILD_ID, (int64_t)str_index(b, hex));
        /* Symbolized already: pprof must not try to symbolize again. */
        sprof_pb_bool(&b->msg, MAPPING_HAS_FUNCTIONS, 1);
        sprof_pb_bool(&b->msg, MAPPING_HAS_FILENAMES, 1);
        sprof_pb_bool(&b->msg, MAPPING_HAS_LINE_NUMBERS, 1);
        sprof_pb_bool(&b->msg, MAPPING_HAS_INLINE_FRAMES, 1);
        sprof_pb_message(&b->out, PROFILE_MAPPING, &b->msg);
    }
    b->mapping_of_frame[fi] = s->id;
    return s->id;
}

/* Location of frames[0..n) (root first: a real function then its inlined callees). */
static uint64_t location_id(builder *b, const uint32_t *frames, uint32_t n)
{
    int added;
    key_slot *s = intern(b, &b->locations, frames, n * sizeof *frames, &b->nlocations, &added);
    if (!s)
        return 0;
    if (added) {
        const sprof_pframe *inner = &b->p->frames[frames[n - 1]];
        uint64_t address = inner->address ? inner->address : b->p->frames[frames[0]].address;
        uint64_t mapping = mapping_id(b, frames[0]);
        uint64_t *fids = malloc(n * sizeof *fids);
        if (!fids) {
            b->oom = 1;
            return 0;
        }
        for (uint32_t j = 0; j < n; j++)
            fids[j] = function_id(b, frames[j]); /* may emit Function messages into b->out */
        sprof_pbuf_reset(&b->msg);
        sprof_pb_uint64(&b->msg, LOCATION_ID, s->id);
        sprof_pb_uint64_opt(&b->msg, LOCATION_MAPPING_ID, mapping);
        sprof_pb_uint64_opt(&b->msg, LOCATION_ADDRESS, address);
        for (uint32_t j = n; j-- > 0;) { /* innermost first, the real function last */
            sprof_pbuf_reset(&b->sub);
            sprof_pb_uint64(&b->sub, LINE_FUNCTION_ID, fids[j]);
            sprof_pb_int64_opt(&b->sub, LINE_LINE, b->p->frames[frames[j]].line);
            sprof_pb_message(&b->msg, LOCATION_LINE, &b->sub);
        }
        free(fids);
        sprof_pb_message(&b->out, PROFILE_LOCATION, &b->msg);
    }
    return s->id;
}

static void value_type(builder *b, uint32_t field, const char *type, const char *unit)
{
    sprof_pbuf_reset(&b->msg);
    sprof_pb_int64(&b->msg, VALUETYPE_TYPE, (int64_t)str_index(b, type));
    sprof_pb_int64(&b->msg, VALUETYPE_UNIT, (int64_t)str_index(b, unit));
    sprof_pb_message(&b->out, field, &b->msg);
}

static void comment(builder *b, const char *what, uint64_t n)
{
    if (!n)
        return;
    char text[128];
    snprintf(text, sizeof text, "sprof: %s: %llu", what, (unsigned long long)n);
    sprof_pb_int64(&b->out, PROFILE_COMMENT, (int64_t)str_index(b, text));
}

/* The accounting warnings (sprof/accounting.h), so that a stored profile
 * still says it covers less CPU than it seems to. */
static void accounting_comments(builder *b, const sprof_profile *p)
{
    char text[1600];
    for (size_t i = 0; i < p->ntraces; i++)
        for (int w = 0; w < SPROF_WARN_COUNT; w++) {
            memcpy(text, "sprof: warning: ", 16);
            if (sprof_accounting_warning(&p->traces[i], (enum sprof_accounting_warning)w, text + 16,
                                         sizeof text - 16))
                sprof_pb_int64(&b->out, PROFILE_COMMENT, (int64_t)str_index(b, text));
        }
}

/* Incomplete stacks and guessed names (sprof/caveats.h): the figures as
 * counts above, the sentences here, as every view says them. */
static void caveat_comments(builder *b, const sprof_profile *p)
{
    sprof_caveats cv;
    sprof_caveats_of(p, &cv);
    comment(b, "samples with a guessed Ruby name in their stack", cv.approx_names);
    comment(b, "samples in JIT code no perf map named", cv.anon_code);
    char text[1100];
    for (int w = 0; w < SPROF_CAVEAT_COUNT; w++) {
        memcpy(text, "sprof: warning: ", 16);
        if (sprof_caveat_text(&cv, (enum sprof_caveat)w, text + 16, sizeof text - 16))
            sprof_pb_int64(&b->out, PROFILE_COMMENT, (int64_t)str_index(b, text));
    }
}

static int by_tid(const void *a, const void *b)
{
    const sprof_thread_label *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The profile's thread names sorted by tid, for bsearch (NULL: none, or out of memory). */
static sprof_thread_label *sorted_threads(const sprof_profile *p)
{
    if (!p->nthreads)
        return NULL;
    sprof_thread_label *v = malloc(p->nthreads * sizeof *v);
    if (v) {
        memcpy(v, p->threads, p->nthreads * sizeof *v);
        qsort(v, p->nthreads, sizeof *v, by_tid);
    }
    return v;
}

int sprof_pprof_encode(const sprof_profile *p, const sprof_export_options *o, unsigned char **data,
                       size_t *len, char *err, size_t errlen)
{
    builder b = { 0 };
    b.p = p;
    sprof_pbuf_init(&b.out);
    sprof_pbuf_init(&b.msg);
    sprof_pbuf_init(&b.sub);
    size_t nf = p->nframes ? p->nframes : 1;
    b.func_of_frame = calloc(nf, sizeof *b.func_of_frame);
    b.mapping_of_frame = calloc(nf, sizeof *b.mapping_of_frame);
    b.mapping_done = calloc(nf, 1);
    uint64_t *locs = NULL;
    size_t locs_cap = 0;
    sprof_pbuf sample;
    sprof_pbuf_init(&sample);
    if (!b.func_of_frame || !b.mapping_of_frame || !b.mapping_done)
        b.oom = 1;
    str_index(&b, ""); /* string_table[0] must be "" */

    const char *time_kind = p->mode == SPROF_MODE_WALL ? "wall" : "cpu";
    value_type(&b, PROFILE_SAMPLE_TYPE, "samples", "count");
    value_type(&b, PROFILE_SAMPLE_TYPE, time_kind, "nanoseconds");
    value_type(&b, PROFILE_PERIOD_TYPE, time_kind, "nanoseconds");
    if (p->hz)
        sprof_pb_int64(&b.out, PROFILE_PERIOD, (int64_t)(1000000000ull / p->hz));
    sprof_pb_int64(&b.out, PROFILE_DEFAULT_SAMPLE_TYPE, (int64_t)str_index(&b, o->weight_cpu ? time_kind : "samples"));
    /* when the samples were taken (traces only): pprof shows Time and Duration */
    sprof_pb_int64_opt(&b.out, PROFILE_TIME_NANOS, (int64_t)p->start_realtime_ns);
    if (p->end_realtime_ns > p->start_realtime_ns && p->start_realtime_ns)
        sprof_pb_int64(&b.out, PROFILE_DURATION_NANOS, (int64_t)(p->end_realtime_ns - p->start_realtime_ns));
    comment(&b, "samples dropped by the runtime (buffer full)", p->stats.dropped);
    comment(&b, "stacks truncated at the depth cap", p->stats.truncated);
    comment(&b, "samples whose stack does not reach main", p->stats.incomplete);
    comment(&b, "distinct PCs without a symbol", p->stats.unresolved_pcs);
    accounting_comments(&b, p);
    caveat_comments(&b, p);

    /* From traces: one sample per recorded sample, labelled with its thread
     * (name and tid), its time since the first sample (ns) and its class on
     * the timeline (gc while the collector runs, kernel, ...), so
     * -tagfocus thread=... / class=gc and -tags work; else one per distinct
     * stack. */
    int timeline = p->ntimeline > 0;
    size_t nsamples = timeline ? p->ntimeline : p->nstacks;
    sprof_pbuf label;
    sprof_pbuf_init(&label);
    int64_t thread_key = 0, tid_key = 0, time_key = 0, ns_unit = 0, class_key = 0;
    if (timeline) {
        class_key = (int64_t)str_index(&b, "class");
        thread_key = (int64_t)str_index(&b, "thread");
        tid_key = (int64_t)str_index(&b, "tid");
        time_key = (int64_t)str_index(&b, "time");
        ns_unit = (int64_t)str_index(&b, "nanoseconds");
    }
    sprof_thread_label *names = timeline ? sorted_threads(p) : NULL;
    uint64_t t0 = UINT64_MAX; /* the label "time" counts from the first sample */
    for (size_t i = 0; i < p->ntimeline; i++)
        if (p->timeline[i].time_ns < t0)
            t0 = p->timeline[i].time_ns;
    if (timeline && p->nthreads && !names)
        b.oom = 1;
    for (size_t i = 0; i < nsamples && !b.oom; i++) {
        const sprof_timeline_sample *e = timeline ? &p->timeline[i] : NULL;
        const sprof_pstack *s = &p->stacks[e ? e->stack : i];
        if (!e && !s->samples && !s->cpu_ns)
            continue;
        if (s->nframes > locs_cap) {
            uint64_t *l = realloc(locs, s->nframes * sizeof *l);
            if (!l) {
                b.oom = 1;
                break;
            }
            locs = l;
            locs_cap = s->nframes;
        }
        /* Groups [real frame, inlined frames...], collected root first. */
        size_t nloc = 0;
        uint32_t start = 0;
        for (uint32_t j = 1; j <= s->nframes; j++) {
            if (j < s->nframes && (p->frames[s->frames[j]].flags & SPROF_FRAME_INLINED))
                continue;
            locs[nloc++] = location_id(&b, s->frames + start, j - start);
            start = j;
        }
        for (size_t k = 0; k < nloc / 2; k++) { /* pprof wants the leaf first */
            uint64_t t = locs[k];
            locs[k] = locs[nloc - 1 - k];
            locs[nloc - 1 - k] = t;
        }
        int64_t values[2] = { (int64_t)(e ? e->count : s->samples), (int64_t)(e ? e->weight_ns : s->cpu_ns) };
        sprof_pbuf_reset(&sample);
        sprof_pb_packed_uint64(&sample, SAMPLE_LOCATION_ID, locs, nloc);
        sprof_pb_packed_int64(&sample, SAMPLE_VALUE, values, 2);
        if (e) {
            const sprof_thread_label key = { .tid = e->tid }, *t =
                bsearch(&key, names, p->nthreads, sizeof *names, by_tid);
            if (t && t->name[0]) {
                sprof_pbuf_reset(&label);
                sprof_pb_int64(&label, LABEL_KEY, thread_key);
                sprof_pb_int64(&label, LABEL_STR, (int64_t)str_index(&b, t->name));
                sprof_pb_message(&sample, SAMPLE_LABEL, &label);
            }
            sprof_pbuf_reset(&label);
            sprof_pb_int64(&label, LABEL_KEY, tid_key);
            sprof_pb_int64(&label, LABEL_NUM, (int64_t)e->tid);
            sprof_pb_message(&sample, SAMPLE_LABEL, &label);
            sprof_pbuf_reset(&label);
            sprof_pb_int64(&label, LABEL_KEY, time_key);
            sprof_pb_int64(&label, LABEL_NUM, (int64_t)(e->time_ns - t0));
            sprof_pb_int64(&label, LABEL_NUM_UNIT, ns_unit);
            sprof_pb_message(&sample, SAMPLE_LABEL, &label);
            /* the timeline's class: -tagfocus class=gc is the collector's time */
            sprof_pbuf_reset(&label);
            sprof_pb_int64(&label, LABEL_KEY, class_key);
            sprof_pb_int64(&label, LABEL_STR,
                           (int64_t)str_index(&b, (e->flags & SPROF_SAMPLE_OFFCPU)
                                                      ? "off-CPU"
                                                      : sprof_cost_name((enum sprof_cost)sprof_pstack_time_class(p, s))));
            sprof_pb_message(&sample, SAMPLE_LABEL, &label);
        }
        sprof_pb_message(&b.out, PROFILE_SAMPLE, &sample);
    }
    b.oom |= label.oom;
    sprof_pbuf_free(&label);
    free(names);
    for (size_t i = 0; i < b.nstrings; i++)
        sprof_pb_string(&b.out, PROFILE_STRING_TABLE, b.string_list[i]);

    int rc = 0;
    if (b.oom || b.out.oom || b.msg.oom || b.sub.oom || sample.oom) {
        snprintf(err, errlen, "out of memory");
        sprof_pbuf_free(&b.out);
        rc = -1;
    } else {
        *data = b.out.data;
        *len = b.out.len;
    }
    free(locs);
    sprof_pbuf_free(&sample);
    sprof_pbuf_free(&b.msg);
    sprof_pbuf_free(&b.sub);
    free_table(&b.strings);
    free_table(&b.functions);
    free_table(&b.locations);
    free_table(&b.mappings);
    free(b.string_list);
    free(b.func_of_frame);
    free(b.mapping_of_frame);
    free(b.mapping_done);
    return rc;
}

/* gzip (RFC 1952) of data to out. 0, or -1. */
static int gzip_to(FILE *out, const unsigned char *data, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    unsigned char buf[1 << 15];
    int rc = 0, zr = Z_OK;
    size_t off = 0;
    do {
        size_t chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
        z.next_in = (unsigned char *)data + off;
        z.avail_in = (uInt)chunk;
        off += chunk;
        int flush = off == len ? Z_FINISH : Z_NO_FLUSH;
        do {
            z.next_out = buf;
            z.avail_out = sizeof buf;
            zr = deflate(&z, flush);
            if (zr == Z_STREAM_ERROR) {
                rc = -1;
                break;
            }
            size_t have = sizeof buf - z.avail_out;
            if (have && fwrite(buf, 1, have, out) != have)
                rc = -1;
        } while (z.avail_out == 0 && rc == 0);
    } while (off < len && rc == 0);
    if (rc == 0 && zr != Z_STREAM_END)
        rc = -1;
    deflateEnd(&z);
    return rc;
}

int sprof_export_pprof(const sprof_profile *p, const sprof_export_options *o, const char *path, char *err,
                       size_t errlen)
{
    unsigned char *data = NULL;
    size_t len = 0;
    if (sprof_pprof_encode(p, o, &data, &len, err, errlen) != 0)
        return -1;
    sprof_out_file f;
    if (sprof_out_open(&f, path, err, errlen) != 0) {
        free(data);
        return -1;
    }
    int rc = gzip_to(f.fp, data, len);
    free(data);
    if (rc != 0) {
        snprintf(err, errlen, "%s: compression or write error", path);
        sprof_out_abort(&f);
        return -1;
    }
    return sprof_out_commit(&f, err, errlen);
}
