/* Spinel allocation reports -> profile stacks (see sprof/alloc_report.h).
 *
 * Sites are printed by glibc's backtrace_symbols(): "MODULE(SYM+0xOFF)
 * [0xABS]", "MODULE(+0xOFF) [0xABS]" or "[0xABS]". OFF after "+" alone is
 * relative to the module's load bias, which for the profiled binary is its
 * link-time address (PIE: bias = load address; non-PIE: bias = 0). Every
 * site is a return address, so it is looked up at address - 1. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf_script_internal.h"
#include "sprof/alloc_report.h"

#define ALLOC_MAX_FRAMES 65536

typedef struct site {
    const char *mod;    /* module path, NULL if absent */
    size_t modlen;
    const char *sym;    /* symbol in the parentheses, NULL if absent/empty */
    size_t symlen;
    uint64_t off;
    int has_off;
    uint64_t abs;
    int has_abs;
} site;

/* Recognise a backtrace_symbols() site; 0 if the frame is something else. */
static int parse_site(const char *f, size_t n, site *s)
{
    memset(s, 0, sizeof *s);
    while (n > 0 && f[n - 1] == ' ')
        n--;
    while (n > 0 && f[0] == ' ') {
        f++;
        n--;
    }
    /* trailing " [0xABS]" or the whole frame "[0xABS]" */
    if (n >= 5 && f[n - 1] == ']') {
        size_t b = n - 1;
        while (b > 0 && f[b - 1] != '[')
            b--;
        if (b > 0 && b + 2 < n && f[b] == '0' && (f[b + 1] == 'x' || f[b + 1] == 'X') &&
            sprof_text_hex(f + b + 2, n - 1 - (b + 2), &s->abs) == 0) {
            s->has_abs = 1;
            n = b - 1;
            while (n > 0 && f[n - 1] == ' ')
                n--;
        }
    }
    if (n == 0)
        return s->has_abs;
    /* "MODULE(SYM+0xOFF)" / "MODULE(+0xOFF)" / "MODULE(SYM)" */
    if (f[n - 1] != ')')
        return 0;
    size_t lp = n - 1;
    while (lp > 0 && f[lp - 1] != '(')
        lp--;
    if (lp == 0)
        return 0;
    lp--; /* index of '(' */
    if (lp == 0)
        return 0; /* no module name */
    s->mod = f;
    s->modlen = lp;
    const char *in = f + lp + 1;
    size_t inl = n - 1 - (lp + 1);
    size_t plus = inl;
    for (size_t i = inl; i-- > 0;) {
        if (in[i] == '+') {
            plus = i;
            break;
        }
    }
    if (plus < inl) {
        const char *o = in + plus + 1;
        size_t ol = inl - plus - 1;
        if (ol < 3 || o[0] != '0' || (o[1] != 'x' && o[1] != 'X') || sprof_text_hex(o + 2, ol - 2, &s->off))
            return 0;
        s->has_off = 1;
        inl = plus;
    }
    if (inl > 0) {
        s->sym = in;
        s->symlen = inl;
    }
    return s->has_off || s->sym || s->has_abs;
}

typedef struct alloc_parser {
    sprof_text_parser txt;
    uint64_t bias;       /* ABS - link for the binary, learned from sites with both */
    int have_bias;
    uint32_t *frames;
    size_t nframes, cap;
} alloc_parser;

static int push(alloc_parser *ap, uint32_t id)
{
    if (ap->nframes >= ALLOC_MAX_FRAMES)
        return 0;
    if (ap->nframes == ap->cap) {
        size_t nc = ap->cap ? ap->cap * 2 : 64;
        uint32_t *v = realloc(ap->frames, nc * sizeof *v);
        if (!v)
            return -1;
        ap->frames = v;
        ap->cap = nc;
    }
    ap->frames[ap->nframes++] = id;
    return 0;
}

/* Link-time address of a site of the binary, or -1. */
static int site_link(alloc_parser *ap, const site *s, uint64_t *link)
{
    if (!ap->txt.res)
        return -1;
    if (s->mod) {
        if (!sprof_symres_is_binary(ap->txt.res, s->mod, s->modlen))
            return -1;
        if (s->sym && s->has_off)
            return sprof_symres_symbol_addr(ap->txt.res, s->sym, s->symlen, s->off, link);
        if (s->sym) {
            uint64_t hi;
            return sprof_symres_symbol_range(ap->txt.res, s->sym, s->symlen, link, &hi);
        }
        if (s->has_off) {
            if (sprof_symres_covers(ap->txt.res, s->off - (s->off > 0))) {
                *link = s->off;
                return 0;
            }
            /* not a link address: maybe a file offset (docs/perf-script.md) */
            return sprof_symmap_file_offset_to_vaddr(ap->txt.m, s->off, link);
        }
        return -1;
    }
    if (s->has_abs) {
        uint64_t a = s->abs;
        if (sprof_symmap_is_pie(ap->txt.m)) {
            if (!ap->have_bias || a < ap->bias)
                return -1;
            a -= ap->bias;
        }
        if (!sprof_symres_covers(ap->txt.res, a - (a > 0)))
            return -1;
        *link = a;
        return 0;
    }
    return -1;
}

static int add_frame(alloc_parser *ap, const char *f, size_t n)
{
    site s;
    if (parse_site(f, n, &s)) {
        uint64_t link;
        if (site_link(ap, &s, &link) == 0) {
            char modbuf[4096];
            const char *bin = sprof_symmap_binary_path(ap->txt.m);
            snprintf(modbuf, sizeof modbuf, "%s", bin ? bin : "");
            uint32_t ids[64];
            size_t k = sprof_symres_frames(ap->txt.res, ap->txt.p, link, 1, ap->txt.opt->no_inline, modbuf,
                                           ids, 64);
            if (k > 0) {
                /* innermost first -> root first */
                for (size_t i = k; i-- > 0;)
                    if (push(ap, ids[i]) != 0)
                        return -1;
                return 0;
            }
        }
        if (s.mod && s.sym) {
            /* another module's function: its name, without run-specific addresses */
            char modbuf[4096];
            size_t ml = s.modlen < sizeof modbuf - 1 ? s.modlen : sizeof modbuf - 1;
            memcpy(modbuf, s.mod, ml);
            modbuf[ml] = '\0';
            return push(ap, sprof_text_plain_frame(ap->txt.p, s.sym, s.symlen, modbuf, 0));
        }
        return push(ap, sprof_text_plain_frame(ap->txt.p, f, n, "", SPROF_PFRAME_UNRESOLVED));
    }
    /* "alloc", the type leaf, anything else: as written */
    return push(ap, sprof_text_plain_frame(ap->txt.p, f, n, "",
                                           ap->nframes == 0 ? SPROF_PFRAME_SYNTHETIC : 0));
}

/* Split "frames COUNT"; 0 ok. */
static int split_count(const char *line, size_t len, size_t *frames_len, uint64_t *count)
{
    size_t e = len;
    while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '\t'))
        e--;
    size_t b = e;
    while (b > 0 && isdigit((unsigned char)line[b - 1]))
        b--;
    if (b == e || b == 0 || (line[b - 1] != ' ' && line[b - 1] != '\t') || e - b > 19)
        return -1;
    uint64_t v = 0;
    for (size_t i = b; i < e; i++)
        v = v * 10 + (uint64_t)(line[i] - '0');
    *count = v;
    size_t fl = b;
    while (fl > 0 && (line[fl - 1] == ' ' || line[fl - 1] == '\t'))
        fl--;
    *frames_len = fl;
    return fl > 0 ? 0 : -1;
}

static int process_line(alloc_parser *ap, const char *line, size_t len, unsigned long ln)
{
    size_t fl;
    uint64_t count;
    if (split_count(line, len, &fl, &count) != 0)
        return sprof_text_malformed(&ap->txt.diag, ln, "expected \"frame;frame;...;TYPE COUNT\"");
    ap->nframes = 0;
    size_t b = 0;
    for (size_t i = 0; i <= fl; i++) {
        if (i == fl || line[i] == ';') {
            if (i == b)
                return sprof_text_malformed(&ap->txt.diag, ln, "empty frame");
            if (add_frame(ap, line + b, i - b) != 0) {
                snprintf(ap->txt.diag.err, ap->txt.diag.errlen, "%s: out of memory", ap->txt.diag.name);
                return -1;
            }
            b = i + 1;
        }
    }
    if (count == 0)
        return 0;
    if (sprof_profile_add_stack(ap->txt.p, ap->frames, (uint32_t)ap->nframes, count, count, 0) != 0) {
        snprintf(ap->txt.diag.err, ap->txt.diag.errlen, "%s: out of memory", ap->txt.diag.name);
        return -1;
    }
    ap->txt.p->stats.samples += count;
    return 0;
}

/* First pass: the binary's load bias from any site printed with both a
 * module-relative and an absolute address. */
static void learn_bias(alloc_parser *ap, FILE *in)
{
    sprof_line_reader rd;
    if (sprof_line_reader_init(&rd, in) != 0)
        return;
    char *line;
    size_t len;
    while (!ap->have_bias && sprof_line_next(&rd, &line, &len) == 1) {
        size_t b = 0;
        for (size_t i = 0; i <= len; i++) {
            if (i == len || line[i] == ';') {
                site s;
                uint64_t link;
                if (i > b && parse_site(line + b, i - b, &s) && s.mod && s.has_abs &&
                    (s.has_off || s.sym) && site_link(ap, &s, &link) == 0 && s.abs >= link) {
                    ap->bias = s.abs - link;
                    ap->have_bias = 1;
                    break;
                }
                b = i + 1;
            }
        }
    }
    sprof_line_reader_free(&rd);
}

int sprof_profile_add_alloc_report_stream(sprof_profile *p, FILE *in, const char *name,
                                          const sprof_symmap *symmap,
                                          const sprof_perf_options *opt, char *err, size_t errlen)
{
    alloc_parser ap;
    memset(&ap, 0, sizeof ap);
    if (sprof_text_parser_init(&ap.txt, p, name, symmap, opt, err, errlen) != 0)
        return -1;
    if (symmap) {
        long start = ftell(in);
        if (start >= 0) {
            learn_bias(&ap, in);
            if (fseek(in, start, SEEK_SET) != 0) {
                snprintf(err, errlen, "%s: cannot rewind", name);
                sprof_text_parser_free(&ap.txt);
                return -1;
            }
            clearerr(in);
        }
    }
    sprof_line_reader rd;
    if (sprof_line_reader_init(&rd, in) != 0) {
        snprintf(err, errlen, "%s: out of memory", name);
        sprof_text_parser_free(&ap.txt);
        return -1;
    }
    char *line;
    size_t len;
    int r, rc = 0;
    while ((r = sprof_text_next_line(&rd, &ap.txt.diag, &line, &len)) == 1) {
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t'))
            i++;
        if (i == len || line[i] == '#')
            continue;
        if (process_line(&ap, line, len, rd.lineno) != 0) {
            rc = -1;
            break;
        }
    }
    if (r < 0) /* err set */
        rc = -1;
    if (rc == 0)
        sprof_text_diag_finish(&ap.txt.diag);
    sprof_line_reader_free(&rd);
    free(ap.frames);
    sprof_text_parser_free(&ap.txt);
    return rc;
}

int sprof_profile_add_alloc_report(sprof_profile *p, const char *path, const char *symmap_path,
                                   const sprof_perf_options *opt, char *err, size_t errlen)
{
    return sprof_text_input_file(p, path, symmap_path, opt, sprof_profile_add_alloc_report_stream, err,
                                 errlen);
}

int sprof_alloc_report_detect(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        size_t b = i;
        while (b < e && (text[b] == ' ' || text[b] == '\t'))
            b++;
        if (b < e && text[b] != '#' && !(e - b == 1 && text[b] == '\r')) {
            size_t fl;
            uint64_t count;
            size_t n = e - b;
            while (n > 0 && text[b + n - 1] == '\r')
                n--;
            return n > 6 && memcmp(text + b, "alloc;", 6) == 0 &&
                   split_count(text + b, n, &fl, &count) == 0;
        }
        i = e + 1;
    }
    return 0;
}
