/* sprof test fixture shaped like Spinel's output for fixture.rb: Ruby
 * methods as static sp_* functions with #line directives into the .rb, a
 * forced-inline short method, a proc as _sp_proc_fn_1, GC root push/pop
 * through __attribute__((cleanup)), an allocator and a string helper. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t mrb_int;

/* ---- runtime part compiled into the program (no .rb #line) ---- */
static size_t sp_gc_bytes;
void **sp_gc_roots[256]; /* extern: the root stores must survive -O2 */
int sp_gc_nroots;
volatile mrb_int sp_scale_calls;

__attribute__((noinline)) static void *sp_gc_alloc(size_t n)
{
    sp_gc_bytes += n;
    void *p = calloc(1, n);
    if (!p)
        abort();
    return p;
}

static inline void _sp_gc_root_push(void **slot) { sp_gc_roots[sp_gc_nroots++ & 255] = slot; }
static inline void _sp_gc_root_pop(void) { sp_gc_nroots--; }
static inline void sp_gc_cleanup(void **p) { (void)p; _sp_gc_root_pop(); }
#define SP_GC_ROOT(v) __attribute__((cleanup(sp_gc_cleanup))) void *v = NULL; _sp_gc_root_push(&v)

__attribute__((noinline)) static char *sp_str_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sp_gc_alloc(n);
    memcpy(d, s, n);
    return d;
}

typedef struct sp_Shape { mrb_int w, h; } sp_Shape;
typedef struct sp_Vec2 { mrb_int x, y; } sp_Vec2;
typedef struct sp_Geo_Box { mrb_int n; } sp_Geo_Box;
typedef struct sp_Proc { mrb_int (*fn)(void *env, mrb_int x); void *env; } sp_Proc;

/* ---- Ruby methods ---- */
#line 3 "fixture.rb"
__attribute__((noinline)) static mrb_int sp_Shape_area(sp_Shape *self)
{
#line 4 "fixture.rb"
    return self->w * self->h;
}

#line 9 "fixture.rb"
__attribute__((noinline)) static sp_Vec2 *sp_Vec2__plus(sp_Vec2 *self, sp_Vec2 *other)
{
#line 10 "fixture.rb"
    SP_GC_ROOT(tmp);
#line 10 "fixture.rb"
    sp_Vec2 *r = sp_gc_alloc(sizeof *r);
#line 10 "fixture.rb"
    tmp = r;
#line 10 "fixture.rb"
    r->x = self->x + other->x;
#line 10 "fixture.rb"
    r->y = self->y + other->y;
#line 10 "fixture.rb"
    return r;
}

#line 13 "fixture.rb"
__attribute__((noinline)) static mrb_int sp_Vec2_len2(sp_Vec2 *self)
{
#line 14 "fixture.rb"
    return self->x * self->x + self->y * self->y;
}

#line 20 "fixture.rb"
__attribute__((noinline)) static sp_Geo_Box *sp_Geo_Box_cls_make(mrb_int n)
{
#line 21 "fixture.rb"
    sp_Geo_Box *b = sp_gc_alloc(sizeof *b);
#line 21 "fixture.rb"
    b->n = n;
#line 21 "fixture.rb"
    return b;
}

#line 25 "fixture.rb"
__attribute__((noinline)) static mrb_int sp_Geo_cls_dist2(mrb_int a, mrb_int b)
{
#line 26 "fixture.rb"
    return (a - b) * (a - b);
}

#line 30 "fixture.rb"
__attribute__((noinline)) static mrb_int sp_fib(mrb_int n)
{
#line 31 "fixture.rb"
    return n < 2 ? n : sp_fib(n - 1) + sp_fib(n - 2);
}

#line 34 "fixture.rb"
static inline __attribute__((always_inline)) mrb_int sp_scale(mrb_int v)
{
#line 35 "fixture.rb"
    sp_scale_calls = sp_scale_calls + v;
#line 35 "fixture.rb"
    return v * 3;
}

struct run_env { mrb_int total; };

#line 40 "fixture.rb"
__attribute__((noinline)) static mrb_int _sp_proc_fn_1(void *env, mrb_int x)
{
#line 40 "fixture.rb"
    return x + ((struct run_env *)env)->total;
}

#line 38 "fixture.rb"
__attribute__((noinline)) static mrb_int sp_run(mrb_int n)
{
    struct run_env env;
#line 39 "fixture.rb"
    env.total = sp_scale(n);
#line 40 "fixture.rb"
    SP_GC_ROOT(holder);
#line 40 "fixture.rb"
    sp_Proc *adder = sp_gc_alloc(sizeof *adder);
#line 40 "fixture.rb"
    holder = adder;
#line 40 "fixture.rb"
    adder->fn = _sp_proc_fn_1;
#line 40 "fixture.rb"
    adder->env = &env;
#line 41 "fixture.rb"
    env.total += adder->fn(adder->env, n);
#line 42 "fixture.rb"
    env.total += sp_scale(env.total);
#line 43 "fixture.rb"
    return env.total;
}

struct fiber { mrb_int (*body)(void *arg); void *arg; };

#line 49 "fixture.rb"
__attribute__((noinline)) static mrb_int _fiber_body_1(void *arg)
{
#line 49 "fixture.rb"
    return *(mrb_int *)arg * 2;
}

#line 48 "fixture.rb"
__attribute__((noinline)) static mrb_int sp_pump(mrb_int n)
{
#line 49 "fixture.rb"
    struct fiber *f = sp_gc_alloc(sizeof *f);
#line 49 "fixture.rb"
    f->body = _fiber_body_1;
#line 49 "fixture.rb"
    f->arg = &n;
#line 50 "fixture.rb"
    return f->body(f->arg);
}

#line 46 "fixture.rb"
int main(int argc, char **argv)
{
#line 46 "fixture.rb"
    (void)argv;
#line 46 "fixture.rb"
    sp_Shape s = { 3, argc + 3 };
#line 46 "fixture.rb"
    sp_Vec2 a = { 1, 2 }, b = { 3, argc };
#line 46 "fixture.rb"
    sp_Vec2 *c = sp_Vec2__plus(&a, &b);
#line 46 "fixture.rb"
    sp_Geo_Box *box = sp_Geo_Box_cls_make(argc);
#line 46 "fixture.rb"
    char *hello = sp_str_dup("fixture");
#line 46 "fixture.rb"
    mrb_int r = sp_run(sp_fib(20 + argc - 1)) + sp_pump(argc);
#line 46 "fixture.rb"
    printf("%lld %lld %lld %lld %lld %s\n", (long long)r, (long long)sp_Shape_area(&s),
           (long long)sp_Vec2_len2(c), (long long)sp_Geo_cls_dist2(box->n, 7), (long long)sp_gc_bytes,
           hello);
#line 46 "fixture.rb"
    return 0;
}
