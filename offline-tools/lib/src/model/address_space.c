/* Runtime PC -> module + file offset, from a trace's MAPPING records;
 * modules (ELF files) cached per path and build-id. */
#include "address_space.h"
#include "jit_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

sprof_module *sprof_module_get(sprof_module_cache *c, const char *path, const uint8_t *build_id,
                               uint32_t build_id_len, int is_main)
{
    if (build_id_len > 32)
        build_id_len = 32;
    size_t plen = strlen(path);
    char *key = malloc(plen + 2 + 2 * 32 + 1);
    if (!key)
        return NULL;
    int off = sprintf(key, "%c", is_main ? 'M' : 'L');
    for (uint32_t i = 0; i < build_id_len; i++)
        off += sprintf(key + off, "%02x", build_id[i]);
    key[off++] = '/';
    memcpy(key + off, path, plen + 1);
    sprof_module *m;
    HASH_FIND_STR(c->table, key, m);
    if (m) {
        free(key);
        return m;
    }
    m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        free(key);
        return NULL;
    }
    m->key = key;
    m->id = c->next_id++;
    const char *slash = strrchr(m->path, '/');
    m->basename = slash && slash[1] ? slash + 1 : m->path;
    memcpy(m->build_id, build_id, build_id_len);
    m->build_id_len = build_id_len;
    m->is_main = is_main;
    HASH_ADD_KEYPTR(hh, c->table, m->key, strlen(m->key), m);
    return m;
}

/* This process's own vDSO text mapping, from /proc/self/maps. */
static int own_vdso(const void **data, size_t *size)
{
    unsigned long base = getauxval(AT_SYSINFO_EHDR);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!base || !f) {
        if (f)
            fclose(f);
        return -1;
    }
    char line[512];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base) {
            *data = (const void *)lo;
            *size = hi - lo;
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

sprof_elf_module *sprof_module_elf(sprof_module *m)
{
    if (m->elf_state == 0) {
        m->elf_state = -1;
        char err[512];
        /* The traced process's vDSO is not a file. Traces are usually folded
         * on the machine that recorded them: use our own vDSO when its size
         * matches the traced mapping (same kernel build, in practice). */
        const void *vdso;
        size_t vdso_size;
        if (strcmp(m->path, "[vdso]") == 0 && m->mapped_size && own_vdso(&vdso, &vdso_size) == 0 &&
            vdso_size == m->mapped_size &&
            (m->elf = sprof_elf_open_mem(vdso, vdso_size, "[vdso]", err, sizeof err)) != NULL) {
            m->elf_state = 1;
            return m->elf;
        }
        /* "[vdso]", "[anon:...]", deleted files: nothing to read */
        if (m->path[0] == '/' && (m->elf = sprof_elf_open(m->path, err, sizeof err)) != NULL) {
            if (m->build_id_len == 0 || (m->elf->build_id_len == m->build_id_len &&
                                         memcmp(m->elf->build_id, m->build_id, m->build_id_len) == 0)) {
                m->elf_state = 1;
            } else {
                sprof_elf_close(m->elf); /* another build of the library is installed now */
                m->elf = NULL;
            }
        }
    }
    return m->elf_state == 1 ? m->elf : NULL;
}

void sprof_module_cache_free(sprof_module_cache *c)
{
    sprof_module *m, *tmp;
    HASH_ITER(hh, c->table, m, tmp) {
        HASH_DEL(c->table, m);
        sprof_elf_close(m->elf);
        sprof_jit_map_free(m->jit);
        free(m->key);
        free(m->path);
        free(m);
    }
}

int sprof_as_add(sprof_address_space *as, uint64_t start, uint64_t end, uint64_t file_offset,
                 sprof_module *mod)
{
    if (end <= start)
        return 0;
    if (as->n == as->cap) {
        size_t cap = as->cap ? as->cap * 2 : 64;
        sprof_map_entry *v = realloc(as->v, cap * sizeof *v);
        if (!v)
            return -1;
        as->v = v;
        as->cap = cap;
    }
    as->v[as->n] = (sprof_map_entry){ start, end, file_offset, (uint32_t)as->n, mod };
    as->n++;
    return 0;
}

static int entry_order(const void *a, const void *b)
{
    const sprof_map_entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

void sprof_as_finish(sprof_address_space *as)
{
    if (as->n)
        qsort(as->v, as->n, sizeof *as->v, entry_order);
}

const sprof_map_entry *sprof_as_find(const sprof_address_space *as, uint64_t pc)
{
    size_t lo = 0, hi = as->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (as->v[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* the latest mapping starting at or below pc that covers it */
    const sprof_map_entry *best = NULL;
    for (size_t i = lo; i > 0 && lo - i < 8; i--) {
        const sprof_map_entry *e = &as->v[i - 1];
        if (pc < e->end && (!best || e->order > best->order))
            best = e;
    }
    return best;
}

void sprof_as_free(sprof_address_space *as)
{
    free(as->v);
    memset(as, 0, sizeof *as);
}
