/* Interned strings: one stable copy per distinct string, freed together. */
#ifndef SPROF_STRPOOL_H
#define SPROF_STRPOOL_H

typedef struct sprof_strpool sprof_strpool;

sprof_strpool *sprof_strpool_new(void);
void sprof_strpool_free(sprof_strpool *p);
/* The pooled copy of s (NULL on allocation failure). */
const char *sprof_strpool_intern(sprof_strpool *p, const char *s);

#endif
