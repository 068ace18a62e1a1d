/* Randomised check of the writer + reader against a brute-force model:
 * random functions (some nested inside others), properly nested inline
 * trees with multi-range nodes, line rows with end markers. Every lookup at
 * every address must match the model (smallest covering function, deepest
 * covering inline node, call-site lines up the chain, the line row covering
 * the address), and adding the same content in a
 * shuffled order must give the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sprof/symmap.h"

#define MAXF 40
#define MAXI 400
#define MAXL 600

typedef struct mfunc { uint64_t lo, hi; char name[16]; } mfunc;
typedef struct minl {
    int func, parent, depth;
    uint64_t r[2][2];
    int nr;
    char name[16];
    uint32_t call_line;
} minl;
typedef struct mline { uint64_t addr; uint32_t line; } mline;

static mfunc F[MAXF];
static minl I[MAXI];
static mline L[MAXL];
static int nf, ni, nl;
static uint64_t rng;

static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

static int covers(const minl *in, uint64_t a)
{
    for (int k = 0; k < in->nr; k++)
        if (in->r[k][0] <= a && a < in->r[k][1])
            return 1;
    return 0;
}

/* A child range strictly inside one of the parent's ranges (or the function). */
static int make_child(int f, int parent, minl *out)
{
    uint64_t lo, hi;
    if (parent < 0) {
        lo = F[f].lo;
        hi = F[f].hi;
    } else {
        int k = (int)rnd((uint64_t)I[parent].nr);
        lo = I[parent].r[k][0];
        hi = I[parent].r[k][1];
    }
    if (hi - lo < 4)
        return -1;
    uint64_t a = lo + rnd(hi - lo - 2), b = a + 1 + rnd(hi - a - 1);
    out->r[0][0] = a;
    out->r[0][1] = b;
    out->nr = 1;
    /* a second range, disjoint from the first, sometimes */
    if (b + 2 < hi && rnd(3) == 0) {
        uint64_t c = b + 1 + rnd(hi - b - 2);
        out->r[1][0] = c;
        out->r[1][1] = c + 1 + rnd(hi - c - 1);
        out->nr = 2;
    }
    return 0;
}

static void generate(void)
{
    nf = ni = nl = 0;
    uint64_t at = 0x1000;
    for (int i = 0; i < 30; i++) {
        at += rnd(3) == 0 ? rnd(64) : 0; /* gaps */
        uint64_t size = 16 + rnd(200);
        F[nf].lo = at;
        F[nf].hi = at + size;
        snprintf(F[nf].name, sizeof(F[nf].name), "f%d", nf);
        nf++;
        at += size;
    }
    /* functions nested in others (smaller, distinct sizes), e.g. local symbols */
    for (int i = 0; i < 8; i++) {
        const mfunc *outer = &F[rnd(30)];
        uint64_t lo = outer->lo + 1 + rnd((outer->hi - outer->lo) / 2);
        uint64_t hi = lo + 1 + rnd((outer->hi - lo) / 2);
        F[nf].lo = lo;
        F[nf].hi = hi;
        snprintf(F[nf].name, sizeof(F[nf].name), "g%d", nf);
        nf++;
    }
    for (int t = 0; t < 300 && ni < MAXI; t++) {
        int f = (int)rnd((uint64_t)nf);
        int parent = -1;
        /* pick a parent among this function's nodes, sometimes */
        if (rnd(2))
            for (int j = ni - 1; j >= 0; j--)
                if (I[j].func == f && rnd(2)) {
                    parent = j;
                    break;
                }
        minl in;
        memset(&in, 0, sizeof(in));
        if (make_child(f, parent, &in) != 0)
            continue;
        /* siblings must not overlap: reject overlaps with any node of the same depth chain */
        int bad = 0;
        for (int j = 0; j < ni && !bad; j++)
            if (I[j].func == f && I[j].parent == parent)
                for (int k = 0; k < in.nr; k++)
                    for (int q = 0; q < I[j].nr; q++)
                        if (in.r[k][0] < I[j].r[q][1] && I[j].r[q][0] < in.r[k][1])
                            bad = 1;
        if (bad)
            continue;
        in.func = f;
        in.parent = parent;
        in.depth = parent < 0 ? 1 : I[parent].depth + 1;
        snprintf(in.name, sizeof(in.name), "i%d", ni);
        in.call_line = 1000 + (uint32_t)ni;
        I[ni++] = in;
    }
    uint64_t a = 0x1000;
    while (nl < MAXL && a < at) {
        a += 1 + rnd(12);
        L[nl].addr = a;
        L[nl].line = rnd(8) == 0 ? 0 : 1 + (uint32_t)rnd(50);
        nl++;
    }
}

static uint8_t *write_all(const int *forder, const int *lorder, size_t *size)
{
    sprof_symmap_writer *w = sprof_symmap_writer_new();
    long widx[MAXF], iidx[MAXI];
    for (int k = 0; k < nf; k++) {
        int i = forder[k];
        sprof_symmap_names n = { F[i].name, NULL, "m.rb", (uint32_t)i, SPROF_KIND_IMETH, SPROF_COST_USER, 0 };
        widx[i] = sprof_symmap_writer_add_function(w, F[i].lo, F[i].hi, &n);
        CHECK(widx[i] >= 0);
    }
    /* inlines: parents first (index order), functions interleaved as generated */
    for (int i = 0; i < ni; i++) {
        sprof_symmap_names n = { I[i].name, NULL, "m.rb", 7, SPROF_KIND_IMETH, SPROF_COST_USER, 0 };
        iidx[i] = sprof_symmap_writer_add_inline(w, widx[I[i].func], I[i].parent < 0 ? -1 : iidx[I[i].parent],
                                                 (const uint64_t(*)[2])I[i].r, (size_t)I[i].nr, &n, "call.rb",
                                                 I[i].call_line);
        CHECK(iidx[i] >= 0);
    }
    for (int k = 0; k < nl; k++) {
        int i = lorder[k];
        if (L[i].line)
            sprof_symmap_writer_add_line(w, L[i].addr, "m.rb", L[i].line);
        else
            sprof_symmap_writer_end_line_sequence(w, L[i].addr);
    }
    uint8_t *buf;
    char err[256];
    CHECK(sprof_symmap_writer_to_memory(w, &buf, size, err, sizeof(err)) == 0);
    sprof_symmap_writer_free(w);
    return buf;
}

static void shuffle(int *v, int n)
{
    for (int i = 0; i < n; i++)
        v[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((uint64_t)i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

static void check_address(const sprof_symmap *m, uint64_t a)
{
    int best = -1;
    for (int i = 0; i < nf; i++)
        if (F[i].lo <= a && a < F[i].hi &&
            (best < 0 || F[i].hi - F[i].lo < F[best].hi - F[best].lo))
            best = i;
    sprof_frame fr[32];
    size_t n = sprof_symmap_lookup(m, a, fr, 32);
    if (best < 0) {
        CHECK(n == 0);
        return;
    }
    int inner = -1;
    for (int i = 0; i < ni; i++)
        if (I[i].func == best && covers(&I[i], a) && (inner < 0 || I[i].depth > I[inner].depth))
            inner = i;
    uint32_t line = 0;
    for (int i = 0; i < nl; i++)
        if (L[i].addr <= a)
            line = L[i].line; /* the row covering a, as in DWARF */
    size_t k = 0;
    for (int i = inner; i >= 0; i = I[i].parent, k++) {
        if (k >= n || strcmp(fr[k].c_name, I[i].name) != 0 || fr[k].line != line ||
            !(fr[k].flags & SPROF_FRAME_INLINED)) {
            fprintf(stderr, "0x%llx frame %zu: got %s:%u, want %s:%u\n", (unsigned long long)a, k,
                    k < n ? fr[k].c_name : "-", k < n ? fr[k].line : 0, I[i].name, line);
            exit(1);
        }
        line = I[i].call_line;
    }
    if (k + 1 != n || strcmp(fr[k].c_name, F[best].name) != 0 || fr[k].line != line ||
        fr[k].func_lo != F[best].lo) {
        fprintf(stderr, "0x%llx function frame: got %zu frames, %s:%u; want %zu, %s:%u\n",
                (unsigned long long)a, n, k < n ? fr[k].c_name : "-", k < n ? fr[k].line : 0, k + 1,
                F[best].name, line);
        exit(1);
    }
}

int main(void)
{
    size_t checked = 0;
    for (int round = 0; round < 40; round++) {
        rng = 0x1234567ull + (uint64_t)round * 7919;
        generate();
        int fo[MAXF], lo[MAXL];
        for (int i = 0; i < nf; i++)
            fo[i] = i;
        for (int i = 0; i < nl; i++)
            lo[i] = i;
        size_t n1, n2;
        uint8_t *b1 = write_all(fo, lo, &n1);
        shuffle(fo, nf);
        shuffle(lo, nl);
        uint8_t *b2 = write_all(fo, lo, &n2);
        CHECK(n1 == n2 && memcmp(b1, b2, n1) == 0);
        char err[256];
        sprof_symmap *m = sprof_symmap_open_mem(b1, n1, "model", err, sizeof(err));
        if (!m) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        uint64_t end = F[0].hi;
        for (int i = 0; i < nf; i++)
            if (F[i].hi > end)
                end = F[i].hi;
        for (uint64_t a = 0xff0; a < end + 16; a++, checked++)
            check_address(m, a);
        sprof_symmap_close(m);
        free(b1);
        free(b2);
    }
    printf("model: %zu addresses over 40 random maps match the brute-force model; shuffled adds give "
           "identical bytes\n", checked);
    return 0;
}
