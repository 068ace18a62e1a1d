/* Spinel C names -> Ruby names. See ruby_names.h and docs/ruby-names.md. */
#include "ruby_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sprof/symmap.h"

/* Spinel's operator sanitisation, inverted. Whole-name matches only: an
 * operator method's C method part is exactly one of these. Taken from
 * Spinel's sanitize_name (self-hosted compiler) plus the older C codegen's
 * extra entries; both spellings are accepted where they differ. */
static const struct { const char *c, *ruby; } operator_table[] = {
    { "_cmp", "<=>" },   { "_eq_eq", "==" },  { "_neq", "!=" },    { "_aref", "[]" },
    { "_aset", "[]=" },  { "_plus", "+" },    { "_minus", "-" },   { "_mul", "*" },
    { "_div", "/" },     { "_mod", "%" },     { "_pow", "**" },    { "_lt", "<" },
    { "_le", "<=" },     { "_gt", ">" },      { "_ge", ">=" },     { "_lshift", "<<" },
    { "_rshift", ">>" }, { "_band", "&" },    { "_bor", "|" },     { "_bxor", "^" },
    { "_bnot", "~" },    { "_uminus", "-@" }, { "_uplus", "+@" },  { "_not", "!" },
    { "_match", "=~" },  { "_eqq", "===" },
    /* older Spinel (C codegen): */ { "_add", "+" }, { "_sub", "-" }, { "_eq", "==" },
};

/* C keywords Spinel suffixes with _kw when a Ruby method is named like one. */
static const char *const c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
    "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
    "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
    "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "main",
};

static const char *const clone_suffixes[] = {
    "isra", "constprop", "part", "cold", "lto_priv", "localalias", "clone", "hot",
};

size_t sprof_base_name_len(const char *name)
{
    /* Only strip when EVERY dotted component after the first dot is a known
     * suffix or a number, so names that merely contain a dot survive. */
    const char *dot = strchr(name, '.');
    if (!dot || dot == name)
        return strlen(name);
    const char *p = dot;
    while (*p == '.') {
        const char *start = p + 1;
        const char *end = start;
        while (*end && *end != '.')
            end++;
        size_t n = (size_t)(end - start);
        int ok = n > 0;
        if (ok) {
            int digits = 1;
            for (const char *q = start; q < end; q++)
                if (!isdigit((unsigned char)*q))
                    digits = 0;
            int known = 0;
            for (size_t i = 0; i < sizeof clone_suffixes / sizeof *clone_suffixes; i++)
                if (strlen(clone_suffixes[i]) == n && memcmp(clone_suffixes[i], start, n) == 0)
                    known = 1;
            ok = digits || known;
        }
        if (!ok)
            return strlen(name);
        p = end;
    }
    return (size_t)(dot - name);
}

int sprof_strip_implicit(const char *name, char *out, size_t outlen)
{
    /* The C spelling, and the two spellings Spinel's map writes for it
     * ("Sphere::::implicit::852": "__" turned into "::" twice). */
    static const char *const markers[] = { "::::implicit::", "::implicit::", "__implicit_" };
    size_t o = 0;
    int dropped = 0;
    if (outlen == 0)
        return 0;
    for (const char *p = name; *p;) {
        int hit = 0;
        for (size_t k = 0; k < sizeof markers / sizeof *markers && !hit; k++) {
            size_t mlen = strlen(markers[k]);
            if (strncmp(p, markers[k], mlen) == 0 && isdigit((unsigned char)p[mlen])) {
                p += mlen;
                while (isdigit((unsigned char)*p))
                    p++;
                hit = 1;
            }
        }
        if (hit) {
            dropped = 1;
            continue;
        }
        if (o + 1 < outlen)
            out[o++] = *p;
        p++;
    }
    out[o] = '\0';
    return dropped;
}

static int is_c_keyword(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof c_keywords / sizeof *c_keywords; i++)
        if (strlen(c_keywords[i]) == n && memcmp(c_keywords[i], s, n) == 0)
            return 1;
    return 0;
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && memcmp(s + n - k, suffix, k) == 0;
}

/* Method part (after the class) -> Ruby method name. */
static void demangle_method(const char *m, char *out, size_t outlen)
{
    for (size_t i = 0; i < sizeof operator_table / sizeof *operator_table; i++)
        if (strcmp(m, operator_table[i].c) == 0) {
            snprintf(out, outlen, "%s", operator_table[i].ruby);
            return;
        }
    size_t n = strlen(m);
    if (ends_with(m, n, "_kw") && is_c_keyword(m, n - 3)) {
        snprintf(out, outlen, "%.*s", (int)(n - 3), m);
        return;
    }
    /* One trailing sanitised character: ? ! = (Ruby allows only one, at the end). */
    static const struct { const char *c; char ruby; } tails[] = {
        { "_p", '?' }, { "_bang", '!' }, { "_eq", '=' },
    };
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++)
        if (ends_with(m, n, tails[i].c)) {
            size_t k = n - strlen(tails[i].c);
            snprintf(out, outlen, "%.*s%c", (int)k, m, tails[i].ruby);
            return;
        }
    snprintf(out, outlen, "%s", m);
}

int sprof_demangle(const char *cname, char *out, size_t outlen, uint8_t *kind)
{
    if (strncmp(cname, "sp_", 3) != 0 || cname[3] == '\0')
        return 0;
    char plain[512];
    sprof_strip_implicit(cname + 3, plain, sizeof plain);
    const char *r = plain;

    /* Namespace: a run of capitalised tokens joined by '_' (Geo_Box -> Geo::Box). */
    char cls[256];
    size_t clen = 0;
    const char *p = r;
    while (isupper((unsigned char)*p)) {
        const char *tok = p;
        while (isalnum((unsigned char)*p))
            p++;
        int w = snprintf(cls + clen, sizeof cls - clen, "%s%.*s", clen ? "::" : "",
                         (int)(p - tok), tok);
        if (w < 0 || (size_t)w >= sizeof cls - clen)
            return 0;
        clen += (size_t)w;
        if (p[0] == '_' && isupper((unsigned char)p[1]))
            p++;
        else
            break;
    }
    char meth[256];
    if (clen == 0) {
        demangle_method(r, meth, sizeof meth);
        snprintf(out, outlen, "%s", meth);
        *kind = SPROF_KIND_TOPLEVEL;
        return 1;
    }
    if (*p != '_' || p[1] == '\0') /* just a class name, or a stray shape */
        return 0;
    p++; /* the separator */
    int is_class_method = 0;
    if (strncmp(p, "cls_", 4) == 0 && p[4] != '\0') {
        is_class_method = 1;
        p += 4;
    }
    demangle_method(p, meth, sizeof meth);
    snprintf(out, outlen, "%s%c%s", cls, is_class_method ? '.' : '#', meth);
    *kind = is_class_method ? SPROF_KIND_CMETH : SPROF_KIND_IMETH;
    return 1;
}

int sprof_repair_map_name(const char *ruby, char *out, size_t outlen, uint8_t *kind)
{
    /* Only the exact C-looking shape <Capitalised...>_cls_<method>; anything
     * with Ruby punctuation already is left alone. */
    if (!isupper((unsigned char)ruby[0]) || strpbrk(ruby, "#.:") || !strstr(ruby, "_cls_"))
        return 0;
    char tmp[512];
    if (snprintf(tmp, sizeof tmp, "sp_%s", ruby) >= (int)sizeof tmp)
        return 0;
    uint8_t k;
    if (!sprof_demangle(tmp, out, outlen, &k) || k != SPROF_KIND_CMETH)
        return 0;
    *kind = k;
    return 1;
}

static int numbered(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(s, prefix, n) != 0 || !isdigit((unsigned char)s[n]))
        return 0;
    for (s += n; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

int sprof_block_function_type(const char *base_cname)
{
    if (numbered(base_cname, "_sp_proc_fn_"))
        return 1;
    if (numbered(base_cname, "_fiber_body_"))
        return 2;
    return 0;
}
