/* Kernel-time samples (trace format 1.1) through the fixture symmap: the
 * synthetic leaves ([syscall write], [syscall], [page fault], [kernel])
 * under the user stack that entered the kernel, their class kernel in
 * --classes output, top's split and a folded round trip, no line with
 * --lines, SYSCALL_SKID samples charged to the caller, 1.0 (64-byte) and
 * 1.1 STATS, and the accounting warnings firing and not firing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_symmap.h"
#include "fold_check.h"
#include "folded_text.h"
#include "sprof/accounting.h"
#include "sprof/profile.h"
#include "sprof/symmap_writer.h"
#include "sprof/top.h"
#include "sprof/trace_reader.h"
#include "trace_builder.h"

#define LOAD 0x555555554000ull
#define SP 0x7ffd00010000ull
#define START 1000000000ull
#define MS 1000000ull

static char dir[64];

static const uint64_t ret_main[1] = { LOAD + 0x1310 };
static const uint32_t off[1] = { 0x40 };

/* n samples with these flags in the inlined Baz#qux of Foo#bar, called from main */
static void in_qux(trace_builder *b, uint32_t flags, int n)
{
    for (int i = 0; i < n; i++)
        tb_sample(b, 100, flags, START + (uint64_t)i * MS, MS, LOAD + 0x1115, SP, SP + 0x40, 0x40, ret_main, off,
                  1, NULL, NULL, 0);
}

static void write_kernel_trace(const char *path, const struct sprof_rec_stats *st, uint32_t stats_size)
{
    trace_builder b;
    if (tb_open(&b, path) != 0) {
        perror(path);
        exit(1);
    }
    const uint8_t id[4] = { FIXTURE_BUILD_ID };
    tb_info(&b, SPROF_MODE_CPU, 1000, START, FIXTURE_BINARY);
    tb_mapping(&b, LOAD + 0x1000, LOAD + 0x11000, 0x1000, id, 4, FIXTURE_BINARY);
    in_qux(&b, 0, 100);                                            /* user time */
    in_qux(&b, tb_syscall_flags(1), 50);                           /* write(2) */
    in_qux(&b, tb_syscall_flags(-1), 10);                          /* number not known */
    in_qux(&b, tb_syscall_flags(4000), 5);                         /* beyond the table */
    in_qux(&b, SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_SYSCALL | 0xfff0000u, 2); /* the largest field */
    in_qux(&b, SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_PAGE_FAULT, 7);
    in_qux(&b, SPROF_SAMPLE_KERNEL, 3);
    /* skid in Foo#bar (with inlined Baz#qux at that pc): charged to main */
    in_qux(&b, SPROF_SAMPLE_SYSCALL_SKID, 30);
    /* skid in the frameless leaf Foo#leaf: charged to its caller Baz#qux
     * (the return address found among the candidates) */
    uint32_t coff[1] = { 0 };
    uint64_t cval[1] = { LOAD + 0x1130 };
    for (int i = 0; i < 20; i++)
        tb_sample(&b, 100, SPROF_SAMPLE_SYSCALL_SKID, START + (uint64_t)i * MS, MS, LOAD + 0x1510, SP, SP + 0x40,
                  0x40, ret_main, off, 1, coff, cval, 1);
    /* skid in main with nothing above it: the stack would be empty, kept */
    for (int i = 0; i < 4; i++)
        tb_sample(&b, 100, SPROF_SAMPLE_SYSCALL_SKID, START + (uint64_t)i * MS, MS, LOAD + 0x1315, SP, 0,
                  SPROF_FPOFF_UNKNOWN, NULL, NULL, 0, NULL, NULL, 0);
    if (st)
        tb_stats_record(&b, st, stats_size);
    if (tb_close(&b, 0) != 0) {
        perror(path);
        exit(1);
    }
}

static int load(sprof_profile *p, const char *trace, const char *symmap, char *err, size_t errlen)
{
    sprof_profile_init(p);
    const char *one[1] = { trace };
    return sprof_profile_add_traces(p, one, 1, symmap, NULL, err, errlen);
}


static void check_stacks(const char *trace, const char *symmap)
{
    char err[512] = "";
    sprof_profile p;
    CHECK(load(&p, trace, symmap, err, sizeof err) == 0, "load: %s", err);
    sprof_fold_format plain = { 0 };
    char *out = folded_text(&p, &plain);
    /* the 30 skidded in Foo#bar lose it and its inlined Baz#qux; + 4 kept */
    const char *want = "main 34\n"
                       "main;Foo#bar;Baz#qux 120\n"
                       "main;Foo#bar;Baz#qux;[kernel] 3\n"
                       "main;Foo#bar;Baz#qux;[page fault] 7\n"
                       "main;Foo#bar;Baz#qux;[syscall write] 50\n"
                       "main;Foo#bar;Baz#qux;[syscall] 17\n";
    CHECK(out && strcmp(out, want) == 0, "kernel leaves and skid drops:\n%s", out ? out : "");
    free(out);

    sprof_fold_format classes = { .classes = 1 };
    out = folded_text(&p, &classes);
    CHECK(out && strstr(out, "main_[n];Foo#bar_[u];Baz#qux_[u];[syscall write]_[k] 50\n") &&
              strstr(out, "main_[n];Foo#bar_[u];Baz#qux_[u];[page fault]_[k] 7\n"),
          "--classes:\n%s", out ? out : "");
    /* read back: the suffix and, without it, the name give class kernel */
    sprof_profile q;
    sprof_profile_init(&q);
    FILE *f = fmemopen(out, strlen(out), "r");
    CHECK(sprof_profile_add_folded_stream(&q, f, "classes.folded", err, sizeof err) == 0, "read back: %s", err);
    fclose(f);
    char *again = folded_text(&q, &classes);
    CHECK(again && strcmp(again, out) == 0, "--classes round trip:\n%s\nvs\n%s", again ? again : "", out);
    free(again);
    sprof_profile_free(&q);
    free(out);
    out = folded_text(&p, &plain);
    sprof_profile_init(&q);
    f = fmemopen(out, strlen(out), "r");
    CHECK(sprof_profile_add_folded_stream(&q, f, "plain.folded", err, sizeof err) == 0, "read back: %s", err);
    fclose(f);
    again = folded_text(&q, &classes);
    CHECK(again && strstr(again, "Baz#qux_[n];[syscall write]_[k] 50\n") && strstr(again, "Baz#qux_[n];[kernel]_[k] 3\n"),
          "kernel leaves known by name:\n%s", again ? again : "");
    free(again);
    sprof_profile_free(&q);
    free(out);

    sprof_fold_format lines = { .lines = 1, .c_names = 1 };
    out = folded_text(&p, &lines);
    CHECK(out && strstr(out, "main;sp_Foo_bar:12;sp_Baz_qux:3;[syscall write] 50\n"), "--lines --c-names:\n%s",
          out ? out : "");
    free(out);

    /* top: the kernel leaves' samples are the kernel class */
    sprof_top_options to;
    memset(&to, 0, sizeof to);
    sprof_top t;
    CHECK(sprof_top_build(&t, &p, &to, err, sizeof err) == 0, "top: %s", err);
    CHECK(t.class_self[SPROF_COST_KERNEL] == 77 && t.class_self[SPROF_COST_USER] == 120 &&
              t.class_self[SPROF_COST_NATIVE] == 34,
          "top split: kernel %llu user %llu native %llu", (unsigned long long)t.class_self[SPROF_COST_KERNEL],
          (unsigned long long)t.class_self[SPROF_COST_USER], (unsigned long long)t.class_self[SPROF_COST_NATIVE]);
    char *buf = NULL;
    size_t len = 0;
    f = open_memstream(&buf, &len);
    sprof_top_write_text(&t, &to, f);
    fclose(f);
    CHECK(buf && strstr(buf, "kernel 33.33%"), "top's By class line:\n%s", buf ? buf : "");
    free(buf);
    sprof_top_free(&t);
    sprof_profile_free(&p);
}

static void check_stats_sizes(const char *symmap)
{
    char path[128], err[512] = "";
    snprintf(path, sizeof path, "%s/stats.trace", dir);
    struct sprof_rec_stats st;
    memset(&st, 0, sizeof st);
    st.samples_written = 231;
    st.cpu_ns_total = 231 * MS;
    st.threads_seen = 1;
    st.achieved_millihz = 1000000;
    st.user_cpu_ns = 150 * MS;
    st.system_cpu_ns = 81 * MS;
    st.weight_ns_total = 231 * MS;
    st.kernel_weight_ns = 77 * MS;
    st.kernel_sampling = SPROF_KSAMPLE_TICK;
    st.kernel_hz = 250;
    st.own_cpu_ns = 9 * MS;

    /* 1.0: 64 bytes; the 1.1 fields read as 0 */
    write_kernel_trace(path, &st, SPROF_REC_STATS_V1_SIZE);
    sprof_profile p;
    CHECK(load(&p, path, symmap, err, sizeof err) == 0, "64-byte STATS: %s", err);
    CHECK(p.ntraces == 1 && p.traces[0].have_stats && p.traces[0].cpu_ns_total == 231 * MS &&
              p.traces[0].user_cpu_ns == 0 && p.traces[0].kernel_sampling == 0 && p.traces[0].kernel_hz == 0 &&
              p.traces[0].own_cpu_ns == 0,
          "64-byte STATS figures");
    sprof_profile_free(&p);

    /* 1.1: 104 bytes; own_cpu_ns (1.2) reads as 0 */
    write_kernel_trace(path, &st, SPROF_REC_STATS_V11_SIZE);
    CHECK(load(&p, path, symmap, err, sizeof err) == 0, "104-byte STATS: %s", err);
    CHECK(p.ntraces == 1 && p.traces[0].kernel_hz == 250 && p.traces[0].own_cpu_ns == 0, "104-byte STATS figures");
    sprof_profile_free(&p);

    /* 1.2, and a longer one from a future writer */
    uint32_t sizes[2] = { sizeof st, sizeof st + 16 };
    for (int i = 0; i < 2; i++) {
        write_kernel_trace(path, &st, sizes[i]);
        CHECK(load(&p, path, symmap, err, sizeof err) == 0, "%u-byte STATS: %s", sizes[i], err);
        CHECK(p.ntraces == 1 && p.traces[0].user_cpu_ns == 150 * MS && p.traces[0].system_cpu_ns == 81 * MS &&
                  p.traces[0].kernel_weight_ns == 77 * MS && p.traces[0].kernel_sampling == SPROF_KSAMPLE_TICK &&
                  p.traces[0].kernel_hz == 250 && p.traces[0].read_kernel_weight_ns == 77 * MS &&
                  p.traces[0].own_cpu_ns == 9 * MS,
              "%u-byte STATS figures", sizes[i]);
        sprof_profile_free(&p);
    }

    /* shorter than 1.0: the existing error */
    write_kernel_trace(path, &st, 56);
    err[0] = '\0';
    CHECK(load(&p, path, symmap, err, sizeof err) != 0 && strstr(err, "STATS record too short (56 bytes)"),
          "56-byte STATS: %s", err);
    sprof_profile_free(&p);
    unlink(path);
}

/* A 1 s, 1 kHz, one-thread cpu-mode recording that is accurate. */
static sprof_trace_accounting good_recording(void)
{
    sprof_trace_accounting a;
    memset(&a, 0, sizeof a);
    a.path = (char *)"t.trace";
    a.mode = SPROF_MODE_CPU;
    a.mechanism = SPROF_MECH_CPUCLOCK_PACED;
    a.hz = 1000;
    a.have_stats = 1;
    a.cpu_ns_total = 1000 * MS;
    a.user_cpu_ns = 900 * MS;
    a.system_cpu_ns = 100 * MS;
    a.weight_ns_total = 999 * MS;
    a.read_weight_ns = 999 * MS;
    a.achieved_millihz = 999000;
    a.threads_seen = 1;
    a.kernel_sampling = SPROF_KSAMPLE_PERF;
    return a;
}

static int fires(const sprof_trace_accounting *a, enum sprof_accounting_warning w, char *buf, size_t len)
{
    buf[0] = '\0';
    return sprof_accounting_warning(a, w, buf, len);
}

static void check_warnings(void)
{
    char msg[1600];
    sprof_trace_accounting a = good_recording();
    for (int w = 0; w < SPROF_WARN_COUNT; w++)
        CHECK(!fires(&a, (enum sprof_accounting_warning)w, msg, sizeof msg), "good recording, warning %d: %s", w,
              msg);

    /* (a) weights cover 80 % of user + system */
    a = good_recording();
    a.weight_ns_total = 800 * MS;
    a.samples_dropped = 12;
    CHECK(fires(&a, SPROF_WARN_COVERAGE, msg, sizeof msg) && strstr(msg, "t.trace: ") && strstr(msg, "80.0%") &&
              strstr(msg, "0.800 s of 1.000 s") && strstr(msg, "12 dropped") && strstr(msg, "SPROF_HZ"),
          "coverage warning: %s", msg);
    /* ... falls back to cpu_ns_total and the weights read when 1.1 figures are missing */
    a = good_recording();
    a.user_cpu_ns = a.system_cpu_ns = a.weight_ns_total = 0;
    a.read_weight_ns = 900 * MS;
    CHECK(fires(&a, SPROF_WARN_COVERAGE, msg, sizeof msg) && strstr(msg, "90.0%"), "coverage, 1.0 trace: %s", msg);
    a.read_weight_ns = 960 * MS;
    CHECK(!fires(&a, SPROF_WARN_COVERAGE, msg, sizeof msg), "96%% coverage warned: %s", msg);
    /* a short run's missing time is its threads' last periods: no warning */
    a = good_recording();
    a.cpu_ns_total = a.user_cpu_ns = 20 * MS;
    a.system_cpu_ns = 0;
    a.weight_ns_total = 17 * MS;
    a.threads_seen = 4;
    CHECK(!fires(&a, SPROF_WARN_COVERAGE, msg, sizeof msg), "short run warned: %s", msg);
    /* wall-mode weights are wall time */
    a = good_recording();
    a.mode = SPROF_MODE_WALL;
    a.weight_ns_total = 100 * MS;
    CHECK(!fires(&a, SPROF_WARN_COVERAGE, msg, sizeof msg), "wall mode coverage warned: %s", msg);

    /* (b) 800 of 1000 Hz delivered */
    a = good_recording();
    a.achieved_millihz = 800000;
    CHECK(fires(&a, SPROF_WARN_RATE, msg, sizeof msg) && strstr(msg, "800.0 samples per CPU second") &&
              strstr(msg, "1000 asked") && strstr(msg, "80.0%") && strstr(msg, "overloaded"),
          "rate warning: %s", msg);
    a.achieved_millihz = 950000;
    CHECK(!fires(&a, SPROF_WARN_RATE, msg, sizeof msg), "95%% rate warned: %s", msg);
    a.achieved_millihz = 250000;
    a.mechanism = SPROF_MECH_POSIX_TIMER;
    CHECK(fires(&a, SPROF_WARN_RATE, msg, sizeof msg) && strstr(msg, "kernel tick"), "tick timer: %s", msg);
    a.mode = SPROF_MODE_WALL;
    CHECK(!fires(&a, SPROF_WARN_RATE, msg, sizeof msg), "wall mode rate warned: %s", msg);
    /* user-only perf sampling with much kernel time: the advice says why */
    a = good_recording();
    a.mechanism = SPROF_MECH_PERF_EVENT;
    a.achieved_millihz = 800000;
    a.kernel_sampling = SPROF_KSAMPLE_NONE;
    CHECK(fires(&a, SPROF_WARN_RATE, msg, sizeof msg) && strstr(msg, "kernel sampling on") &&
              !strstr(msg, "overloaded"),
          "rate warning with unsampled kernel time: %s", msg);

    /* (c) kernel time not sampled, 10 % system */
    a = good_recording();
    a.kernel_sampling = SPROF_KSAMPLE_NONE;
    CHECK(fires(&a, SPROF_WARN_KERNEL_UNSAMPLED, msg, sizeof msg) &&
              strstr(msg, "kernel time is not sampled: it is charged to the next user-mode sample") &&
              strstr(msg, "0.100 s system CPU") && strstr(msg, "10.0%"),
          "kernel warning: %s", msg);
    a.system_cpu_ns = 40 * MS;
    a.user_cpu_ns = 960 * MS;
    CHECK(!fires(&a, SPROF_WARN_KERNEL_UNSAMPLED, msg, sizeof msg), "4%% system warned: %s", msg);
    a = good_recording();
    a.kernel_sampling = SPROF_KSAMPLE_NONE;
    a.user_cpu_ns = a.system_cpu_ns = 0; /* a 1.0 trace: not known */
    CHECK(!fires(&a, SPROF_WARN_KERNEL_UNSAMPLED, msg, sizeof msg), "1.0 trace kernel-warned: %s", msg);

    /* (d) kernel time drawn at the tick only, 40 % system */
    a = good_recording();
    a.mechanism = SPROF_MECH_PERF_EVENT;
    a.kernel_sampling = SPROF_KSAMPLE_TICK;
    a.kernel_hz = 250;
    a.user_cpu_ns = 600 * MS;
    a.system_cpu_ns = 400 * MS;
    CHECK(fires(&a, SPROF_WARN_KERNEL_TICK, msg, sizeof msg) && strstr(msg, "t.trace: kernel time (40.0%") &&
              strstr(msg, "250 per kernel CPU second, not the 1000 asked") && strstr(msg, "3.1 pp") &&
              strstr(msg, "SPROF_TIMER=cpuclock"),
          "tick kernel warning: %s", msg);
    /* the fallback itself with remote signals: says why, not "use cpuclock" */
    a.mechanism = SPROF_MECH_CPUCLOCK_PACED;
    CHECK(fires(&a, SPROF_WARN_KERNEL_TICK, msg, sizeof msg) && strstr(msg, "a real-time thread") &&
              !strstr(msg, "SPROF_TIMER=cpuclock"),
          "tick kernel warning, cpuclock: %s", msg);
    a.system_cpu_ns = 80 * MS;
    a.user_cpu_ns = 920 * MS;
    CHECK(!fires(&a, SPROF_WARN_KERNEL_TICK, msg, sizeof msg), "8%% system tick-warned: %s", msg);
    a.system_cpu_ns = 400 * MS;
    a.user_cpu_ns = 600 * MS;
    a.kernel_sampling = SPROF_KSAMPLE_PACER;
    CHECK(!fires(&a, SPROF_WARN_KERNEL_TICK, msg, sizeof msg), "pacer tick-warned: %s", msg);
    a.kernel_sampling = SPROF_KSAMPLE_TICK;
    a.kernel_hz = 1000;
    CHECK(!fires(&a, SPROF_WARN_KERNEL_TICK, msg, sizeof msg), "1000 Hz tick warned: %s", msg);

    /* no STATS at all (killed early): nothing to tell */
    a = good_recording();
    a.have_stats = 0;
    a.weight_ns_total = 0;
    a.kernel_sampling = SPROF_KSAMPLE_NONE;
    for (int w = 0; w < SPROF_WARN_COUNT; w++)
        CHECK(!fires(&a, (enum sprof_accounting_warning)w, msg, sizeof msg), "no STATS, warning %d: %s", w, msg);

    /* hostile figures: overflowing sums, zero hz */
    a = good_recording();
    a.user_cpu_ns = UINT64_MAX;
    a.hz = 0;
    for (int w = 0; w < SPROF_WARN_COUNT; w++)
        fires(&a, (enum sprof_accounting_warning)w, msg, sizeof msg);

    /* printed once per trace, with the tool's name */
    sprof_profile p;
    sprof_profile_init(&p);
    sprof_trace_accounting two[2] = { good_recording(), good_recording() };
    two[1].path = (char *)"bad.trace";
    two[1].achieved_millihz = 500000;
    two[1].kernel_sampling = SPROF_KSAMPLE_NONE;
    p.traces = two;
    p.ntraces = 2;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    size_t n = sprof_accounting_print(f, "sprof-x", &p);
    fclose(f);
    CHECK(n == 2 && buf && strstr(buf, "sprof-x: warning: bad.trace: 500.0 samples") &&
              strstr(buf, "sprof-x: warning: bad.trace: kernel time is not sampled") && !strstr(buf, "t.trace"),
          "printed warnings (%zu):\n%s", n, buf ? buf : "");
    free(buf);
    p.traces = NULL;
    p.ntraces = 0;
    sprof_profile_free(&p);
}

static void check_names(void)
{
    char buf[64];
    CHECK(!sprof_kernel_leaf_name(0, buf, sizeof buf), "user sample named");
    CHECK(strcmp(sprof_kernel_leaf_name(tb_syscall_flags(0), buf, sizeof buf), "[syscall read]") == 0, "%s", buf);
    CHECK(strcmp(sprof_kernel_leaf_name(tb_syscall_flags(231), buf, sizeof buf), "[syscall exit_group]") == 0,
          "%s", buf);
    CHECK(strcmp(sprof_kernel_leaf_name(tb_syscall_flags(4094), buf, sizeof buf), "[syscall]") == 0, "%s", buf);
    CHECK(strcmp(sprof_kernel_leaf_name(SPROF_SAMPLE_KERNEL | SPROF_SAMPLE_PAGE_FAULT, buf, sizeof buf),
                 "[page fault]") == 0, "%s", buf);
    CHECK(!sprof_syscall_name(-5) && !sprof_syscall_name(1 << 20) && !sprof_syscall_name(-2147483647 - 1),
          "out-of-range syscall numbers named");
    CHECK(strcmp(sprof_cost_name(SPROF_COST_KERNEL), "kernel") == 0, "cost name");

    /* a symmap can never carry the kernel class */
    sprof_symmap_writer *w = sprof_symmap_writer_new();
    sprof_symmap_names k = { "f", "f", "", 0, SPROF_KIND_NATIVE, SPROF_COST_KERNEL, 0 };
    CHECK(sprof_symmap_writer_add_function(w, 0x1000, 0x1010, &k) < 0, "writer took the kernel class");
    sprof_symmap_writer_free(w);
}

/* The symmap reader rejects the kernel class from a file: Foo#bar's
 * function record (lo 0x1100, hi 0x1200, then four u32 string refs and
 * def_line, kind, cost; docs/symmap-format.md) with cost 4. */
static void check_symmap_rejects_kernel(const char *symmap)
{
    FILE *f = fopen(symmap, "rb");
    static uint8_t bytes[1 << 16] __attribute__((aligned(8)));
    size_t size = f ? fread(bytes, 1, sizeof bytes, f) : 0;
    if (f)
        fclose(f);
    const uint64_t want[2] = { 0x1100, 0x1200 };
    size_t at = 0;
    for (size_t o = 0; o + 40 <= size && !at; o += 8)
        if (memcmp(bytes + o, want, sizeof want) == 0)
            at = o;
    CHECK(at > 0 && bytes[at + 33] == SPROF_COST_USER, "Foo#bar's record not found");
    if (!at)
        return;
    char err[256] = "";
    sprof_symmap *m = sprof_symmap_open_mem(bytes, size, "k.symmap", err, sizeof err);
    CHECK(m != NULL, "unmodified copy refused: %s", err);
    sprof_symmap_close(m);
    bytes[at + 33] = SPROF_COST_KERNEL;
    m = sprof_symmap_open_mem(bytes, size, "k.symmap", err, sizeof err);
    CHECK(!m && strstr(err, "cost 4"), "kernel class accepted from a file: %s", err);
    sprof_symmap_close(m);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/sprof-kernel-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char symmap[128], trace[128];
    snprintf(symmap, sizeof symmap, "%s/app.symmap", dir);
    snprintf(trace, sizeof trace, "%s/kernel.trace", dir);
    fixture_symmap_write(symmap);
    write_kernel_trace(trace, NULL, 0);

    check_names();
    check_symmap_rejects_kernel(symmap);
    check_stacks(trace, symmap);
    check_stats_sizes(symmap);
    check_warnings();

    unlink(trace);
    unlink(symmap);
    rmdir(dir);
    return check_report("test_kernel");
}
