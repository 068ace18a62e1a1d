/* Lays the built tables out as a version-1 symmap image in memory
 * (docs/symmap-format.md): header, section table, 8-aligned tables. */
#include <stdlib.h>
#include <string.h>

#include "symmap_format.h"
#include "writer_internal.h"

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

int sprof_symmap_writer_to_memory(sprof_symmap_writer *w, uint8_t **out, size_t *size,
                                  char *err, size_t errlen)
{
    *out = NULL;
    *size = 0;
    if (w->failed) {
        wset_err(err, errlen, "out of memory while collecting symbols");
        return -1;
    }
    wtables t;
    memset(&t, 0, sizeof(t));
    if (wtables_build(w, &t, err, errlen) != 0) {
        wtables_free(&t);
        return -1;
    }
    symmap_section_entry sec[SYMMAP_SEC_COUNT_V1];
    memset(sec, 0, sizeof(sec));
    sec[SYMMAP_SEC_STRINGS] = (symmap_section_entry){ 0, t.strings_size, 1, 0 };
    sec[SYMMAP_SEC_FUNCTIONS] = (symmap_section_entry){ 0, w->funcs.n, sizeof(symmap_func), 0 };
    sec[SYMMAP_SEC_FRANGES] = (symmap_section_entry){ 0, t.nfranges, sizeof(symmap_frange), 0 };
    sec[SYMMAP_SEC_NODES] = (symmap_section_entry){ 0, t.nnodes, sizeof(symmap_node), 0 };
    sec[SYMMAP_SEC_INTERVALS] = (symmap_section_entry){ 0, t.intervals.n, sizeof(symmap_interval), 0 };
    sec[SYMMAP_SEC_LINES] = (symmap_section_entry){ 0, t.nlines, sizeof(symmap_line), 0 };
    sec[SYMMAP_SEC_CFI] = (symmap_section_entry){ 0, t.ncfi, sizeof(symmap_cfi), 0 };
    sec[SYMMAP_SEC_SEGMENTS] = (symmap_section_entry){ 0, t.nsegs, sizeof(symmap_segment_disk), 0 };
    sec[SYMMAP_SEC_BUILD_ID] = (symmap_section_entry){ 0, w->build_id_len, 1, 0 };
    uint64_t off = sizeof(symmap_header) + sizeof(sec);
    for (int i = 0; i < SYMMAP_SEC_COUNT_V1; i++) {
        off = align8(off);
        sec[i].offset = off;
        off += sec[i].count * sec[i].entry_size;
    }
    off = align8(off);
    uint8_t *buf = calloc(1, off);
    if (!buf) {
        wset_err(err, errlen, "out of memory (%llu bytes)", (unsigned long long)off);
        wtables_free(&t);
        return -1;
    }
    symmap_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, SYMMAP_MAGIC, 8);
    h.version = SYMMAP_VERSION;
    h.header_size = (uint32_t)(sizeof(symmap_header) + sizeof(sec));
    h.nsections = SYMMAP_SEC_COUNT_V1;
    h.flags = w->is_pie ? SYMMAP_FLAG_PIE : 0;
    h.binary_path = w->binary_path->offset;
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), sec, sizeof(sec));

    for (size_t i = 0; i < t.nstrs; i++)
        memcpy(buf + sec[SYMMAP_SEC_STRINGS].offset + t.strs[i]->offset, t.strs[i]->s, t.strs[i]->len + 1);
    wcopy_n(buf + sec[SYMMAP_SEC_FUNCTIONS].offset, t.funcs, w->funcs.n * sizeof(symmap_func));
    symmap_frange *fr = (symmap_frange *)(buf + sec[SYMMAP_SEC_FRANGES].offset);
    for (size_t i = 0; i < t.nfranges; i++)
        fr[i] = (symmap_frange){ t.franges[i].lo, t.franges[i].hi, (uint32_t)t.franges[i].id, 0 };
    wcopy_n(buf + sec[SYMMAP_SEC_NODES].offset, t.nodes, t.nnodes * sizeof(symmap_node));
    wcopy_n(buf + sec[SYMMAP_SEC_INTERVALS].offset, t.intervals.v, t.intervals.n * sizeof(symmap_interval));
    symmap_line *ln = (symmap_line *)(buf + sec[SYMMAP_SEC_LINES].offset);
    for (size_t i = 0; i < t.nlines; i++)
        ln[i] = (symmap_line){ t.lines[i].addr, t.lines[i].file->offset, t.lines[i].line };
    symmap_cfi *cf = (symmap_cfi *)(buf + sec[SYMMAP_SEC_CFI].offset);
    for (size_t i = 0; i < t.ncfi; i++) {
        const sprof_cfi_row *r = &t.cfi[i];
        cf[i] = (symmap_cfi){ r->lo, r->hi, r->cfa_reg, r->rbp_saved, 0,
                              r->cfa_offset, r->ra_offset, r->rbp_offset };
    }
    symmap_segment_disk *sg = (symmap_segment_disk *)(buf + sec[SYMMAP_SEC_SEGMENTS].offset);
    for (size_t i = 0; i < t.nsegs; i++) {
        const sprof_segment *s = &t.segs[i];
        sg[i] = (symmap_segment_disk){ s->vaddr, s->memsz, s->file_offset, s->filesz, s->flags, 0 };
    }
    if (w->build_id_len)
        memcpy(buf + sec[SYMMAP_SEC_BUILD_ID].offset, w->build_id, w->build_id_len);
    wtables_free(&t);
    *out = buf;
    *size = off;
    return 0;
}
