/* Bounds-checked primitive reads over CFI section bytes, including the
 * DW_EH_PE pointer encodings of .eh_frame. */
#include <string.h>

#include "cfi_internal.h"

static uint64_t read_le(cfi_cursor *c, unsigned n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}

uint64_t cfi_u8(cfi_cursor *c) { return read_le(c, 1); }
uint64_t cfi_u16(cfi_cursor *c) { return read_le(c, 2); }
uint64_t cfi_u32(cfi_cursor *c) { return read_le(c, 4); }
uint64_t cfi_u64(cfi_cursor *c) { return read_le(c, 8); }

uint64_t cfi_uleb(cfi_cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (c->bad || c->p >= c->end) {
            c->bad = 1;
            return 0;
        }
        uint8_t b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            return v;
        if (shift > 70) { /* absurdly long encoding */
            c->bad = 1;
            return 0;
        }
    }
}

int64_t cfi_sleb(cfi_cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        if (c->bad || c->p >= c->end || shift > 70) {
            c->bad = 1;
            return 0;
        }
        b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

void cfi_skip(cfi_cursor *c, uint64_t n)
{
    if (c->bad || (uint64_t)(c->end - c->p) < n) {
        c->bad = 1;
        return;
    }
    c->p += n;
}

int cfi_read_encoded(cfi_cursor *c, uint8_t enc, unsigned addr_size, uint64_t *out)
{
    if (enc == DW_EH_PE_omit)
        return -1;
    uint64_t here = c->section_vaddr + (uint64_t)(c->p - c->start);
    uint8_t app = enc & 0x70;
    if (app == 0x50) { /* DW_EH_PE_aligned: absptr at the next address-size boundary */
        uint64_t pad = (addr_size - (here % addr_size)) % addr_size;
        cfi_skip(c, pad);
        here += pad;
    }
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = addr_size == 4 ? cfi_u32(c) : cfi_u64(c); break;  /* absptr */
    case 0x01: v = cfi_uleb(c); break;                                /* uleb128 */
    case 0x02: v = cfi_u16(c); break;                                 /* udata2 */
    case 0x03: v = cfi_u32(c); break;                                 /* udata4 */
    case 0x04: v = cfi_u64(c); break;                                 /* udata8 */
    case 0x09: v = (uint64_t)cfi_sleb(c); break;                      /* sleb128 */
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)cfi_u16(c); break;     /* sdata2 */
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)cfi_u32(c); break;     /* sdata4 */
    case 0x0c: v = cfi_u64(c); break;                                 /* sdata8 */
    default: return -1;
    }
    if (c->bad)
        return -1;
    switch (app) {
    case 0x00: /* absolute */
    case 0x50:
        break;
    case 0x10: /* pcrel */
        v += here;
        break;
    case 0x20: /* textrel, datarel, funcrel: need bases we do not have */
    case 0x30:
    case 0x40:
        return 1;
    default:
        return -1;
    }
    if (enc & 0x80) /* indirect: the value is where the pointer is stored */
        return 1;
    *out = v;
    return 0;
}
