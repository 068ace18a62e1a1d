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
        int in_file;
        const sprof_map_entry *enc = sprof_name_map_enclosing(m, e->file, e->line, &in_file);
        if (enc)
            sink += strlen(enc->c);
        if (e->file)
            sink += strlen(sprof_path_basename(e->file));
        enc = sprof_name_map_enclosing(m, e->file, e->line + 1, &in_file);
        sink += (size_t)in_file + (enc != NULL);
    }
    int in_file;
    sink += sprof_name_map_enclosing(m, "x.rb", 1, &in_file) != NULL;
    sink += sprof_name_map_find(m, "sp_Foo__implicit_12_bar") != NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_memfd("spinel_map", data, size, path, sizeof path);
    if (fd < 0)
        return 0;

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
