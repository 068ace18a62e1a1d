/* libFuzzer harness: the Ruby name map of compiler-plugin/name_map.c, fed
 * the same bytes twice — as Spinel's symbols JSON (sprof_name_map_load_json)
 * and as a Spinel-generated C source (sprof_name_map_load_c_source, the
 * fallback when there is no JSON) — then indexed and queried with every
 * name and def line it accepted, so the strings and the by-line index it
 * built are all touched under ASan. Both loaders take a path, so the bytes
 * go through a memfd. Seeds: real symbols.json files written for the
 * example and the test fixtures, and the Spinel C sources beside them. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_memfd.h"
#include "name_map.h"
#include "rb_scopes.h"

static volatile size_t sink;

static void query_everything(sprof_name_map *m)
{
    sprof_name_map_index(m);
    sprof_map_entry *e, *tmp;
    HASH_ITER(hh, m->by_c, e, tmp)
    {
        sink += strlen(e->ruby) + e->kind + e->approx;
        if (sprof_name_map_find(m, e->c) != e)
            __builtin_trap(); /* a loaded name must find its own entry */
        sprof_scope_hit hit;
        sprof_name_map_scope(m, e->file, e->line, &hit);
        if (hit.method)
            sink += strlen(hit.method->c);
        if (e->file)
            sink += strlen(sprof_path_basename(e->file));
        sprof_name_map_scope(m, e->file, e->line + 1, &hit);
        sink += (size_t)hit.in_mapped_file + (hit.method != NULL) + (size_t)hit.guessed;
        if (hit.class_label)
            sink += strlen(hit.class_label);
    }
    sprof_scope_hit hit;
    sprof_name_map_scope(m, "x.rb", 1, &hit);
    sink += hit.method != NULL;
    sink += sprof_name_map_find(m, "sp_Foo__implicit_12_bar") != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_memfd("spinel_map", data, size, path, sizeof path);
    if (fd < 0)
        return 0;

    /* The same bytes as a .rb source for the scope scanner. */
    sprof_rb_scope *sc;
    size_t nsc;
    if (sprof_rb_scan_text((const char *)data, size, &sc, &nsc) == 0) {
        for (size_t i = 0; i < nsc; i++) {
            if (sc[i].hi < sc[i].lo)
                __builtin_trap(); /* a scope ends at or after its start */
            sink += sc[i].name ? strlen(sc[i].name) : 0;
        }
        sprof_rb_scopes_free(sc, nsc);
    }

    sprof_name_map m;
    sprof_name_map_init(&m);
    if (sprof_name_map_load_json(&m, path, 1, err, sizeof err) == 0)
        query_everything(&m);
    else
        sink += strlen(err);
    sprof_name_map_free(&m);

    sprof_name_map_init(&m);
    if (sprof_name_map_load_c_source(&m, path, err, sizeof err) == 0)
        query_everything(&m);
    else
        sink += strlen(err);
    sprof_name_map_free(&m);

    close(fd);
    return 0;
}
