/* --dump and --lookup output. See dump.h. */
#include "dump.h"

#include <inttypes.h>
#include <string.h>

static void print_flags(uint16_t flags, FILE *out)
{
    if (flags & SPROF_FRAME_INLINED)
        fputs(", inlined", out);
    if (flags & SPROF_FRAME_NAME_APPROX)
        fputs(", approx", out);
    if (flags & SPROF_FRAME_NO_DEBUG)
        fputs(", nodebug", out);
}

static void print_frame(const sprof_frame *f, size_t depth, FILE *out)
{
    fprintf(out, "#%zu %s  (%s, %s", depth, f->ruby_name, sprof_kind_name(f->kind),
            sprof_cost_name(f->cost));
    print_flags(f->flags, out);
    fputc(')', out);
    if (f->file[0])
        fprintf(out, "  %s:%" PRIu32, f->file, f->line);
    else
        fputs("  ??:0", out);
    if (strcmp(f->c_name, f->ruby_name) != 0)
        fprintf(out, "  [%s]", f->c_name);
}

#define MAX_FRAMES 64

void sprof_print_lookup(const sprof_symmap *m, uint64_t addr, FILE *out)
{
    sprof_frame frames[MAX_FRAMES];
    size_t n = sprof_symmap_lookup(m, addr, frames, MAX_FRAMES);
    if (n == 0) {
        fprintf(out, "0x%" PRIx64 "  ??\n", addr);
        return;
    }
    for (size_t i = 0; i < n && i < MAX_FRAMES; i++) {
        fprintf(out, "0x%" PRIx64 "  ", addr);
        print_frame(&frames[i], i, out);
        fputc('\n', out);
    }
    if (n > MAX_FRAMES)
        fprintf(out, "0x%" PRIx64 "  ... %zu more frames\n", addr, n - MAX_FRAMES);
}

static const char *cfa_reg_name(uint8_t r)
{
    return r == SPROF_CFA_RSP ? "rsp" : r == SPROF_CFA_RBP ? "rbp" : "undef";
}

/* The inline chains of one function, found by probing its line-row
 * addresses (every inline boundary gcc emits starts a new line row). */
static void dump_inlines(const sprof_symmap *m, const sprof_frame *fn, size_t *row, FILE *out)
{
    size_t nrows = sprof_symmap_line_count(m);
    char last[512] = "";
    while (*row < nrows) {
        uint64_t addr;
        const char *file;
        uint32_t line;
        sprof_symmap_line_at(m, *row, &addr, &file, &line);
        if (addr >= fn->func_hi)
            break;
        (*row)++;
        if (addr < fn->func_lo)
            continue;
        sprof_frame fr[MAX_FRAMES];
        size_t n = sprof_symmap_lookup(m, addr, fr, MAX_FRAMES);
        if (n > MAX_FRAMES)
            n = MAX_FRAMES;
        char key[512] = "";
        size_t k = 0;
        for (size_t i = 0; i + 1 < n && k < sizeof key; i++)
            k += (size_t)snprintf(key + k, sizeof key - k, "%s@%u/", fr[i].c_name, fr[i + 1].line);
        if (strcmp(key, last) == 0)
            continue;
        snprintf(last, sizeof last, "%s", key);
        if (n < 2)
            continue;
        fprintf(out, "    inline at 0x%" PRIx64 ":", addr);
        for (size_t i = 0; i + 1 < n; i++)
            fprintf(out, " %s%s (%s:%u called from %s:%u)", i ? "<- " : "", fr[i].ruby_name,
                    fr[i].file, fr[i].def_line, fr[i + 1].file, fr[i + 1].line);
        fputc('\n', out);
    }
}

void sprof_dump_symmap(const sprof_symmap *m, FILE *out)
{
    size_t idlen;
    const uint8_t *id = sprof_symmap_build_id(m, &idlen);
    fprintf(out, "binary: %s\nbuild-id: ", sprof_symmap_binary_path(m));
    for (size_t i = 0; i < idlen; i++)
        fprintf(out, "%02x", id[i]);
    fprintf(out, "%s\npie: %s\n", idlen ? "" : "(none)", sprof_symmap_is_pie(m) ? "yes" : "no");
    size_t nseg = sprof_symmap_segment_count(m);
    fprintf(out, "segments: %zu\n", nseg);
    for (size_t i = 0; i < nseg; i++) {
        const sprof_segment *s = sprof_symmap_segment(m, i);
        fprintf(out, "  vaddr 0x%" PRIx64 " memsz 0x%" PRIx64 " offset 0x%" PRIx64 " filesz 0x%" PRIx64
                     " %c%c%c\n",
                s->vaddr, s->memsz, s->file_offset, s->filesz, s->flags & 4 ? 'r' : '-',
                s->flags & 2 ? 'w' : '-', s->flags & 1 ? 'x' : '-');
    }
    size_t nf = sprof_symmap_function_count(m);
    fprintf(out, "functions: %zu\n", nf);
    size_t row = 0;
    for (size_t i = 0; i < nf; i++) {
        sprof_frame f;
        sprof_symmap_function(m, i, &f);
        fprintf(out, "  0x%" PRIx64 "-0x%" PRIx64 "  %s  %s  (%s, %s", f.func_lo, f.func_hi, f.c_name,
                f.ruby_name, sprof_kind_name(f.kind), sprof_cost_name(f.cost));
        print_flags(f.flags, out);
        fprintf(out, ")  %s:%" PRIu32 "\n", f.file[0] ? f.file : "??", f.def_line);
        dump_inlines(m, &f, &row, out);
    }
    size_t nl = sprof_symmap_line_count(m);
    fprintf(out, "lines: %zu\n", nl);
    for (size_t i = 0; i < nl; i++) {
        uint64_t addr;
        const char *file;
        uint32_t line;
        sprof_symmap_line_at(m, i, &addr, &file, &line);
        fprintf(out, "  0x%" PRIx64 "  %s:%" PRIu32 "\n", addr, file[0] ? file : "(end)", line);
    }
    size_t nc = sprof_symmap_cfi_count(m);
    fprintf(out, "cfi: %zu\n", nc);
    for (size_t i = 0; i < nc; i++) {
        sprof_cfi_row r;
        sprof_symmap_cfi_row_at(m, i, &r);
        fprintf(out, "  0x%" PRIx64 "-0x%" PRIx64 "  cfa=%s%+d ra@cfa%+d", r.lo, r.hi,
                cfa_reg_name(r.cfa_reg), r.cfa_offset, r.ra_offset);
        if (r.rbp_saved)
            fprintf(out, " rbp@cfa%+d", r.rbp_offset);
        fputc('\n', out);
    }
}
