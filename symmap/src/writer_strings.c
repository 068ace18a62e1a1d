/* String interning for the writer (each distinct text stored once, so
 * millions of line rows naming the same file cost one copy), and the
 * writer's small helpers: growing vectors, errors, copies. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer_internal.h"

static uint64_t hash_text(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int grow(wstr_set *set)
{
    size_t ncap = set->cap ? set->cap * 2 : 256;
    wstr **slots = calloc(ncap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < set->cap; i++) {
        wstr *e = set->slots[i];
        if (!e)
            continue;
        size_t j = hash_text(e->s, e->len) & (ncap - 1);
        while (slots[j])
            j = (j + 1) & (ncap - 1);
        slots[j] = e;
    }
    free(set->slots);
    set->slots = slots;
    set->cap = ncap;
    return 0;
}

wstr *wstr_intern(wstr_set *set, const char *s)
{
    if (!s)
        s = "";
    if ((set->n + 1) * 2 > set->cap && grow(set) != 0)
        return NULL;
    size_t len = strlen(s);
    size_t j = hash_text(s, len) & (set->cap - 1);
    for (wstr *e; (e = set->slots[j]) != NULL; j = (j + 1) & (set->cap - 1))
        if (e->len == len && memcmp(e->s, s, len) == 0)
            return e;
    wstr *e = malloc(sizeof(*e) + len + 1);
    if (!e)
        return NULL;
    e->offset = 0;
    e->used = 0;
    e->len = len;
    memcpy(e->s, s, len + 1);
    set->slots[j] = e;
    set->n++;
    return e;
}

void wstr_set_free(wstr_set *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slots[i]);
    free(set->slots);
    set->slots = NULL;
    set->cap = set->n = 0;
}

int wstr_cmp(const wstr *a, const wstr *b)
{
    if (a == b)
        return 0;
    return strcmp(a->s, b->s);
}

int wvec_reserve(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > ((size_t)-1) / 2 / elem)
            return -1;
        ncap *= 2;
    }
    void *nv = realloc(*v, ncap * elem);
    if (!nv)
        return -1;
    *v = nv;
    *cap = ncap;
    return 0;
}

void wset_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* memcpy that accepts a NULL source when there is nothing to copy. */
void wcopy_n(void *dst, const void *src, size_t n)
{
    if (n)
        memcpy(dst, src, n);
}
