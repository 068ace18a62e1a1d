/* Interned strings (uthash). See strpool.h. */
#include "strpool.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct pooled {
    UT_hash_handle hh;
    char s[]; /* key */
} pooled;

struct sprof_strpool {
    pooled *head;
};

sprof_strpool *sprof_strpool_new(void)
{
    return calloc(1, sizeof(sprof_strpool));
}

void sprof_strpool_free(sprof_strpool *p)
{
    if (!p)
        return;
    pooled *e, *tmp;
    HASH_ITER(hh, p->head, e, tmp)
    {
        HASH_DEL(p->head, e);
        free(e);
    }
    free(p);
}

const char *sprof_strpool_intern(sprof_strpool *p, const char *s)
{
    size_t n = strlen(s);
    pooled *e;
    HASH_FIND(hh, p->head, s, n, e);
    if (e)
        return e->s;
    e = malloc(sizeof *e + n + 1);
    if (!e)
        return NULL;
    memset(&e->hh, 0, sizeof e->hh);
    memcpy(e->s, s, n + 1);
    HASH_ADD_KEYPTR(hh, p->head, e->s, n, e);
    return e->s;
}
