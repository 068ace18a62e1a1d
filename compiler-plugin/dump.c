/* --dump and --lookup output. See dump.h. */
#include "dump.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void print_flags(uint16_t flags, FILE *out)
{
    if (flags & SPROF_FRAME_INLINED)
        fputs(", inlined", out);
    if (flags & SPROF_FRAME_NAME_APPROX)
        fputs(", approx", out);
    if (flags & SPROF_FRAME_NAME_GUESSED)
        fputs(", guessed", out);
    if (flags & SPROF_FRAME_FOLDED)
        fputs(", folded", out);
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
    return r == SPROF_CFA_RSP ? "rsp" : r == SPROF_CFA_RBP ? "rbp" : r == SPROF_CFA_RBX ? "rbx" : "undef";
}

/* Inline records grouped by function (counting sorts, so a 50k-function
 * map dumps in linear time): node order within a function keeps parents
 * before children; each node lists the address intervals where it is the
 * innermost frame. */
typedef struct inline_index {
    size_t nnodes, nfuncs;
    size_t *func_first, *by_func;  /* nodes of function f: by_func[func_first[f] .. func_first[f+1]) */
    size_t *depth;
    size_t *iv_first, *iv_by_node; /* intervals of node k */
} inline_index;

static void inline_index_free(inline_index *x)
{
    free(x->func_first);
    free(x->by_func);
    free(x->depth);
    free(x->iv_first);
    free(x->iv_by_node);
}

static int inline_index_build(const sprof_symmap *m, size_t nfuncs, inline_index *x)
{
    memset(x, 0, sizeof *x);
    size_t nn = sprof_symmap_inline_count(m), niv = sprof_symmap_interval_count(m);
    x->nnodes = nn;
    x->nfuncs = nfuncs;
    x->func_first = calloc(nfuncs + 2, sizeof *x->func_first);
    x->by_func = calloc(nn + 1, sizeof *x->by_func);
    x->depth = calloc(nn + 1, sizeof *x->depth);
    x->iv_first = calloc(nn + 2, sizeof *x->iv_first);
    x->iv_by_node = calloc(niv + 1, sizeof *x->iv_by_node);
    size_t *func_of = calloc(nn + 1, sizeof *func_of), *cursor = calloc(nfuncs + nn + 2, sizeof *cursor);
    if (!x->func_first || !x->by_func || !x->depth || !x->iv_first || !x->iv_by_node || !func_of || !cursor) {
        free(func_of);
        free(cursor);
        inline_index_free(x);
        return -1;
    }
    for (size_t k = 0; k < nn; k++) {
        size_t parent, f;
        sprof_symmap_inline_at(m, k, NULL, &parent, &f, NULL, NULL);
        func_of[k] = f < nfuncs ? f : nfuncs; /* out of range: bucket nfuncs, never printed */
        x->depth[k] = parent < k ? x->depth[parent] + 1 : 0;
        x->func_first[func_of[k] + 1]++;
    }
    for (size_t f = 0; f <= nfuncs; f++)
        x->func_first[f + 1] += x->func_first[f];
    memcpy(cursor, x->func_first, (nfuncs + 1) * sizeof *cursor);
    for (size_t k = 0; k < nn; k++)
        x->by_func[cursor[func_of[k]]++] = k;
    for (size_t i = 0; i < niv; i++) {
        uint64_t lo, hi;
        size_t node;
        sprof_symmap_interval_at(m, i, &lo, &hi, &node);
        x->iv_first[(node < nn ? node : nn) + 1]++;
    }
    for (size_t k = 0; k <= nn; k++)
        x->iv_first[k + 1] += x->iv_first[k];
    memcpy(cursor, x->iv_first, (nn + 1) * sizeof *cursor);
    for (size_t i = 0; i < niv; i++) {
        uint64_t lo, hi;
        size_t node;
        sprof_symmap_interval_at(m, i, &lo, &hi, &node);
        x->iv_by_node[cursor[node < nn ? node : nn]++] = i;
    }
    free(func_of);
    free(cursor);
    return 0;
}

static void dump_inlines(const sprof_symmap *m, const inline_index *x, size_t f, FILE *out)
{
    for (size_t j = x->func_first[f]; j < x->func_first[f + 1]; j++) {
        size_t k = x->by_func[j];
        sprof_frame fr;
        const char *call_file = "";
        uint32_t call_line = 0;
        sprof_symmap_inline_at(m, k, &fr, NULL, NULL, &call_file, &call_line);
        fprintf(out, "    %*sinline #%zu %s  %s  (%s, %s", (int)(2 * x->depth[k]), "", k, fr.c_name,
                fr.ruby_name, sprof_kind_name(fr.kind), sprof_cost_name(fr.cost));
        print_flags(fr.flags, out);
        fprintf(out, ")  %s:%" PRIu32 "  called from %s:%" PRIu32 "\n", fr.file[0] ? fr.file : "??",
                fr.def_line, call_file && call_file[0] ? call_file : "??", call_line);
        for (size_t q = x->iv_first[k]; q < x->iv_first[k + 1]; q++) {
            uint64_t lo, hi;
            size_t node;
            sprof_symmap_interval_at(m, x->iv_by_node[q], &lo, &hi, &node);
            fprintf(out, "    %*s  at 0x%" PRIx64 "-0x%" PRIx64 "\n", (int)(2 * x->depth[k]), "", lo, hi);
        }
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
    inline_index ix;
    int have_ix = inline_index_build(m, nf, &ix) == 0;
    fprintf(out, "functions: %zu, inline records: %zu\n", nf, sprof_symmap_inline_count(m));
    for (size_t i = 0; i < nf; i++) {
        sprof_frame f;
        sprof_symmap_function(m, i, &f);
        fprintf(out, "  0x%" PRIx64 "-0x%" PRIx64 "  %s  %s  (%s, %s", f.func_lo, f.func_hi, f.c_name,
                f.ruby_name, sprof_kind_name(f.kind), sprof_cost_name(f.cost));
        print_flags(f.flags, out);
        fprintf(out, ")  %s:%" PRIu32 "\n", f.file[0] ? f.file : "??", f.def_line);
        if (have_ix)
            dump_inlines(m, &ix, i, out);
    }
    if (have_ix)
        inline_index_free(&ix);
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
