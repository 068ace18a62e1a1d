/* libFuzzer harness: the offline tools' own ELF reader
 * (offline-tools/lib/src/elf_module.c), which opens the shared libraries a
 * trace's mappings name — paths that come from the (untrusted) trace. The
 * bytes are parsed in place (sprof_elf_open_mem), then every symbol is
 * looked up, file offsets are mapped through the segments, and .eh_frame is
 * compiled and queried, so each table it accepted is touched under ASan.
 * Seeds: this machine's vDSO and a real small shared library, stripped and
 * not. */
#include <stddef.h>
#include <stdint.h>

#include "elf_module.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    sprof_elf_module *m = sprof_elf_open_mem(data, size, "fuzz.so", err, sizeof err);
    if (!m)
        return 0;
    for (uint32_t i = 0; i < m->build_id_len; i++)
        sink += m->build_id[i];
    for (size_t i = 0; i < m->nsegments; i++) {
        uint64_t v;
        if (sprof_elf_offset_to_vaddr(m, m->segments[i].file_offset, &v) == 0)
            sink += v;
        sprof_cfi_row row;
        if (sprof_elf_cfi_lookup(m, m->segments[i].vaddr, &row) == 0)
            sink += row.lo;
    }
    for (size_t i = 0; i < m->nsymbols && i < 4096; i++) {
        const sprof_elf_symbol *s = sprof_elf_symbol_at(m, m->symbols[i].lo);
        if (s) {
            for (const char *p = s->name; *p; p++)
                sink += (unsigned char)*p;
        }
        sprof_cfi_row row;
        if (sprof_elf_cfi_lookup(m, m->symbols[i].lo, &row) == 0)
            sink += row.hi;
        if (m->symbols[i].hi > m->symbols[i].lo && sprof_elf_cfi_lookup(m, m->symbols[i].hi - 1, &row) == 0)
            sink += row.lo;
    }
    sprof_elf_close(m);
    return 0;
}
