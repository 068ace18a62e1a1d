/* .rb scope scanner. See rb_scopes.h. */
#include "rb_scopes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct open_scope {
    size_t index;  /* into the output */
    size_t indent;
} open_scope;

/* p: a NUL-terminated copy of the line start (the text itself need not end in NUL) */
static int word_at(const char *p, const char *w)
{
    size_t n = strlen(w);
    return strncmp(p, w, n) == 0 && !isalnum((unsigned char)p[n]) && p[n] != '_' && p[n] != '?' &&
           p[n] != '!' && p[n] != ':' && p[n] != '=';
}

/* Does this one-line def end on its own line? `def x = 1`, `def x(a) = a`,
 * `def x; 1; end`, `def x() end`. */
static int def_closes_itself(const char *p, const char *e)
{
    /* Trailing comment-free text ending in the word "end". */
    const char *t = e;
    while (t > p && isspace((unsigned char)t[-1]))
        t--;
    if (t - p >= 4 && strncmp(t - 3, "end", 3) == 0 && !isalnum((unsigned char)t[-4]) &&
        t[-4] != '_' && t[-4] != '.')
        return 1;
    /* Endless def: "def name[(params)] = expr"; a setter "def x=(v)" has no space before '='. */
    const char *q = p + 3;
    while (q < e && isspace((unsigned char)*q))
        q++;
    while (q < e && !isspace((unsigned char)*q) && *q != '(')
        q++;
    if (q < e && *q == '(') {
        int depth = 0;
        for (; q < e; q++) {
            if (*q == '(')
                depth++;
            else if (*q == ')' && --depth == 0) {
                q++;
                break;
            }
        }
    }
    while (q < e && (*q == ' ' || *q == '\t'))
        q++;
    return q < e && *q == '=' && (q + 1 >= e || q[1] != '=');
}

int sprof_rb_scan_text(const char *text, size_t len, sprof_rb_scope **out, size_t *n)
{
    sprof_rb_scope *v = NULL;
    size_t nv = 0, cap = 0;
    open_scope *stack = NULL;
    size_t nstack = 0, scap = 0;
    uint32_t lineno = 0;
    int in_heredoc_doc = 0; /* =begin ... =end */
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        lineno++;
        const char *s = p;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        size_t indent = (size_t)(s - p);
        if (in_heredoc_doc) {
            if (e - p >= 4 && strncmp(p, "=end", 4) == 0)
                in_heredoc_doc = 0;
        } else if (e - p >= 6 && strncmp(p, "=begin", 6) == 0) {
            in_heredoc_doc = 1;
        } else if (s < e && *s != '#') {
            char buf[8];
            size_t blen = (size_t)(e - s) < sizeof buf - 1 ? (size_t)(e - s) : sizeof buf - 1;
            memcpy(buf, s, blen);
            buf[blen] = '\0';
            int type = -1;
            if ((size_t)(e - s) >= 3 && strncmp(s, "end", 3) == 0 &&
                ((size_t)(e - s) == 3 || (!isalnum((unsigned char)s[3]) && s[3] != '_'))) {
                /* Close every open scope at this indentation or deeper. */
                while (nstack && stack[nstack - 1].indent >= indent) {
                    v[stack[nstack - 1].index].hi = lineno;
                    nstack--;
                    if (nstack == 0 || stack[nstack - 1].indent < indent)
                        break;
                }
            } else if (word_at(buf, "def")) {
                type = SPROF_RB_DEF;
            } else if (word_at(buf, "class") && !(e - s > 7 && strncmp(s, "class <<", 8) == 0)) {
                type = SPROF_RB_CLASS;
            } else if (word_at(buf, "module")) {
                type = SPROF_RB_MODULE;
            }
            if (type >= 0) {
                if (nv == cap) {
                    size_t nc = cap ? cap * 2 : 64;
                    sprof_rb_scope *nvv = realloc(v, nc * sizeof *nvv);
                    if (!nvv)
                        goto oom;
                    v = nvv;
                    cap = nc;
                }
                sprof_rb_scope sc = { lineno, 0, (uint8_t)type, NULL };
                if (type != SPROF_RB_DEF) {
                    const char *q = s + (type == SPROF_RB_CLASS ? 5 : 6);
                    while (q < e && isspace((unsigned char)*q))
                        q++;
                    const char *qn = q;
                    while (qn < e && (isalnum((unsigned char)*qn) || *qn == '_' || *qn == ':'))
                        qn++;
                    sc.name = malloc((size_t)(qn - q) + 1);
                    if (!sc.name)
                        goto oom;
                    memcpy(sc.name, q, (size_t)(qn - q));
                    sc.name[qn - q] = '\0';
                    /* "class Foo; end" on one line */
                    const char *t = e;
                    while (t > s && isspace((unsigned char)t[-1]))
                        t--;
                    if (t - s > 4 && strncmp(t - 4, " end", 4) == 0)
                        sc.hi = lineno;
                } else if (def_closes_itself(s, e)) {
                    sc.hi = lineno;
                }
                v[nv] = sc;
                if (!sc.hi) {
                    if (nstack == scap) {
                        size_t nc = scap ? scap * 2 : 16;
                        open_scope *ns = realloc(stack, nc * sizeof *ns);
                        if (!ns) {
                            free(sc.name);
                            goto oom;
                        }
                        stack = ns;
                        scap = nc;
                    }
                    stack[nstack++] = (open_scope){ nv, indent };
                }
                nv++;
            }
        }
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < nstack; i++)
        v[stack[i].index].hi = lineno ? lineno : 1;
    free(stack);
    *out = v;
    *n = nv;
    return 0;
oom:
    free(stack);
    sprof_rb_scopes_free(v, nv);
    *out = NULL;
    *n = 0;
    return -1;
}

int sprof_rb_scan(const char *path, sprof_rb_scope **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            if (cap >= ((size_t)64 << 20)) { /* not a source file */
                free(buf);
                fclose(f);
                return -1;
            }
            size_t nc = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? -1 : sprof_rb_scan_text(buf ? buf : "", len, out, n);
    free(buf);
    return rc;
}

void sprof_rb_scopes_free(sprof_rb_scope *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(s[i].name);
    free(s);
}
