#define _GNU_SOURCE
/* Environment → sampler settings. secure_getenv: a setuid/setgid process
 * ignores every variable and runs unprofiled. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

void sprof_warn(const char *fmt, ...)
{
    /* Only called outside signal handlers: vsnprintf + one write(2). */
    char buf[512];
    int n = snprintf(buf, sizeof buf, "sprof: ");
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2) n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

/* Error and signal descriptions for messages, safe on sprof's own threads
 * (rt_internal.h, at sprof_own_thread_create): strerror and strsignal
 * translate through gettext, which may allocate, and strsignal allocates
 * for real-time signals. glibc >= 2.32's strerrordesc_np and sigdescr_np
 * return static English text; they are looked up before the runtime
 * starts, not linked (older glibc: the number alone). */
typedef const char *(*describe_fn)(int);
static describe_fn errno_desc, signal_desc;

__attribute__((constructor(101))) static void resolve_descriptions(void)
{
    errno_desc = (describe_fn)dlsym(RTLD_DEFAULT, "strerrordesc_np");
    signal_desc = (describe_fn)dlsym(RTLD_DEFAULT, "sigdescr_np");
}

static const char *describe(describe_fn f, const char *what, int n, char *buf, size_t len)
{
    const char *d = f ? f(n) : NULL;
    if (d) return d;
    snprintf(buf, len, "%s %d", what, n);
    return buf;
}

const char *sprof_errno_text(int err, char *buf, size_t len) { return describe(errno_desc, "errno", err, buf, len); }

const char *sprof_signal_text(int sig, char *buf, size_t len) { return describe(signal_desc, "signal", sig, buf, len); }

static long parse_num(const char *name, const char *s, long lo, long hi, long dflt)
{
    if (!s || !*s) return dflt;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        sprof_warn("%s=%s is not a number in %ld..%ld; using %ld", name, s, lo, hi, dflt);
        return dflt;
    }
    return v;
}

void sprof_expand_path(const char *pattern, pid_t pid, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < outlen; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            char num[24];
            int n = snprintf(num, sizeof num, "%d", (int)pid);
            for (int i = 0; i < n && o + 1 < outlen; i++) out[o++] = num[i];
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

static const char *exe_basename(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0) return "program";
    buf[n] = 0;
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

int sprof_config_load(struct sprof_config *c)
{
    memset(c, 0, sizeof *c);
    const char *out = secure_getenv("SPROF_OUT");
    const char *sp = secure_getenv("SPINEL_PROFILE");
    if (out && *out) {
        snprintf(c->pattern, sizeof c->pattern, "%s", out);
    } else if (sp && *sp && strcmp(sp, "0") != 0) {
        char exe[1024];
        snprintf(c->pattern, sizeof c->pattern, "./%s.trace", exe_basename(exe, sizeof exe));
    } else {
        return 0;
    }
    c->path_has_pid = strstr(c->pattern, "%p") != NULL;
    sprof_expand_path(c->pattern, getpid(), c->out_path, sizeof c->out_path);
    c->hz = (uint32_t)parse_num("SPROF_HZ", secure_getenv("SPROF_HZ"), 1, 100000, 1000);
    c->max_depth = (uint32_t)parse_num("SPROF_MAX_DEPTH", secure_getenv("SPROF_MAX_DEPTH"), 1, 512, 256);
    c->perf_stack = (uint32_t)parse_num("SPROF_PERF_STACK", secure_getenv("SPROF_PERF_STACK"), 256, SPROF_PERF_STACK_MAX,
                                        SPROF_PERF_STACK_DEFAULT) & ~7u;
    c->perf_assist = parse_num("SPROF_PERF_ASSIST", secure_getenv("SPROF_PERF_ASSIST"), 0, 1, 1) == 1;
    c->perf_phase = parse_num("SPROF_PERF_PHASE", secure_getenv("SPROF_PERF_PHASE"), 0, 1, 1) == 1;
    c->overwrite = parse_num("SPROF_OVERWRITE", secure_getenv("SPROF_OVERWRITE"), 0, 1, 0) == 1;
    const char *quiet = secure_getenv("SPROF_QUIET");
    c->quiet = quiet && *quiet && strcmp(quiet, "0") != 0;
    const char *mode = secure_getenv("SPROF_MODE");
    c->mode = SPROF_MODE_CPU;
    if (mode && *mode) {
        if (!strcmp(mode, "wall")) c->mode = SPROF_MODE_WALL;
        else if (strcmp(mode, "cpu") != 0) sprof_warn("SPROF_MODE=%s unknown (cpu|wall); using cpu", mode);
    }
    const char *timer = secure_getenv("SPROF_TIMER");
    if (timer && *timer) {
        if (!strcmp(timer, "perf_event") || !strcmp(timer, "perf")) c->forced_mech = SPROF_MECH_PERF_EVENT;
        else if (!strcmp(timer, "cpuclock") || !strcmp(timer, "cpuclock_paced")) c->forced_mech = SPROF_MECH_CPUCLOCK_PACED;
        else if (!strcmp(timer, "posix_timer")) c->forced_mech = SPROF_MECH_POSIX_TIMER;
        else if (!strcmp(timer, "itimer")) c->forced_mech = SPROF_MECH_ITIMER;
        else sprof_warn("SPROF_TIMER=%s unknown (perf_event|cpuclock|posix_timer|itimer); choosing", timer);
    }
    const char *kernel = secure_getenv("SPROF_KERNEL");
    c->kernel = SPROF_KERNEL_AUTO;
    if (kernel && *kernel) {
        if (!strcmp(kernel, "perf") || !strcmp(kernel, "perf_event")) c->kernel = SPROF_KERNEL_PERF;
        else if (!strcmp(kernel, "tick")) c->kernel = SPROF_KERNEL_TICK;
        else if (!strcmp(kernel, "off") || !strcmp(kernel, "0")) c->kernel = SPROF_KERNEL_OFF;
        else if (strcmp(kernel, "auto") != 0) sprof_warn("SPROF_KERNEL=%s unknown (auto|perf|tick|off); using auto", kernel);
    }
    const char *pacer = secure_getenv("SPROF_PACER");
    c->pacer_remote = 0;
    if (pacer && *pacer) {
        if (!strcmp(pacer, "remote")) c->pacer_remote = 1;
        else if (strcmp(pacer, "local") != 0) sprof_warn("SPROF_PACER=%s unknown (local|remote); using local", pacer);
    }
    const char *writer = secure_getenv("SPROF_WRITER");
    c->writer_remote = 0;
    if (writer && *writer) {
        if (!strcmp(writer, "remote")) c->writer_remote = 1;
        else if (strcmp(writer, "local") != 0) sprof_warn("SPROF_WRITER=%s unknown (local|remote); using local", writer);
    }
    sprof_control_config(c);
    sprof_rotate_config(c);
    c->enabled = 1;
    return 1;
}
