/* sp_runtime.h — the slice of Spinel's runtime that Spinel compiles into
 * every program from a header, reduced to what app.c uses: a mark/sweep
 * collector behind sp_gc_alloc, GC-root bookkeeping, strings, string and
 * float arrays, an integer queue, threads on pthreads, and the clock.
 *
 * Hand-written for sprof's example (Spinel is not installable in this
 * repository's CI); names and shapes follow Spinel's output. Only the main
 * thread allocates in the example, so the collector is single-threaded and
 * the root stack is per thread. */
#ifndef SP_RUNTIME_H
#define SP_RUNTIME_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- collector ---------------------------------------------------------- */

enum sp_type { SP_T_RAW, SP_T_STRING, SP_T_STRARRAY, SP_T_FLOATARRAY, SP_T_QUEUE, SP_T_PROC, SP_T_OBJECT };

typedef void (*sp_gc_scan_fn)(void *obj);

typedef struct sp_gc_hdr {
    struct sp_gc_hdr *next; /* every live object, newest first */
    sp_gc_scan_fn scan;     /* marks the object's children, NULL for leaves */
    uint32_t type;
    uint32_t marked;
    size_t size;
} sp_gc_hdr;

#ifndef SP_GC_THRESHOLD
#define SP_GC_THRESHOLD (512u * 1024u) /* bytes allocated between collections */
#endif
#define SP_GC_MAX_ROOTS 4096

static sp_gc_hdr *sp_gc_heap;
static size_t sp_gc_allocated, sp_gc_live_bytes;
static uint64_t sp_gc_collections;
static __thread void **sp_gc_roots[SP_GC_MAX_ROOTS];
static __thread int sp_gc_nroots;

static inline sp_gc_hdr *sp_gc_header(void *obj) { return (sp_gc_hdr *)obj - 1; }

static void sp_gc_fatal(const char *what)
{
    fprintf(stderr, "spinel runtime: %s\n", what);
    abort();
}

static inline void _sp_gc_root_push(void **slot)
{
    if (sp_gc_nroots == SP_GC_MAX_ROOTS)
        sp_gc_fatal("GC root stack overflow");
    sp_gc_roots[sp_gc_nroots++] = slot;
}

static inline void _sp_gc_root_pop(int n) { sp_gc_nroots -= n; }

/* __attribute__((cleanup)) target: leaves the root stack on scope exit. */
static inline void sp_gc_cleanup(void *slot)
{
    (void)slot;
    _sp_gc_root_pop(1);
}

#define SP_ROOTED __attribute__((cleanup(sp_gc_cleanup)))

void sp_gc_mark(void *obj)
{
    if (!obj)
        return;
    sp_gc_hdr *h = sp_gc_header(obj);
    if (h->marked)
        return;
    h->marked = 1;
    if (h->scan)
        h->scan(obj); /* objects nest shallowly in Spinel programs */
}

void sp_gc_mark_all(void)
{
    for (int i = 0; i < sp_gc_nroots; i++)
        if (*sp_gc_roots[i])
            sp_gc_mark(*sp_gc_roots[i]);
}

static void sp_gc_sweep(void)
{
    sp_gc_hdr **link = &sp_gc_heap;
    sp_gc_live_bytes = 0;
    while (*link) {
        sp_gc_hdr *h = *link;
        if (h->marked) {
            h->marked = 0;
            sp_gc_live_bytes += h->size;
            link = &h->next;
        } else {
            *link = h->next;
            free(h);
        }
    }
}

void sp_gc_collect(void)
{
    sp_gc_mark_all();
    sp_gc_sweep();
    sp_gc_allocated = 0;
    sp_gc_collections++;
}

void *sp_gc_alloc(size_t size, uint32_t type, sp_gc_scan_fn scan)
{
    if (sp_gc_allocated > SP_GC_THRESHOLD)
        sp_gc_collect();
    sp_gc_hdr *h = calloc(1, sizeof *h + size);
    if (!h)
        sp_gc_fatal("out of memory");
    h->type = type;
    h->scan = scan;
    h->size = size;
    h->next = sp_gc_heap;
    sp_gc_heap = h;
    sp_gc_allocated += size;
    return h + 1;
}

/* ---- strings ------------------------------------------------------------ */

typedef struct sp_String {
    int64_t len;
    char ptr[]; /* NUL-terminated */
} sp_String;

sp_String *sp_str_alloc(int64_t len)
{
    sp_String *s = sp_gc_alloc(sizeof(sp_String) + (size_t)len + 1, SP_T_STRING, NULL);
    s->len = len;
    return s;
}

sp_String *sp_String_new(const char *p, int64_t len)
{
    sp_String *s = sp_str_alloc(len);
    memcpy(s->ptr, p, (size_t)len);
    return s;
}

static inline sp_String *sp_String_lit(const char *p) { return sp_String_new(p, (int64_t)strlen(p)); }

sp_String *sp_String_upcase(const sp_String *s)
{
    sp_String *r = sp_str_alloc(s->len);
    for (int64_t i = 0; i < s->len; i++)
        r->ptr[i] = (char)toupper((unsigned char)s->ptr[i]);
    return r;
}

/* str << other: a new string (callers keep both operands rooted). */
sp_String *sp_String_append(sp_String *s, const sp_String *o)
{
    sp_String *r = sp_str_alloc(s->len + o->len);
    memcpy(r->ptr, s->ptr, (size_t)s->len);
    memcpy(r->ptr + s->len, o->ptr, (size_t)o->len);
    return r;
}

sp_String *sp_String_format(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        sp_gc_fatal("format failed");
    sp_String *s = sp_str_alloc(n);
    vsnprintf(s->ptr, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

/* ---- arrays ------------------------------------------------------------- */

typedef struct sp_StrArray {
    int64_t len, cap;
    sp_String **data; /* a SP_T_RAW block owned by the array */
} sp_StrArray;

static void sp_StrArray_gc_scan(void *obj)
{
    sp_StrArray *a = obj;
    if (a->data)
        sp_gc_mark(a->data);
    for (int64_t i = 0; i < a->len; i++)
        sp_gc_mark(a->data[i]);
}

sp_StrArray *sp_StrArray_new(void)
{
    return sp_gc_alloc(sizeof(sp_StrArray), SP_T_STRARRAY, sp_StrArray_gc_scan);
}

void sp_StrArray_push(sp_StrArray *a, sp_String *s)
{
    if (a->len == a->cap) {
        int64_t cap = a->cap ? a->cap * 2 : 8;
        sp_String **data = sp_gc_alloc((size_t)cap * sizeof *data, SP_T_RAW, NULL);
        if (a->len)
            memcpy(data, a->data, (size_t)a->len * sizeof *data);
        a->data = data;
        a->cap = cap;
    }
    a->data[a->len++] = s;
}

/* str.split(sep) with a one-character separator, empty fields dropped as Ruby's " " does. */
sp_StrArray *sp_String_split(const sp_String *s, char sep)
{
    sp_StrArray *a = sp_StrArray_new();
    sp_StrArray *SP_ROOTED root = a;
    _sp_gc_root_push((void **)&root);
    int64_t i = 0;
    while (i < s->len) {
        while (i < s->len && s->ptr[i] == sep)
            i++;
        int64_t start = i;
        while (i < s->len && s->ptr[i] != sep)
            i++;
        if (i > start) {
            sp_String *SP_ROOTED w = NULL;
            _sp_gc_root_push((void **)&w);
            w = sp_String_new(s->ptr + start, i - start);
            sp_StrArray_push(a, w);
        }
    }
    return a;
}

typedef struct sp_FloatArray {
    int64_t len;
    double data[];
} sp_FloatArray;

sp_FloatArray *sp_FloatArray_new(int64_t len, double fill)
{
    sp_FloatArray *a = sp_gc_alloc(sizeof(sp_FloatArray) + (size_t)len * sizeof(double), SP_T_FLOATARRAY, NULL);
    a->len = len;
    for (int64_t i = 0; i < len; i++)
        a->data[i] = fill;
    return a;
}

static inline double sp_FloatArray_aref(const sp_FloatArray *a, int64_t i) { return a->data[i]; }
static inline void sp_FloatArray_aset(sp_FloatArray *a, int64_t i, double v) { a->data[i] = v; }

/* ---- Queue of integers (Thread::Queue) ---------------------------------- */

#define SP_QUEUE_CAP 64

typedef struct sp_IntQueue {
    pthread_mutex_t mu;
    pthread_cond_t nonempty, nonfull;
    int head, count;
    int64_t items[SP_QUEUE_CAP];
} sp_IntQueue;

sp_IntQueue *sp_IntQueue_new(void)
{
    sp_IntQueue *q = sp_gc_alloc(sizeof(sp_IntQueue), SP_T_QUEUE, NULL);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    pthread_cond_init(&q->nonfull, NULL);
    return q;
}

void sp_IntQueue_push(sp_IntQueue *q, int64_t v)
{
    pthread_mutex_lock(&q->mu);
    while (q->count == SP_QUEUE_CAP)
        pthread_cond_wait(&q->nonfull, &q->mu);
    q->items[(q->head + q->count++) % SP_QUEUE_CAP] = v;
    pthread_cond_signal(&q->nonempty);
    pthread_mutex_unlock(&q->mu);
}

int64_t sp_IntQueue_pop(sp_IntQueue *q)
{
    pthread_mutex_lock(&q->mu);
    while (q->count == 0)
        pthread_cond_wait(&q->nonempty, &q->mu);
    int64_t v = q->items[q->head];
    q->head = (q->head + 1) % SP_QUEUE_CAP;
    q->count--;
    pthread_cond_signal(&q->nonfull);
    pthread_mutex_unlock(&q->mu);
    return v;
}

/* ---- procs and threads ---------------------------------------------------- */

typedef struct sp_Proc sp_Proc;
typedef void (*sp_proc_fn)(sp_Proc *self);
struct sp_Proc {
    sp_proc_fn fn;
    void *env[4]; /* captured variables */
};

static void sp_Proc_gc_scan(void *obj)
{
    sp_Proc *p = obj;
    for (int i = 0; i < 4; i++)
        if (p->env[i])
            sp_gc_mark(p->env[i]);
}

sp_Proc *sp_Proc_new(sp_proc_fn fn)
{
    sp_Proc *p = sp_gc_alloc(sizeof(sp_Proc), SP_T_PROC, sp_Proc_gc_scan);
    p->fn = fn;
    return p;
}

typedef struct sp_Thread {
    pthread_t tid;
    sp_Proc *body;
} sp_Thread;

static void sp_Thread_gc_scan(void *obj)
{
    sp_gc_mark(((sp_Thread *)obj)->body);
}

static void *sp_thread_start(void *arg)
{
    sp_Thread *t = arg;
    t->body->fn(t->body);
    return NULL;
}

/* The caller keeps the returned thread rooted until it is joined. */
sp_Thread *sp_Thread_new(sp_Proc *body)
{
    static unsigned n;
    sp_Thread *t = sp_gc_alloc(sizeof(sp_Thread), SP_T_OBJECT, sp_Thread_gc_scan);
    t->body = body;
    int err = pthread_create(&t->tid, NULL, sp_thread_start, t);
    if (err) {
        errno = err;
        perror("spinel runtime: Thread.new");
        exit(1);
    }
    char name[16];
    snprintf(name, sizeof name, "sp-thread-%u", ++n % 10000u);
    pthread_setname_np(t->tid, name);
    return t;
}

void sp_Thread_join(sp_Thread *t)
{
    pthread_join(t->tid, NULL);
}

/* ---- Process, ENV, File ---------------------------------------------------- */

int64_t sp_Process_clock_gettime_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline sp_String *sp_ENV_aref(const char *name)
{
    const char *v = getenv(name);
    return v ? sp_String_lit(v) : NULL;
}

void sp_File_write(const sp_String *path, const sp_String *data)
{
    FILE *f = fopen(path->ptr, "w");
    if (!f || fwrite(data->ptr, 1, (size_t)data->len, f) != (size_t)data->len || fclose(f) != 0) {
        fprintf(stderr, "%s: %s\n", path->ptr, strerror(errno));
        exit(1);
    }
}

void sp_IO_print(FILE *f, const sp_String *s)
{
    fwrite(s->ptr, 1, (size_t)s->len, f);
}

double sp_String_to_f(const sp_String *s)
{
    return strtod(s->ptr, NULL); /* Ruby's to_f: leading number, else 0.0 */
}

static int sp_argc;
static char **sp_argv;

static inline void sp_runtime_init(int argc, char **argv)
{
    sp_argc = argc;
    sp_argv = argv;
}

static inline sp_String *sp_ARGV_aref(int64_t i)
{
    return i + 1 < sp_argc ? sp_String_lit(sp_argv[i + 1]) : NULL;
}

#endif
