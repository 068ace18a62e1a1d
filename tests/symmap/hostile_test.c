/* Hostile symmaps: every prefix of a valid file, thousands of random byte
 * flips and u32 overwrites. open_mem must either refuse with one error
 * line, or succeed, after which lookups everywhere and a full dump must
 * stay inside the buffer (run under ASan in CI: each candidate lives in an
 * exact-size heap block, so any stray read is caught). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "sprof/symmap.h"

static unsigned long long sink; /* keeps the reads from being optimised out */

static void touch(const char *s)
{
    sink += strlen(s);
}

/* Read everything the API can reach. */
static void exercise(const sprof_symmap *m, uint64_t seed)
{
    sprof_frame f[16];
    for (uint64_t a = 0xff0; a < 0x1310; a += 3) {
        size_t n = sprof_symmap_lookup(m, a, f, 16);
        for (size_t i = 0; i < n && i < 16; i++) {
            touch(f[i].c_name);
            touch(f[i].ruby_name);
            touch(f[i].file);
        }
        sprof_cfi_row r;
        if (sprof_symmap_cfi_lookup(m, a, &r) == 0)
            sink += r.lo;
    }
    for (int k = 0; k < 64; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = sprof_symmap_lookup(m, seed, f, 2);
        sink += n;
        uint64_t va;
        if (sprof_symmap_file_offset_to_vaddr(m, seed >> 40, &va) == 0)
            sink += va;
    }
    for (size_t i = 0; i < sprof_symmap_function_count(m); i++) {
        sprof_symmap_function(m, i, f);
        touch(f->c_name);
        touch(f->ruby_name);
        touch(f->file);
    }
    for (size_t i = 0; i < sprof_symmap_inline_count(m); i++) {
        size_t parent, fi;
        const char *cf;
        uint32_t cl;
        sprof_symmap_inline_at(m, i, f, &parent, &fi, &cf, &cl);
        touch(f->c_name);
        touch(cf);
    }
    for (size_t i = 0; i < sprof_symmap_interval_count(m); i++) {
        uint64_t lo, hi;
        size_t node;
        sprof_symmap_interval_at(m, i, &lo, &hi, &node);
        sink += lo + hi + node;
    }
    for (size_t i = 0; i < sprof_symmap_line_count(m); i++) {
        uint64_t a;
        const char *file;
        uint32_t line;
        sprof_symmap_line_at(m, i, &a, &file, &line);
        touch(file);
    }
    for (size_t i = 0; i < sprof_symmap_cfi_count(m); i++) {
        sprof_cfi_row r;
        sprof_symmap_cfi_row_at(m, i, &r);
        sink += r.hi;
    }
    for (size_t i = 0; i < sprof_symmap_segment_count(m); i++)
        sink += sprof_symmap_segment(m, i)->vaddr;
    size_t idlen;
    const uint8_t *id = sprof_symmap_build_id(m, &idlen);
    for (size_t i = 0; i < idlen; i++)
        sink += id[i];
    touch(sprof_symmap_binary_path(m));
}

/* Try one candidate image; returns 1 if it was accepted. */
static int try_image(const uint8_t *bytes, size_t n, uint64_t seed)
{
    uint8_t *copy = malloc(n ? n : 1);
    CHECK(copy);
    memcpy(copy, bytes, n);
    char err[256] = "";
    sprof_symmap *m = sprof_symmap_open_mem(copy, n, "hostile.symmap", err, sizeof(err));
    int ok = m != NULL;
    if (m) {
        exercise(m, seed);
        sprof_symmap_close(m);
    } else {
        CHECK(strncmp(err, "hostile.symmap: ", 16) == 0);
        CHECK(strlen(err) > 16 && strchr(err, '\n') == NULL);
    }
    free(copy);
    return ok;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(void)
{
    size_t size;
    uint8_t *good = fixture_bytes(0, &size);
    CHECK(try_image(good, size, 1));

    /* Every prefix: refused unless every table is present (only the final
     * alignment padding may be missing). */
    size_t accepted_prefixes = 0;
    for (size_t len = 0; len < size; len++) {
        if (try_image(good, len, len)) {
            CHECK(size - len < 8);
            accepted_prefixes++;
        }
    }
    char err[256];
    uint8_t *copy = malloc(size);
    memcpy(copy, good, 100);
    CHECK(sprof_symmap_open_mem(copy, 100, "app.symmap", err, sizeof(err)) == NULL);
    printf("prefix 100 error: %s\n", err);
    memcpy(copy, good, size);
    memcpy(copy, "SPROFSYN", 8);
    CHECK(sprof_symmap_open_mem(copy, size, "app.symmap", err, sizeof(err)) == NULL);
    printf("bad magic error: %s\n", err);
    CHECK(strcmp(err, "app.symmap: not a symmap (bad magic)") == 0);
    free(copy);

    uint64_t rng = 0x9e3779b97f4a7c15ull;
#define NEXT() xorshift(&rng)
    uint8_t *img = malloc(size);
    size_t accepted = 0, tries = 0;
    for (int i = 0; i < 6000; i++, tries++) {
        memcpy(img, good, size);
        size_t pos = NEXT() % size;
        img[pos] ^= (uint8_t)(1u << (NEXT() % 8));
        accepted += try_image(img, size, NEXT());
    }
    static const uint32_t nasty[] = { 0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffff0, 8, 0x1000 };
    for (int i = 0; i < 6000; i++, tries++) {
        memcpy(img, good, size);
        size_t pos = NEXT() % (size - 3);
        uint32_t v = (NEXT() & 1) ? (uint32_t)NEXT() : nasty[NEXT() % 8];
        memcpy(img + pos, &v, 4);
        accepted += try_image(img, size, NEXT());
    }
    /* Several corruptions at once. */
    for (int i = 0; i < 3000; i++, tries++) {
        memcpy(img, good, size);
        for (int k = 0; k < 4; k++)
            img[NEXT() % size] = (uint8_t)NEXT();
        accepted += try_image(img, size, NEXT());
    }
    free(img);
    free(good);
    printf("hostile: %zu-byte symmap, %zu prefixes accepted (padding only), %zu of %zu corrupted images "
           "accepted and fully exercised without error (sink %llu)\n",
           size, accepted_prefixes, accepted, tries, sink % 10);
    return 0;
}
