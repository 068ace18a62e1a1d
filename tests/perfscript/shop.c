/* shop.c — shop.rb as Spinel would compile it, small enough to reason
 * about every address: Item#label is a short method (static inline, so it
 * exists only as an inlined frame inside Shop#restock), Shop#restock and
 * Shop#audit are real functions, and the allocator records its call sites
 * the way SPINEL_ALLOC_SITES does (return addresses printed by glibc's
 * backtrace_symbols). Built by the tests with -O2 -g -fno-omit-frame-pointer.
 *
 * Env SHOP_ALLOC_REPORT=1: print the allocation report on stdout, one line
 * per (site pair, type): "alloc;<caller's site>;<site>;<Type> <count>". */
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sp_String {
    size_t len;
    char *ptr;
} sp_String;

typedef struct sp_Shop {
    sp_String *items[16];
    int64_t nitems;
} sp_Shop;

#define MAX_SITES 16
static struct {
    void *ret[2];
    const char *type;
    long n;
} sites[MAX_SITES];
static int nsites;

static void sp_alloc_note(void *ret0, void *ret1, const char *type)
{
    for (int i = 0; i < nsites; i++) {
        if (sites[i].ret[0] == ret0 && sites[i].ret[1] == ret1 && sites[i].type == type) {
            sites[i].n++;
            return;
        }
    }
    if (nsites < MAX_SITES) {
        sites[nsites].ret[0] = ret0;
        sites[nsites].ret[1] = ret1;
        sites[nsites].type = type;
        sites[nsites++].n = 1;
    }
}

__attribute__((noinline)) static sp_String *sp_String_new(const char *s)
{
    sp_alloc_note(__builtin_return_address(0), __builtin_return_address(1), "String");
    sp_String *r = calloc(1, sizeof *r);
    r->len = strlen(s);
    r->ptr = strdup(s);
    return r;
}

static void keep(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

#line 2 "shop.rb"
static inline __attribute__((always_inline)) sp_String *sp_Item_label(int64_t i)
{
#line 3 "shop.rb"
    return sp_String_new(i & 1 ? "odd item" : "item");
}

#line 7 "shop.rb"
__attribute__((noinline)) static void sp_Shop_restock(sp_Shop *self, int64_t n)
{
#line 8 "shop.rb"
    for (int64_t i = 0; i < n; i++) {
        sp_String *s = sp_Item_label(i);
        keep(s);
        self->items[self->nitems++ & 15] = s;
    }
}

#line 10 "shop.rb"
__attribute__((noinline)) static sp_String *sp_Shop_audit(sp_Shop *self)
{
#line 11 "shop.rb"
    sp_String *s = sp_String_new("audit");
    keep(s);
    keep(self);
    return s;
}

#line 14 "shop.rb"
int main(void)
{
    static sp_Shop shop;
#line 15 "shop.rb"
    sp_Shop_restock(&shop, 5);
#line 16 "shop.rb"
    keep(sp_Shop_audit(&shop));
#line 17 "shop.rb"
    if (getenv("SHOP_ALLOC_REPORT")) {
        for (int i = 0; i < nsites; i++) {
            char **outer = backtrace_symbols(&sites[i].ret[1], 1);
            char **inner = backtrace_symbols(&sites[i].ret[0], 1);
            if (outer && inner)
                printf("alloc;%s;%s;%s %ld\n", outer[0], inner[0], sites[i].type, sites[i].n);
            free(outer);
            free(inner);
        }
    }
    return 0;
}
