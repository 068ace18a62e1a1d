/* app.c — app.rb as Spinel compiles it (`spinel app.rb -c`), written by hand
 * in Spinel's shape because Spinel cannot be installed where sprof is built
 * and tested. What matches Spinel's output, and matters to sprof:
 *   - one C function per Ruby method: sp_<Class>_<method>, sp_<Class>_cls_<method>,
 *     sp_<method> for top-level methods; short methods (<= 3 statements, no
 *     yield) are `static inline`; the rest are `static`, so gcc -O2 inlines most
 *     of them and they survive only as DWARF inlined-subroutine records;
 *   - `#line N "app.rb"` before each statement;
 *   - simple blocks (times, each, Array.new) are inline C loops; the block
 *     given to Thread.new is a proc, _sp_proc_fn_1;
 *   - GC-root bookkeeping (_sp_gc_root_push + a cleanup-attributed variable
 *     that calls sp_gc_cleanup -> _sp_gc_root_pop) around calls that allocate.
 * One deliberate difference: Checksum.fnv is forced inline with
 * always_inline, so the example always has a Ruby method that exists only
 * as an inlined frame, whatever gcc's heuristics decide. */
#include "sp_runtime.h"

typedef struct sp_Simulation {
    int64_t n;
    sp_FloatArray *xs;
    sp_FloatArray *vs;
} sp_Simulation;

typedef struct sp_Indexer {
    int64_t words;
} sp_Indexer;

typedef struct sp_Verifier {
    sp_IntQueue *jobs;
    sp_IntQueue *results;
} sp_Verifier;

typedef struct sp_Pipeline {
    int64_t budget_ns;
    sp_Simulation *sim;
    sp_Indexer *idx;
    int64_t cpu_sim, cpu_tok, cpu_sum, check;
} sp_Pipeline;

static void sp_Simulation_gc_scan(void *obj)
{
    sp_Simulation *o = obj;
    sp_gc_mark(o->xs);
    sp_gc_mark(o->vs);
}

static void sp_Verifier_gc_scan(void *obj)
{
    sp_Verifier *o = obj;
    sp_gc_mark(o->jobs);
    sp_gc_mark(o->results);
}

static void sp_Pipeline_gc_scan(void *obj)
{
    sp_Pipeline *o = obj;
    sp_gc_mark(o->sim);
    sp_gc_mark(o->idx);
}

static sp_String *sp_const_LINE;

static inline int64_t sp_cpu_ns(void)
{
#line 17 "app.rb"
    return sp_Process_clock_gettime_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline void sp_Simulation_initialize(sp_Simulation *self, int64_t n)
{
#line 22 "app.rb"
    self->n = n;
#line 23 "app.rb"
    self->xs = sp_FloatArray_new(n, 0.0);
#line 23 "app.rb"
    for (int64_t i = 0; i < n; i++)
#line 23 "app.rb"
        sp_FloatArray_aset(self->xs, i, i * 0.001);
#line 24 "app.rb"
    self->vs = sp_FloatArray_new(n, 0.0);
}

static sp_Simulation *sp_Simulation_new(int64_t n)
{
    sp_Simulation *SP_ROOTED self = NULL;
    _sp_gc_root_push((void **)&self);
    self = sp_gc_alloc(sizeof(sp_Simulation), SP_T_OBJECT, sp_Simulation_gc_scan);
    sp_Simulation_initialize(self, n);
    return self;
}

static double sp_Simulation_step(sp_Simulation *self, int64_t iters)
{
#line 29 "app.rb"
    for (int64_t _i1 = 0; _i1 < iters; _i1++) {
#line 30 "app.rb"
        int64_t i = 0;
#line 31 "app.rb"
        while (i < self->n) {
#line 32 "app.rb"
            sp_FloatArray_aset(self->vs, i, sp_FloatArray_aref(self->vs, i) - 0.001 * sp_FloatArray_aref(self->xs, i));
#line 33 "app.rb"
            sp_FloatArray_aset(self->xs, i, sp_FloatArray_aref(self->xs, i) + 0.001 * sp_FloatArray_aref(self->vs, i));
#line 34 "app.rb"
            i += 1;
        }
    }
#line 37 "app.rb"
    return sp_FloatArray_aref(self->xs, 0);
}

static inline void sp_Indexer_initialize(sp_Indexer *self)
{
#line 43 "app.rb"
    self->words = 0;
}

static sp_Indexer *sp_Indexer_new(void)
{
    sp_Indexer *self = sp_gc_alloc(sizeof(sp_Indexer), SP_T_OBJECT, NULL);
    sp_Indexer_initialize(self);
    return self;
}

static int64_t sp_Indexer_tokenize(sp_Indexer *self, sp_String *line, int64_t reps)
{
#line 48 "app.rb"
    int64_t total = 0;
#line 49 "app.rb"
    for (int64_t _i1 = 0; _i1 < reps; _i1++) {
#line 50 "app.rb"
        sp_StrArray *SP_ROOTED words = NULL;
#line 50 "app.rb"
        _sp_gc_root_push((void **)&words);
#line 50 "app.rb"
        words = sp_String_split(line, ' ');
#line 51 "app.rb"
        for (int64_t _i2 = 0; _i2 < words->len; _i2++) {
#line 51 "app.rb"
            sp_String *w = words->data[_i2];
#line 51 "app.rb"
            sp_String *SP_ROOTED _t1 = NULL;
#line 51 "app.rb"
            _sp_gc_root_push((void **)&_t1);
#line 51 "app.rb"
            _t1 = sp_String_upcase(w);
#line 51 "app.rb"
            total += _t1->len;
        }
    }
#line 53 "app.rb"
    self->words += total;
#line 54 "app.rb"
    return total;
}

static inline __attribute__((always_inline)) int64_t sp_Checksum_cls_fnv(int64_t seed, int64_t n)
{
#line 61 "app.rb"
    for (int64_t i = 0; i < n; i++)
#line 61 "app.rb"
        seed = ((seed ^ (i & 255)) * 16777619) & 0xffffffff;
#line 62 "app.rb"
    return seed;
}

static inline void sp_Verifier_initialize(sp_Verifier *self, sp_IntQueue *jobs, sp_IntQueue *results)
{
#line 68 "app.rb"
    self->jobs = jobs;
#line 69 "app.rb"
    self->results = results;
}

static sp_Verifier *sp_Verifier_new(sp_IntQueue *jobs, sp_IntQueue *results)
{
    sp_Verifier *self = sp_gc_alloc(sizeof(sp_Verifier), SP_T_OBJECT, sp_Verifier_gc_scan);
    sp_Verifier_initialize(self, jobs, results);
    return self;
}

static void sp_Verifier_drain(sp_Verifier *self)
{
    int64_t n;
#line 74 "app.rb"
    while ((n = sp_IntQueue_pop(self->jobs)) > 0) {
#line 75 "app.rb"
        int64_t t0 = sp_cpu_ns();
#line 76 "app.rb"
        int64_t sum = sp_Checksum_cls_fnv(n, n * 1000);
#line 77 "app.rb"
        sp_IntQueue_push(self->results, sum);
#line 78 "app.rb"
        sp_IntQueue_push(self->results, sp_cpu_ns() - t0);
    }
#line 80 "app.rb"
    sp_IntQueue_push(self->results, sp_cpu_ns());
}

static void sp_Pipeline_initialize(sp_Pipeline *self, int64_t budget_ns)
{
#line 86 "app.rb"
    self->budget_ns = budget_ns;
#line 87 "app.rb"
    self->sim = sp_Simulation_new(2000);
#line 88 "app.rb"
    self->idx = sp_Indexer_new();
#line 89 "app.rb"
    self->cpu_sim = 0;
#line 90 "app.rb"
    self->cpu_tok = 0;
#line 91 "app.rb"
    self->cpu_sum = 0;
#line 92 "app.rb"
    self->check = 0;
}

static sp_Pipeline *sp_Pipeline_new(int64_t budget_ns)
{
    sp_Pipeline *SP_ROOTED self = NULL;
    _sp_gc_root_push((void **)&self);
    self = sp_gc_alloc(sizeof(sp_Pipeline), SP_T_OBJECT, sp_Pipeline_gc_scan);
    sp_Pipeline_initialize(self, budget_ns);
    return self;
}

/* Thread.new { verifier.drain } in Pipeline#run */
static void _sp_proc_fn_1(sp_Proc *_self)
{
#line 99 "app.rb"
    sp_Verifier_drain((sp_Verifier *)_self->env[0]);
}

static inline sp_String *sp_split_line(sp_String *name, int64_t ns, int64_t total_ns)
{
#line 134 "app.rb"
    return sp_String_format("method %s %lld %.2f\n", name->ptr, (long long)ns, 100.0 * (double)ns / (double)total_ns);
}

static void sp_Pipeline_report(sp_Pipeline *self, int64_t total_ns)
{
#line 119 "app.rb"
    sp_String *SP_ROOTED out = NULL;
#line 119 "app.rb"
    _sp_gc_root_push((void **)&out);
#line 119 "app.rb"
    out = sp_String_lit("sprof-example cpu split (thread CPU clock)\n");
#line 120 "app.rb"
    {
#line 120 "app.rb"
        sp_String *SP_ROOTED _t1 = NULL;
#line 120 "app.rb"
        _sp_gc_root_push((void **)&_t1);
#line 120 "app.rb"
        _t1 = sp_String_format("total_ns %lld\n", (long long)total_ns);
#line 120 "app.rb"
        out = sp_String_append(out, _t1);
    }
#line 121 "app.rb"
    {
#line 121 "app.rb"
        sp_String *SP_ROOTED _t2 = NULL;
#line 121 "app.rb"
        _sp_gc_root_push((void **)&_t2);
#line 121 "app.rb"
        _t2 = sp_String_lit("Simulation#step");
#line 121 "app.rb"
        sp_String *SP_ROOTED _t1 = NULL;
#line 121 "app.rb"
        _sp_gc_root_push((void **)&_t1);
#line 121 "app.rb"
        _t1 = sp_split_line(_t2, self->cpu_sim, total_ns);
#line 121 "app.rb"
        out = sp_String_append(out, _t1);
    }
#line 122 "app.rb"
    {
#line 122 "app.rb"
        sp_String *SP_ROOTED _t2 = NULL;
#line 122 "app.rb"
        _sp_gc_root_push((void **)&_t2);
#line 122 "app.rb"
        _t2 = sp_String_lit("Indexer#tokenize");
#line 122 "app.rb"
        sp_String *SP_ROOTED _t1 = NULL;
#line 122 "app.rb"
        _sp_gc_root_push((void **)&_t1);
#line 122 "app.rb"
        _t1 = sp_split_line(_t2, self->cpu_tok, total_ns);
#line 122 "app.rb"
        out = sp_String_append(out, _t1);
    }
#line 123 "app.rb"
    {
#line 123 "app.rb"
        sp_String *SP_ROOTED _t2 = NULL;
#line 123 "app.rb"
        _sp_gc_root_push((void **)&_t2);
#line 123 "app.rb"
        _t2 = sp_String_lit("Checksum.fnv");
#line 123 "app.rb"
        sp_String *SP_ROOTED _t1 = NULL;
#line 123 "app.rb"
        _sp_gc_root_push((void **)&_t1);
#line 123 "app.rb"
        _t1 = sp_split_line(_t2, self->cpu_sum, total_ns);
#line 123 "app.rb"
        out = sp_String_append(out, _t1);
    }
#line 124 "app.rb"
    sp_String *SP_ROOTED path = NULL;
#line 124 "app.rb"
    _sp_gc_root_push((void **)&path);
#line 124 "app.rb"
    path = sp_ENV_aref("SPROF_EXAMPLE_SPLIT");
#line 125 "app.rb"
    if (path) {
#line 126 "app.rb"
        sp_File_write(path, out);
    } else {
#line 128 "app.rb"
        sp_IO_print(stderr, out);
    }
}

static void sp_Pipeline_run(sp_Pipeline *self)
{
#line 96 "app.rb"
    sp_IntQueue *SP_ROOTED jobs = NULL;
#line 96 "app.rb"
    _sp_gc_root_push((void **)&jobs);
#line 96 "app.rb"
    jobs = sp_IntQueue_new();
#line 97 "app.rb"
    sp_IntQueue *SP_ROOTED results = NULL;
#line 97 "app.rb"
    _sp_gc_root_push((void **)&results);
#line 97 "app.rb"
    results = sp_IntQueue_new();
#line 98 "app.rb"
    sp_Verifier *SP_ROOTED verifier = NULL;
#line 98 "app.rb"
    _sp_gc_root_push((void **)&verifier);
#line 98 "app.rb"
    verifier = sp_Verifier_new(jobs, results);
#line 99 "app.rb"
    sp_Proc *SP_ROOTED _blk1 = NULL;
#line 99 "app.rb"
    _sp_gc_root_push((void **)&_blk1);
#line 99 "app.rb"
    _blk1 = sp_Proc_new(_sp_proc_fn_1);
#line 99 "app.rb"
    _blk1->env[0] = verifier;
#line 99 "app.rb"
    sp_Thread *SP_ROOTED worker = NULL;
#line 99 "app.rb"
    _sp_gc_root_push((void **)&worker);
#line 99 "app.rb"
    worker = sp_Thread_new(_blk1);
#line 100 "app.rb"
    while (self->cpu_sim + self->cpu_tok + self->cpu_sum < self->budget_ns) {
#line 101 "app.rb"
        int64_t t0 = sp_cpu_ns();
#line 102 "app.rb"
        sp_Simulation_step(self->sim, 7500);
#line 103 "app.rb"
        int64_t t1 = sp_cpu_ns();
#line 104 "app.rb"
        sp_Indexer_tokenize(self->idx, sp_const_LINE, 7500);
#line 105 "app.rb"
        int64_t t2 = sp_cpu_ns();
#line 106 "app.rb"
        self->cpu_sim += t1 - t0;
#line 107 "app.rb"
        self->cpu_tok += t2 - t1;
#line 108 "app.rb"
        sp_IntQueue_push(jobs, 4000);
#line 109 "app.rb"
        self->check ^= sp_IntQueue_pop(results);
#line 110 "app.rb"
        self->cpu_sum += sp_IntQueue_pop(results);
    }
#line 112 "app.rb"
    sp_IntQueue_push(jobs, 0);
#line 113 "app.rb"
    int64_t worker_cpu = sp_IntQueue_pop(results);
#line 114 "app.rb"
    sp_Thread_join(worker);
#line 115 "app.rb"
    sp_Pipeline_report(self, worker_cpu + sp_cpu_ns());
}

int main(int argc, char **argv)
{
    sp_runtime_init(argc, argv);
    _sp_gc_root_push((void **)&sp_const_LINE);
#line 14 "app.rb"
    sp_const_LINE = sp_String_lit("GET /api/items?id=42 200 0.013 Mozilla/5.0 (X11; Linux x86_64) gzip keep-alive");
#line 137 "app.rb"
    double seconds;
    {
#line 137 "app.rb"
        sp_String *SP_ROOTED _t1 = NULL;
#line 137 "app.rb"
        _sp_gc_root_push((void **)&_t1);
#line 137 "app.rb"
        _t1 = sp_ARGV_aref(0);
#line 137 "app.rb"
        if (!_t1)
#line 137 "app.rb"
            _t1 = sp_ENV_aref("SPROF_EXAMPLE_SECONDS");
#line 137 "app.rb"
        if (!_t1)
#line 137 "app.rb"
            _t1 = sp_String_lit("3");
#line 137 "app.rb"
        seconds = sp_String_to_f(_t1);
    }
#line 138 "app.rb"
    {
#line 138 "app.rb"
        sp_Pipeline *SP_ROOTED _t2 = NULL;
#line 138 "app.rb"
        _sp_gc_root_push((void **)&_t2);
#line 138 "app.rb"
        _t2 = sp_Pipeline_new((int64_t)(seconds * 1e9));
#line 138 "app.rb"
        sp_Pipeline_run(_t2);
    }
#line 138 "app.rb"
    return 0;
}
