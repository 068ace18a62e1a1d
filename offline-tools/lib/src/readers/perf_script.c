/* `perf script` text -> profile stacks. See sprof/perf_script.h and
 * docs/perf-script.md for the accepted shapes and the naming rules.
 *
 * A sample is a header line ("comm pid[/tid] [cpu] [time:] [period] event:
 * [ip sym+off (dso)]") followed, with call chains, by one indented frame
 * line per frame (leaf first) and a blank line. Without call chains the
 * header carries the only frame and no blank line follows. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf_script_internal.h"
#include "sprof/perf_script.h"

/* ---- small string helpers ------------------------------------------------ */

typedef struct span {
    const char *s;
    size_t n;
} span;

static int span_eq(span a, const char *lit)
{
    size_t n = strlen(lit);
    return a.n == n && memcmp(a.s, lit, n) == 0;
}

static int is_ws(char c) { return c == ' ' || c == '\t'; }

static int all_digits(span t)
{
    if (t.n == 0)
        return 0;
    for (size_t i = 0; i < t.n; i++)
        if (!isdigit((unsigned char)t.s[i]))
            return 0;
    return 1;
}

/* Decimal digits -> u64; -1 on overflow or a non-digit. */
static int parse_u64(span t, uint64_t *v)
{
    if (!all_digits(t))
        return -1;
    uint64_t x = 0;
    for (size_t i = 0; i < t.n; i++) {
        unsigned d = (unsigned)(t.s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

/* Hex digits (no 0x) -> u64; -1 if empty, too long or not hex. */
static int parse_hex(span t, uint64_t *v) { return sprof_text_hex(t.s, t.n, v); }

/* ---- header lines ---------------------------------------------------------- */

#define MAX_TOKENS 48

typedef struct perf_header {
    span comm;          /* as written (may contain spaces) */
    uint32_t pid, tid;
    int has_pid;        /* "pid/tid" form; else the number is the tid */
    uint64_t period;    /* 0 if absent */
    span event;         /* without the trailing ':'; n = 0 if absent */
    span rest;          /* text after the event (one-line samples: the frame) */
} perf_header;

static size_t tokenize(const char *s, size_t len, span *tok, size_t max)
{
    size_t n = 0, i = 0;
    while (i < len && n < max) {
        while (i < len && is_ws(s[i]))
            i++;
        if (i >= len)
            break;
        size_t b = i;
        while (i < len && !is_ws(s[i]))
            i++;
        tok[n++] = (span){ s + b, i - b };
    }
    return n;
}

static int ends_colon(span t) { return t.n >= 2 && t.s[t.n - 1] == ':'; }

/* "123.456789:" (or "123:") */
static int is_time_token(span t)
{
    if (!ends_colon(t))
        return 0;
    size_t i = 0, digits = 0, dots = 0;
    for (; i + 1 < t.n; i++) {
        if (isdigit((unsigned char)t.s[i]))
            digits++;
        else if (t.s[i] == '.' && dots == 0 && digits > 0)
            dots++;
        else
            return 0;
    }
    return digits > 0 && t.s[t.n - 2] != '.';
}

/* "[003]" */
static int is_cpu_token(span t)
{
    if (t.n < 3 || t.s[0] != '[' || t.s[t.n - 1] != ']')
        return 0;
    return all_digits((span){ t.s + 1, t.n - 2 });
}

/* "pid" or "pid/tid", both fitting u32. */
static int parse_pid_token(span t, uint32_t *a, uint32_t *b, int *two)
{
    const char *slash = memchr(t.s, '/', t.n);
    uint64_t x, y = 0;
    if (slash) {
        span l = { t.s, (size_t)(slash - t.s) }, r = { slash + 1, t.n - (size_t)(slash - t.s) - 1 };
        if (parse_u64(l, &x) || parse_u64(r, &y) || x > UINT32_MAX || y > UINT32_MAX)
            return -1;
        *two = 1;
    } else {
        if (parse_u64(t, &x) || x > UINT32_MAX)
            return -1;
        *two = 0;
    }
    *a = (uint32_t)x;
    *b = (uint32_t)y;
    return 0;
}

/* Parse a sample header. The comm is everything before the first
 * "pid[/tid]" token that is followed by header structure ([cpu], time:,
 * period, event:), so comms with spaces ("V8 WorkerThread") work. */
static int parse_header(const char *line, size_t len, perf_header *h)
{
    span tok[MAX_TOKENS];
    size_t nt = tokenize(line, len, tok, MAX_TOKENS);
    if (nt < 3)
        return 0;
    /* comm is at most 16 bytes in the kernel; allow some words of slack */
    for (size_t p = 1; p + 1 < nt && p <= 17; p++) {
        uint32_t a, b;
        int two;
        if (parse_pid_token(tok[p], &a, &b, &two) != 0)
            continue;
        size_t j = p + 1;
        if (j < nt && is_cpu_token(tok[j]))
            j++;
        int have_time = 0, have_event = 0;
        uint64_t period = 0;
        span event = { NULL, 0 };
        if (j < nt && is_time_token(tok[j])) {
            have_time = 1;
            j++;
        }
        if (j + 1 < nt && all_digits(tok[j]) && ends_colon(tok[j + 1])) {
            if (parse_u64(tok[j], &period) != 0)
                continue;
            j++;
        }
        if (j < nt && ends_colon(tok[j]) && !is_time_token(tok[j])) {
            have_event = 1;
            event = (span){ tok[j].s, tok[j].n - 1 };
            j++;
        }
        if (!have_time && !have_event)
            continue;
        memset(h, 0, sizeof *h);
        h->comm = (span){ tok[0].s, (size_t)(tok[p - 1].s + tok[p - 1].n - tok[0].s) };
        if (two) {
            h->pid = a;
            h->tid = b;
            h->has_pid = 1;
        } else {
            h->tid = a;
        }
        h->period = period;
        h->event = event;
        if (j < nt)
            h->rest = (span){ tok[j].s, (size_t)(line + len - tok[j].s) };
        return 1;
    }
    return 0;
}

int sprof_perf_script_detect(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        size_t b = i;
        while (b < e && is_ws(text[b]))
            b++;
        if (b < e && text[b] != '#' && !(e - b == 1 && text[b] == '\r')) {
            if (e >= len && len > 4096)
                return 0; /* first real line cut by the caller's buffer */
            return parse_header(text + i, e - i, &(perf_header){ 0 });
        }
        i = e + 1;
    }
    return 0;
}

/* ---- frame lines ---------------------------------------------------------- */

typedef struct perf_frame {
    span addr;    /* hex as printed */
    span func;    /* symbol, possibly "+0x.." and "->" inline pieces */
    span mod;     /* dso without parentheses; n = 0 if not printed */
} perf_frame;

/* "<hex addr> <func...> (<dso>)": the dso is the text between the last
 * " (" that has a ')' after it and the last ')', as stackcollapse-perf.pl
 * reads it. A line with only an address, or without "(dso)", is accepted. */
static int parse_frame(const char *s, size_t len, perf_frame *f)
{
    size_t i = 0;
    while (i < len && is_ws(s[i]))
        i++;
    size_t b = i;
    while (i < len && isxdigit((unsigned char)s[i]))
        i++;
    if (i == b || (i < len && !is_ws(s[i])))
        return 0;
    memset(f, 0, sizeof *f);
    f->addr = (span){ s + b, i - b };
    while (i < len && is_ws(s[i]))
        i++;
    const char *rest = s + i;
    size_t rlen = len - i;
    while (rlen > 0 && is_ws(rest[rlen - 1]))
        rlen--;
    size_t rpar = rlen;
    while (rpar > 0 && rest[rpar - 1] != ')')
        rpar--;
    size_t lp = SIZE_MAX;
    if (rpar > 0) {
        for (size_t k = rpar - 1; k-- > 0;) {
            if (rest[k] == ' ' && rest[k + 1] == '(') {
                lp = k;
                break;
            }
        }
        if (lp == SIZE_MAX && rest[0] == '(')
            lp = 0; /* "addr (dso)": no symbol */
    }
    if (lp != SIZE_MAX) {
        size_t mb = lp == 0 && rest[0] == '(' ? 1 : lp + 2;
        f->mod = (span){ rest + mb, rpar - 1 - mb };
        f->func = (span){ rest, lp };
    } else {
        f->func = (span){ rest, rlen };
    }
    return 1;
}

/* Strip a trailing "+0x<lowercase hex>" (Linux >= 4.8 prints it). */
static span strip_offset(span f, uint64_t *off, int *has_off)
{
    *has_off = 0;
    for (size_t k = f.n; k >= 3; k--) {
        if (f.s[k - 3] == '+' && f.s[k - 2] == '0' && f.s[k - 1] == 'x') {
            span hex = { f.s + k, f.n - k };
            for (size_t j = 0; j < hex.n; j++)
                if (!(isdigit((unsigned char)hex.s[j]) || (hex.s[j] >= 'a' && hex.s[j] <= 'f')))
                    return f;
            if (hex.n == 0)
                return f;
            uint64_t v;
            if (parse_hex(hex, &v) == 0) {
                *off = v;
                *has_off = 1;
            }
            return (span){ f.s, k - 3 };
        }
    }
    return f;
}

static int contains(span s, const char *lit)
{
    size_t n = strlen(lit);
    if (n > s.n)
        return 0;
    for (size_t i = 0; i + n <= s.n; i++)
        if (memcmp(s.s + i, lit, n) == 0)
            return 1;
    return 0;
}

/* A vmlinux image by path: ".../vmlinux" or ".../vmlinux-6.1.0-18-amd64". */
static int is_vmlinux_path(span m)
{
    size_t b = m.n;
    while (b > 0 && m.s[b - 1] != '/')
        b--;
    return m.n - b >= 7 && memcmp(m.s + b, "vmlinux", 7) == 0 && (m.n - b == 7 || m.s[b + 7] == '-');
}

/* Kernel code, for dropping: [kernel.kallsyms], [vmlinux-...], kernel
 * modules "[nf_nat]", a vmlinux image; not user-space pseudo mappings like
 * [vdso]. */
static int is_kernel_dso(span m)
{
    if (is_vmlinux_path(m))
        return 1;
    if (m.n < 3 || m.s[0] != '[' || contains(m, "unknown"))
        return 0;
    static const char *const user[] = { "[vdso]", "[vdso32]", "[vdsox32]", "[vsyscall]",
                                         "[vectors]", "[heap]", "[stack]", "[uprobes]",
                                         "[anon]", "[jit]" };
    for (size_t i = 0; i < sizeof user / sizeof user[0]; i++)
        if (span_eq(m, user[i]))
            return 0;
    return 1;
}

/* stackcollapse-perf.pl's rule for the "_[k]" annotation (and a vmlinux
 * image with a version suffix, as inferno's). */
static int annotate_kernel_rule(span m)
{
    if (contains(m, "unknown"))
        return 0;
    return (m.n > 0 && m.s[0] == '[') || (m.n >= 7 && memcmp(m.s + m.n - 7, "vmlinux", 7) == 0) ||
           is_vmlinux_path(m);
}

/* perf's map of JIT-compiled code: /tmp/perf-PID.map (stackcollapse-perf.pl --jit). */
static int is_jit_map(span m)
{
    static const char pre[] = "/tmp/perf-", post[] = ".map";
    size_t np = sizeof pre - 1, nq = sizeof post - 1;
    if (m.n <= np + nq || memcmp(m.s, pre, np) != 0 || memcmp(m.s + m.n - nq, post, nq) != 0)
        return 0;
    for (size_t i = np; i < m.n - nq; i++)
        if (!isdigit((unsigned char)m.s[i]))
            return 0;
    return 1;
}

/* An event name as perf matches it: "cycles:u" and "cycles" are one event
 * (a trailing ":" group of modifier letters is dropped); a tracepoint's
 * "sched:sched_switch" keeps its subsystem. */
static span event_base(span e)
{
    size_t c = e.n;
    while (c > 0 && e.s[c - 1] != ':')
        c--;
    if (c == 0 || c == e.n)
        return e;
    for (size_t i = c; i < e.n; i++)
        if (!strchr("ukhIGHpPSDWeb", e.s[i]))
            return e;
    return (span){ e.s, c - 1 };
}

/* ---- parser state ---------------------------------------------------------- */

typedef struct pend_inline {
    char *func, *mod;
} pend_inline;

typedef struct perf_parser {
    sprof_text_parser txt;

    /* event filter: the first event type seen, as stackcollapse-perf.pl */
    char *event;
    uint64_t skipped_other_event;

    /* the open sample */
    int open, skip;
    char *pname;                /* root frame name */
    int java;                   /* root frame is "java": tidy Java names */
    uint64_t period;
    uint32_t tid;
    size_t raw_seen;            /* user-space, non-inlined frames seen (leaf detection) */
    uint32_t *frames;           /* leaf first */
    size_t nframes, cap;
    int cut;                    /* frames beyond SPROF_PERF_MAX_FRAMES dropped */
    pend_inline *pend;
    size_t npend, pendcap;

    char *name;                 /* scratch for tidied names */
    size_t namecap;
    uint64_t nsamples;
    int oom;
} perf_parser;

static int push_frame(perf_parser *ps, uint32_t id)
{
    if (id == UINT32_MAX) {
        ps->oom = 1;
        return -1;
    }
    if (ps->nframes >= SPROF_PERF_MAX_FRAMES) {
        ps->cut = 1;
        return 0;
    }
    if (ps->nframes == ps->cap) {
        size_t nc = ps->cap ? ps->cap * 2 : 64;
        uint32_t *nf = realloc(ps->frames, nc * sizeof *nf);
        if (!nf) {
            ps->oom = 1;
            return -1;
        }
        ps->frames = nf;
        ps->cap = nc;
    }
    ps->frames[ps->nframes++] = id;
    return 0;
}

static char *dup_span(span s)
{
    char *d = malloc(s.n + 1);
    if (d) {
        if (s.n)
            memcpy(d, s.s, s.n);
        d[s.n] = '\0';
    }
    return d;
}

/* NUL-terminated copy of s (cut to fit) in buf. */
static void span_to_buf(span s, char *buf, size_t cap)
{
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    if (n)
        memcpy(buf, s.s, n);
    buf[n] = '\0';
}

/* Grow the scratch name buffer to hold n bytes + NUL. */
static char *name_buf(perf_parser *ps, size_t n)
{
    if (n + 1 > ps->namecap) {
        size_t nc = n + 1 < 256 ? 256 : n + 1;
        char *b = realloc(ps->name, nc);
        if (!b) {
            ps->oom = 1;
            return NULL;
        }
        ps->name = b;
        ps->namecap = nc;
    }
    return ps->name;
}

/* One name piece tidied as stackcollapse-perf.pl does; returns its length
 * in ps->name. `index` is the piece's position in an "a->b" inline list. */
static size_t tidy_piece(perf_parser *ps, span func, span mod, span addr, size_t index)
{
    size_t need = func.n + mod.n + addr.n + 16;
    char *b = name_buf(ps, need);
    if (!b)
        return 0;
    size_t n = 0;
    if (span_eq(func, "[unknown]")) {
        span m = mod;
        const char *label;
        size_t llen;
        if (m.n > 0 && !span_eq(m, "[unknown]")) {
            const char *base = m.s + m.n;
            while (base > m.s && base[-1] != '/')
                base--;
            label = base;
            llen = (size_t)(m.s + m.n - base);
        } else {
            label = "unknown";
            llen = 7;
        }
        b[n++] = '[';
        memcpy(b + n, label, llen);
        n += llen;
        if (ps->txt.opt->addrs) {
            b[n++] = ' ';
            b[n++] = '<';
            memcpy(b + n, addr.s, addr.n);
            n += addr.n;
            b[n++] = '>';
        }
        b[n++] = ']';
    } else {
        if (func.n)
            memcpy(b, func.s, func.n);
        n = func.n;
    }
    b[n] = '\0';

    /* tidy_generic: ';' -> ':', drop everything from the first '(' unless
     * it is a Go method "pkg.(*T).M" or "(anonymous namespace)", drop quotes. */
    for (size_t i = 0; i < n; i++)
        if (b[i] == ';')
            b[i] = ':';
    int go_method = 0;
    {
        char *dp = strstr(b, ".(");
        if (dp && strstr(dp + 2, ")."))
            go_method = 1;
    }
    if (!go_method) {
        for (size_t i = 0; i < n; i++) {
            if (b[i] == '(' && strncmp(b + i + 1, "anonymous namespace)", 20) != 0) {
                n = i;
                b[n] = '\0';
                break;
            }
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i] != '"' && b[i] != '\'')
            b[w++] = b[i];
    n = w;
    b[n] = '\0';

    /* tidy_java: "Lorg/foo/Bar;.baz" -> "org/foo/Bar:.baz" */
    if (ps->java && n > 0 && b[0] == 'L' && memchr(b, '/', n)) {
        memmove(b, b + 1, n);
        n--;
    }

    if (index > 0) {
        if (!strstr(b, "_[i]")) {
            memcpy(b + n, "_[i]", 5);
            n += 4;
        }
    } else if (ps->txt.opt->kernel == SPROF_PERF_KERNEL_ANNOTATE && annotate_kernel_rule(mod)) {
        memcpy(b + n, "_[k]", 5);
        n += 4;
    } else if (ps->txt.opt->jit && is_jit_map(mod)) {
        memcpy(b + n, "_[j]", 5);
        n += 4;
    }
    return n;
}

/* A frame named as perf printed it (stackcollapse-perf.pl's tidying). */
static int push_plain(perf_parser *ps, span func, span mod, span addr)
{
    uint64_t off;
    int has_off;
    func = strip_offset(func, &off, &has_off);
    if (func.n > 0 && func.s[0] == '(')
        return 0; /* stackcollapse skips "(process name)" frames */
    if (func.n == 0)
        func = (span){ "[unknown]", 9 };
    char modbuf[4096];
    span_to_buf(mod, modbuf, sizeof modbuf);

    /* "a->b->c" (old perf inline notation): a is the outer function */
    span pieces[64];
    size_t np = 0;
    size_t b = 0;
    for (size_t i = 0; i + 1 < func.n && np < 63; i++) {
        if (func.s[i] == '-' && func.s[i + 1] == '>') {
            pieces[np++] = (span){ func.s + b, i - b };
            b = i + 2;
            i++;
        }
    }
    pieces[np++] = (span){ func.s + b, func.n - b };
    for (size_t k = np; k-- > 0;) {
        size_t n = tidy_piece(ps, pieces[k], mod, addr, k);
        if (ps->oom)
            return -1;
        uint16_t flags = 0;
        if (span_eq(pieces[k], "[unknown]"))
            flags |= SPROF_PFRAME_UNRESOLVED;
        if (k > 0)
            flags |= SPROF_FRAME_INLINED;
        if (push_frame(ps, sprof_text_plain_frame(ps->txt.p, ps->name, n, modbuf, flags)) != 0)
            return -1;
    }
    return 0;
}

/* A frame of the profiled binary through the symmap: 1 resolved, 0 not. */
static int push_resolved(perf_parser *ps, span func, span mod, span addr, int leaf)
{
    if (!ps->txt.res || mod.n == 0 || !sprof_symres_is_binary(ps->txt.res, mod.s, mod.n))
        return 0;
    if (contains(func, "->") || span_eq(func, "[unknown]"))
        return 0;
    uint64_t off = 0, link = 0;
    int has_off;
    span sym = strip_offset(func, &off, &has_off);
    char modbuf[4096];
    span_to_buf(mod, modbuf, sizeof modbuf);
    int have_link = 0;
    if (has_off) {
        have_link = sprof_symres_symbol_addr(ps->txt.res, sym.s, sym.n, off, &link) == 0;
    } else {
        /* No offset printed: use the address if it lies in the function
         * (link-time or dso-relative addresses), or if a page-aligned load
         * bias leaves exactly one candidate inside it. */
        uint64_t lo, hi, a;
        if (sprof_symres_symbol_range(ps->txt.res, sym.s, sym.n, &lo, &hi) == 0 &&
            parse_hex(addr, &a) == 0 && hi > lo) {
            if (a >= lo && a < hi) {
                link = a;
                have_link = 1;
            } else if (hi - lo <= 0x1000) {
                /* a - x is a multiple of the page size; in a function of at
                 * most one page there is at most one such x */
                uint64_t x = lo + ((a - lo) & 0xfff);
                if (x < hi) {
                    link = x;
                    have_link = 1;
                }
            }
        }
    }
    if (have_link) {
        /* every frame but the leaf is a return address */
        uint32_t ids[64];
        size_t n = sprof_symres_frames(ps->txt.res, ps->txt.p, link, !leaf, ps->txt.opt->no_inline, modbuf,
                                       ids, 64);
        if (n > 0) {
            for (size_t i = 0; i < n; i++)
                if (push_frame(ps, ids[i]) != 0)
                    return -1;
            return 1;
        }
    }
    uint32_t id;
    if (sprof_symres_function_frame(ps->txt.res, ps->txt.p, sym.s, sym.n, modbuf, &id))
        return push_frame(ps, id) != 0 ? -1 : 1;
    return 0;
}

static void clear_pending(perf_parser *ps)
{
    for (size_t i = 0; i < ps->npend; i++) {
        free(ps->pend[i].func);
        free(ps->pend[i].mod);
    }
    ps->npend = 0;
}

static int flush_pending(perf_parser *ps)
{
    for (size_t i = 0; i < ps->npend; i++) {
        span f = { ps->pend[i].func, strlen(ps->pend[i].func) };
        span m = { ps->pend[i].mod, strlen(ps->pend[i].mod) };
        if (push_plain(ps, f, m, (span){ "0", 1 }) != 0)
            return -1;
    }
    clear_pending(ps);
    return 0;
}

static int add_pending(perf_parser *ps, span func, span mod)
{
    if (ps->npend == ps->pendcap) {
        size_t nc = ps->pendcap ? ps->pendcap * 2 : 8;
        if (nc > SPROF_PERF_MAX_FRAMES)
            return 0; /* absurd run of inlined frames: keep the first ones */
        pend_inline *np = realloc(ps->pend, nc * sizeof *np);
        if (!np) {
            ps->oom = 1;
            return -1;
        }
        ps->pend = np;
        ps->pendcap = nc;
    }
    char *f = dup_span(func), *m = dup_span(mod);
    if (!f || !m) {
        free(f);
        free(m);
        ps->oom = 1;
        return -1;
    }
    ps->pend[ps->npend++] = (pend_inline){ f, m };
    return 0;
}

static int frame_line(perf_parser *ps, const perf_frame *fr)
{
    if (ps->skip)
        return 0;
    if (span_eq(fr->mod, "inlined")) {
        /* perf's own inline frames precede the real frame at the same
         * address; with the symmap that frame expands to its full inline
         * chain, so these are only used when it does not resolve. */
        if (ps->txt.opt->no_inline)
            return 0;
        return add_pending(ps, fr->func, fr->mod);
    }
    if (is_kernel_dso(fr->mod) || annotate_kernel_rule(fr->mod)) {
        int kernel = is_kernel_dso(fr->mod);
        if (kernel && ps->txt.opt->kernel == SPROF_PERF_KERNEL_DROP) {
            clear_pending(ps);
            return 0;
        }
        if (!kernel)
            ps->raw_seen++; /* [vdso] and the like: user-space code */
        if (flush_pending(ps) != 0)
            return -1;
        return push_plain(ps, fr->func, fr->mod, fr->addr);
    }
    /* The first user-space frame is where the thread was (the sampled IP,
     * or the resume point of a system call); every later one is a return
     * address. Kernel frames above it do not change that. */
    int leaf = ps->raw_seen == 0;
    ps->raw_seen++;
    int r = push_resolved(ps, fr->func, fr->mod, fr->addr, leaf);
    if (r < 0)
        return -1;
    if (r > 0) {
        clear_pending(ps);
        return 0;
    }
    if (flush_pending(ps) != 0)
        return -1;
    return push_plain(ps, fr->func, fr->mod, fr->addr);
}

static int end_sample(perf_parser *ps)
{
    if (!ps->open)
        return 0;
    ps->open = 0;
    int rc = 0;
    if (!ps->skip) {
        if (flush_pending(ps) != 0)
            return -1;
        size_t n = ps->nframes + 1;
        uint32_t stackbuf[256];
        uint32_t *st = n <= 256 ? stackbuf : malloc(n * sizeof *st);
        if (!st) {
            ps->oom = 1;
            return -1;
        }
        uint32_t root = sprof_text_plain_frame(ps->txt.p, ps->pname, strlen(ps->pname), "",
                                               SPROF_PFRAME_SYNTHETIC);
        if (root == UINT32_MAX) {
            ps->oom = 1;
            rc = -1;
        } else {
            st[0] = root;
            for (size_t i = 0; i < ps->nframes; i++)
                st[1 + i] = ps->frames[ps->nframes - 1 - i];
            uint64_t w = ps->period ? ps->period : 1;
            if (sprof_profile_add_stack(ps->txt.p, st, (uint32_t)n, 1, w,
                                        ps->txt.opt->tid ? ps->tid : 0) != 0) {
                ps->oom = 1;
                rc = -1;
            }
            ps->nsamples++;
            ps->txt.p->stats.samples++;
        }
        if (st != stackbuf)
            free(st);
    }
    clear_pending(ps);
    ps->nframes = 0;
    ps->raw_seen = 0;
    ps->skip = 0;
    return rc;
}

static int begin_sample(perf_parser *ps, const perf_header *h)
{
    if (end_sample(ps) != 0)
        return -1;
    ps->open = 1;
    ps->skip = 0;
    if (h->event.n > 0) {
        span ev = event_base(h->event);
        if (!ps->event) {
            ps->event = dup_span(ev);
            if (!ps->event) {
                ps->oom = 1;
                return -1;
            }
        } else if (strlen(ps->event) != ev.n || memcmp(ps->event, ev.s, ev.n) != 0) {
            ps->skip = 1;
            ps->skipped_other_event++;
            return 0;
        }
    }
    if (ps->txt.opt->ntids > 0) {
        int keep = 0;
        for (size_t i = 0; i < ps->txt.opt->ntids && !keep; i++)
            keep = ps->txt.opt->tids[i] == h->tid;
        if (!keep) {
            ps->skip = 1;
            ps->txt.p->stats.filtered++;
            return 0;
        }
    }
    /* root frame: comm[-pid[/tid]], spaces -> '_' (stackcollapse-perf.pl) */
    char ids[48] = "";
    char pidbuf[16];
    if (h->has_pid)
        snprintf(pidbuf, sizeof pidbuf, "%u", h->pid);
    else
        snprintf(pidbuf, sizeof pidbuf, "?");
    if (ps->txt.opt->tid)
        snprintf(ids, sizeof ids, "-%s/%u", pidbuf, h->tid);
    else if (ps->txt.opt->pid)
        snprintf(ids, sizeof ids, "-%s", pidbuf);
    size_t n = h->comm.n + strlen(ids);
    char *pn = realloc(ps->pname, n + 1);
    if (!pn) {
        ps->oom = 1;
        return -1;
    }
    ps->pname = pn;
    memcpy(pn, h->comm.s, h->comm.n);
    strcpy(pn + h->comm.n, ids);
    for (char *c = pn; *c; c++)
        if (*c == ' ' || *c == '\t')
            *c = '_';
    /* stackcollapse-perf.pl tidies Java names only when the root is exactly "java" */
    ps->java = strcmp(pn, "java") == 0;
    ps->period = h->period;
    ps->tid = h->tid;
    ps->nframes = 0;
    ps->raw_seen = 0;
    ps->cut = 0;
    return 0;
}

static int starts_with(span t, const char *lit)
{
    size_t n = strlen(lit);
    return t.n >= n && memcmp(t.s, lit, n) == 0;
}

/* "comm pid time: PERF_RECORD_MMAP2 ...": a side-band record, not a sample. */
static int is_side_band(const perf_header *h)
{
    return starts_with(h->event, "PERF_RECORD_") || starts_with(h->rest, "PERF_RECORD_");
}

/* "file.c:12" / "libc.so.6[27b25]": `perf script -F +srcline` lines. */
static int is_srcline(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && is_ws(s[i]))
        i++;
    if (i == 0 || i == len)
        return 0;
    span t = { s + i, len - i };
    for (size_t k = 0; k < t.n; k++)
        if (is_ws(t.s[k]))
            return 0;
    if (t.s[t.n - 1] == ']' && memchr(t.s, '[', t.n))
        return 1;
    size_t k = t.n;
    while (k > 0 && isdigit((unsigned char)t.s[k - 1]))
        k--;
    return k < t.n && k > 0 && t.s[k - 1] == ':';
}

static int parse_stream(perf_parser *ps, FILE *in)
{
    sprof_line_reader rd;
    if (sprof_line_reader_init(&rd, in) != 0) {
        ps->oom = 1;
        return -1;
    }
    char *line;
    size_t len;
    int r, rc = 0;
    while ((r = sprof_text_next_line(&rd, &ps->txt.diag, &line, &len)) == 1) {
        unsigned long ln = rd.lineno;
        size_t i = 0;
        while (i < len && is_ws(line[i]))
            i++;
        if (i == len) {
            if (end_sample(ps) != 0) {
                rc = -1;
                break;
            }
            continue;
        }
        if (line[i] == '#' && i == 0)
            continue;
        perf_header h;
        perf_frame fr;
        if (line[0] != '\t' && parse_header(line, len, &h)) {
            if (is_side_band(&h)) {
                /* --show-mmap-events / --show-task-events records: not samples */
                if (end_sample(ps) != 0) {
                    rc = -1;
                    break;
                }
                continue;
            }
            if (begin_sample(ps, &h) != 0) {
                rc = -1;
                break;
            }
            /* one-line samples (no call chains): the frame follows the event */
            if (h.rest.n > 0 && parse_frame(h.rest.s, h.rest.n, &fr) && fr.mod.n > 0) {
                if (frame_line(ps, &fr) != 0) {
                    rc = -1;
                    break;
                }
            }
            if (ps->cut)
                ps->cut = 2;
            continue;
        }
        /* frame lines are indented; an unindented one inside a sample (some
         * JVM agents' output) is taken too, as stackcollapse-perf.pl does */
        if ((i > 0 || ps->open) && parse_frame(line, len, &fr)) {
            if (!ps->open) {
                if (sprof_text_malformed(&ps->txt.diag, ln, "frame line outside a sample") != 0) {
                    rc = -1;
                    break;
                }
                continue;
            }
            if (frame_line(ps, &fr) != 0) {
                rc = -1;
                break;
            }
            if (ps->cut == 1) {
                ps->cut = 2;
                if (sprof_text_malformed(&ps->txt.diag, ln, "call chain deeper than %d frames, cut",
                                         SPROF_PERF_MAX_FRAMES) != 0) {
                    rc = -1;
                    break;
                }
            }
            continue;
        }
        if (is_srcline(line, len))
            continue;
        if (sprof_text_malformed(&ps->txt.diag, ln, "neither a sample header nor a frame line") != 0) {
            rc = -1;
            break;
        }
    }
    if (r < 0) /* diag.err set */
        rc = -1;
    if (rc == 0 && end_sample(ps) != 0)
        rc = -1;
    sprof_line_reader_free(&rd);
    return rc;
}

int sprof_profile_add_perf_script_stream(sprof_profile *p, FILE *in, const char *name,
                                         const sprof_symmap *symmap,
                                         const sprof_perf_options *opt, char *err, size_t errlen)
{
    perf_parser ps;
    memset(&ps, 0, sizeof ps);
    if (sprof_text_parser_init(&ps.txt, p, name, symmap, opt, err, errlen) != 0)
        return -1;
    int rc = parse_stream(&ps, in);
    if (ps.oom) {
        snprintf(err, errlen, "%s: out of memory", name);
        rc = -1;
    }
    if (rc == 0) {
        sprof_text_diag_finish(&ps.txt.diag);
        if (ps.skipped_other_event > 0)
            fprintf(ps.txt.opt->warn ? ps.txt.opt->warn : stderr,
                    "%s: note: kept only '%s' samples (the first event type); skipped %llu "
                    "samples of other events\n",
                    name, ps.event, (unsigned long long)ps.skipped_other_event);
    }
    clear_pending(&ps);
    free(ps.pend);
    free(ps.frames);
    free(ps.pname);
    free(ps.name);
    free(ps.event);
    sprof_text_parser_free(&ps.txt);
    return rc;
}

int sprof_profile_add_perf_script(sprof_profile *p, const char *path, const char *symmap_path,
                                  const sprof_perf_options *opt, char *err, size_t errlen)
{
    return sprof_text_input_file(p, path, symmap_path, opt, sprof_profile_add_perf_script_stream, err,
                                 errlen);
}
