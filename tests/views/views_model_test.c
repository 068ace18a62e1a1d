/* The view projections on a profile built in memory with a known shape:
 * call graph self/cum/edges (inline, recursion, pruning, residual edges,
 * focus/ignore), top by method and by line (with source text), the class
 * split, and the pprof/speedscope writers. With an OUTDIR argument it also
 * writes rich.pb.gz, rich.speedscope.json and app.rb there, for
 * views_test.py to decode and validate with outside tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sprof/callgraph.h"
#include "sprof/export.h"
#include "sprof/profile.h"
#include "sprof/top.h"

static int failures;
#define CHECK(cond, ...)                                             \
    do {                                                             \
        if (!(cond)) {                                               \
            failures++;                                              \
            fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                            \
            fputc('\n', stderr);                                     \
        }                                                            \
    } while (0)

static const char *app_rb =
    "class Vec\n"                      /* 1 */
    "  # dot product\n"                /* 2 */
    "  def dot(o)\n"                   /* 3 */
    "    @x * o.x + @y * o.y\n"        /* 4 */
    "  end\n"                          /* 5 */
    "end\n";                           /* 6 */

static uint32_t frame(sprof_profile *p, const char *name, const char *c_name, const char *file, uint32_t line,
                      uint32_t def_line, enum sprof_cost cost, uint16_t flags, const char *module, uint64_t addr)
{
    sprof_pframe f = { .name = name, .c_name = c_name, .file = file, .module = module, .line = line,
                       .kind = cost == SPROF_COST_USER ? SPROF_KIND_IMETH : SPROF_KIND_NATIVE, .cost = (uint8_t)cost,
                       .flags = flags, .address = addr, .def_line = def_line };
    return sprof_profile_intern_frame(p, &f);
}

/* 100 samples, 400 ms:
 *   main;Simulation#step@14                      40
 *   main;Simulation#step@15;Vec#dot@4 (inlined)  30
 *   main;Indexer#tokenize@30;sp_gc_alloc         20
 *   main;Fib.fib;Fib.fib;Fib.fib;sp_gc_alloc      8
 *   main;Indexer#tokenize@30;strlen (libc)        2 */
static void build(sprof_profile *p)
{
    const char *app = "/tmp/views/app";
    sprof_profile_init(p);
    p->hz = 250;
    p->mode = 0;
    p->binary_path = strdup(app);
    static const uint8_t id[8] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04 };
    memcpy(p->build_id, id, sizeof id);
    p->build_id_len = sizeof id;
    uint32_t mainf = frame(p, "main", "main", "app.c", 900, 890, SPROF_COST_NATIVE, 0, app, 0x1000);
    uint32_t step14 = frame(p, "Simulation#step", "sp_Simulation_step", "app.rb", 14, 12, SPROF_COST_USER, 0, app, 0x1100);
    uint32_t step15 = frame(p, "Simulation#step", "sp_Simulation_step", "app.rb", 15, 12, SPROF_COST_USER, 0, app, 0x1110);
    uint32_t dot = frame(p, "Vec#dot", "sp_Vec_dot", "app.rb", 4, 3, SPROF_COST_USER, SPROF_FRAME_INLINED, app, 0x1114);
    uint32_t tok = frame(p, "Indexer#tokenize", "sp_Indexer_tokenize", "app.rb", 30, 28, SPROF_COST_USER, 0, app, 0x1200);
    uint32_t gc = frame(p, "sp_gc_alloc", "sp_gc_alloc", "sp_runtime.h", 100, 90, SPROF_COST_GC, 0, app, 0x2000);
    uint32_t fib = frame(p, "Fib.fib", "sp_Fib_cls_fib", "app.rb", 40, 39, SPROF_COST_USER, 0, app, 0x1300);
    uint32_t strlenf = frame(p, "strlen", "strlen", "", 0, 0, SPROF_COST_NATIVE, 0, "/lib/libc.so.6", 0x5000);
    const uint64_t ms = 1000000;
    uint32_t s1[] = { mainf, step14 }, s2[] = { mainf, step15, dot }, s3[] = { mainf, tok, gc },
             s4[] = { mainf, fib, fib, fib, gc }, s5[] = { mainf, tok, strlenf };
    sprof_profile_add_stack(p, s1, 2, 40, 160 * ms, 0);
    sprof_profile_add_stack(p, s2, 3, 30, 120 * ms, 0);
    sprof_profile_add_stack(p, s3, 3, 20, 80 * ms, 0);
    sprof_profile_add_stack(p, s4, 5, 8, 32 * ms, 0);
    sprof_profile_add_stack(p, s5, 3, 2, 8 * ms, 0);
}

static const sprof_cg_node *node(const sprof_callgraph *g, const char *name)
{
    for (size_t i = 0; i < g->nnodes; i++)
        if (strcmp(g->methods.methods[g->nodes[i].method].name, name) == 0)
            return &g->nodes[i];
    return NULL;
}

static const sprof_cg_edge *edge(const sprof_callgraph *g, const char *from, const char *to)
{
    for (size_t i = 0; i < g->nedges; i++)
        if (strcmp(g->methods.methods[g->nodes[g->edges[i].from].method].name, from) == 0 &&
            strcmp(g->methods.methods[g->nodes[g->edges[i].to].method].name, to) == 0)
            return &g->edges[i];
    return NULL;
}

static void check_node(const sprof_callgraph *g, const char *name, uint64_t self, uint64_t cum)
{
    const sprof_cg_node *n = node(g, name);
    CHECK(n != NULL, "node %s missing", name);
    if (n) {
        CHECK(n->self == self, "%s self %llu, want %llu", name, (unsigned long long)n->self, (unsigned long long)self);
        CHECK(n->cum == cum, "%s cum %llu, want %llu", name, (unsigned long long)n->cum, (unsigned long long)cum);
        CHECK(n->cum <= g->total, "%s cum above the total", name);
    }
}

static void check_edge(const sprof_callgraph *g, const char *from, const char *to, uint64_t w, int inl, int residual)
{
    const sprof_cg_edge *e = edge(g, from, to);
    CHECK(e != NULL, "edge %s -> %s missing", from, to);
    if (e) {
        CHECK(e->weight == w, "%s -> %s weight %llu, want %llu", from, to, (unsigned long long)e->weight,
              (unsigned long long)w);
        CHECK(e->inlined == inl, "%s -> %s inlined %d, want %d", from, to, e->inlined, inl);
        CHECK(e->residual == residual, "%s -> %s residual %d, want %d", from, to, e->residual, residual);
    }
}

static void test_callgraph(const sprof_profile *p)
{
    char err[256];
    sprof_callgraph_options o;
    sprof_callgraph g;

    sprof_callgraph_options_init(&o);
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(g.total == 100 && g.nnodes == 7, "total %llu nodes %zu", (unsigned long long)g.total, g.nnodes);
    check_node(&g, "main", 0, 100);
    check_node(&g, "Simulation#step", 40, 70); /* two lines, one node */
    check_node(&g, "Vec#dot", 30, 30);
    check_node(&g, "Indexer#tokenize", 0, 22);
    check_node(&g, "sp_gc_alloc", 28, 28);
    check_node(&g, "Fib.fib", 0, 8);            /* recursion counted once per stack */
    check_node(&g, "strlen", 2, 2);
    check_edge(&g, "main", "Simulation#step", 70, 0, 0);
    check_edge(&g, "Simulation#step", "Vec#dot", 30, 1, 0);
    check_edge(&g, "Indexer#tokenize", "sp_gc_alloc", 20, 0, 0);
    check_edge(&g, "Fib.fib", "Fib.fib", 8, 0, 0);
    check_edge(&g, "Fib.fib", "sp_gc_alloc", 8, 0, 0);
    check_edge(&g, "main", "Indexer#tokenize", 22, 0, 0);
    CHECK(g.nedges == 8, "edges %zu", g.nedges);
    CHECK(g.nodes[0].cum == 100 && strcmp(g.methods.methods[g.nodes[0].method].name, "main") == 0,
          "nodes not sorted by cum");
    sprof_callgraph_free(&g);

    /* CPU weights give the same shares. */
    o.weight_cpu = 1;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    check_node(&g, "Simulation#step", 160000000, 280000000);
    sprof_callgraph_free(&g);
    o.weight_cpu = 0;

    /* nodefraction 0.05: strlen (2 %) goes, Fib.fib (8 %) stays. */
    o.nodefraction = 0.05;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(g.nnodes == 6 && !node(&g, "strlen") && node(&g, "Fib.fib"), "nodefraction: %zu nodes", g.nnodes);
    CHECK(g.dropped_by_fraction == 1, "dropped %zu", g.dropped_by_fraction);
    sprof_callgraph_free(&g);

    /* nodecount 3: main, Simulation#step, Vec#dot; tokenize/gc gone. */
    o.nodefraction = 0;
    o.nodecount = 3;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(g.nnodes == 3 && node(&g, "Vec#dot") && !node(&g, "Indexer#tokenize"), "nodecount: %zu", g.nnodes);
    CHECK(g.shown_self == 70, "shown self %llu", (unsigned long long)g.shown_self);
    sprof_callgraph_free(&g);

    /* edgefraction 0.5: only main -> Simulation#step (70) is heavy enough. */
    o.nodecount = 0;
    o.edgefraction = 0.5;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(edge(&g, "main", "Simulation#step") && !edge(&g, "Simulation#step", "Vec#dot") &&
              !edge(&g, "Indexer#tokenize", "sp_gc_alloc"),
          "edgefraction");
    CHECK(g.nedges == 1 && g.dropped_edges == 7, "edges kept %zu dropped %zu", g.nedges, g.dropped_edges);
    sprof_callgraph_free(&g);

    /* focus keeps the stacks through sp_gc_alloc; percentages stay of the whole profile. */
    sprof_callgraph_options_init(&o);
    o.focus = "^sp_gc";
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(g.selected == 28 && g.total == 100, "focus selected %llu total %llu", (unsigned long long)g.selected,
          (unsigned long long)g.total);
    check_node(&g, "main", 0, 28);
    check_node(&g, "Indexer#tokenize", 0, 20);
    sprof_callgraph_free(&g);
    o.nodecount = 0;
    o.nodefraction = 0;
    o.focus = "^sp_gc_alloc$";
    o.ignore = NULL;
    o.relative = 1;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    check_node(&g, "sp_gc_alloc", 28, 28);
    CHECK(g.total == 28, "relative total %llu", (unsigned long long)g.total);
    sprof_callgraph_free(&g);

    /* ignore drops every stack through Simulation#step (70 samples). */
    sprof_callgraph_options_init(&o);
    o.ignore = "Simulation";
    o.nodecount = 3;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(g.selected == 30, "ignore selected %llu", (unsigned long long)g.selected);
    CHECK(!node(&g, "Vec#dot") && node(&g, "sp_gc_alloc"), "ignore dropped stacks through Simulation#step");
    sprof_callgraph_free(&g);

    /* A residual edge: nodecount 4 keeps main (100), step (70), dot (30) and
     * sp_gc_alloc (28), not Indexer#tokenize (22) nor Fib.fib (8), so
     * main -> sp_gc_alloc stands for the 28 samples through them. */
    sprof_callgraph_options_init(&o);
    o.nodecount = 4;
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(g.nnodes == 4 && node(&g, "sp_gc_alloc") && !node(&g, "Indexer#tokenize"), "residual setup");
    check_edge(&g, "main", "sp_gc_alloc", 28, 0, 1);
    sprof_callgraph_free(&g);

    o.focus = "(";
    CHECK(sprof_callgraph_build(&g, p, &o, err, sizeof err) != 0 && strstr(err, "--focus"), "bad regex accepted");
}

static const sprof_top_row *row(const sprof_top *t, const char *name, const char *file, uint32_t line)
{
    for (size_t i = 0; i < t->nrows; i++)
        if (strcmp(t->rows[i].name, name) == 0 && (!file || (strcmp(t->rows[i].file, file) == 0 && t->rows[i].line == line)))
            return &t->rows[i];
    return NULL;
}

static void test_top(const sprof_profile *p, const char *srcdir)
{
    char err[256];
    sprof_top_options o;
    memset(&o, 0, sizeof o);
    sprof_top t;
    CHECK(sprof_top_build(&t, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(t.nrows == 7 && t.total == 100, "rows %zu", t.nrows);
    CHECK(strcmp(t.rows[0].name, "Simulation#step") == 0 && t.rows[0].self == 40 && t.rows[0].cum == 70,
          "first row %s", t.rows[0].name);
    const sprof_top_row *r = row(&t, "Simulation#step", NULL, 0);
    CHECK(r && strcmp(r->file, "app.rb") == 0 && r->line == 12, "def line of step");
    CHECK(t.class_self[SPROF_COST_USER] == 70 && t.class_self[SPROF_COST_GC] == 28 &&
              t.class_self[SPROF_COST_NATIVE] == 2 && t.class_self[SPROF_COST_RUNTIME] == 0,
          "class split %llu %llu %llu", (unsigned long long)t.class_self[0], (unsigned long long)t.class_self[2],
          (unsigned long long)t.class_self[3]);
    sprof_top_free(&t);

    o.by_cum = 1;
    CHECK(sprof_top_build(&t, p, &o, err, sizeof err) == 0, "%s", err);
    CHECK(strcmp(t.rows[0].name, "main") == 0 && strcmp(t.rows[1].name, "Simulation#step") == 0, "cum order");
    sprof_top_free(&t);

    o.by_cum = 0;
    o.lines = 1;
    o.source_dir = srcdir;
    CHECK(sprof_top_build(&t, p, &o, err, sizeof err) == 0, "%s", err);
    r = row(&t, "Simulation#step", "app.rb", 14);
    CHECK(r && r->self == 40 && r->cum == 40, "app.rb:14");
    r = row(&t, "Simulation#step", "app.rb", 15);
    CHECK(r && r->self == 0 && r->cum == 30, "app.rb:15");
    r = row(&t, "Vec#dot", "app.rb", 4);
    CHECK(r && r->self == 30 && r->cum == 30, "app.rb:4");
    r = row(&t, "Fib.fib", "app.rb", 40);
    CHECK(r && r->self == 0 && r->cum == 8, "app.rb:40 (recursion once per stack)");
    CHECK(t.nrows == 5 && t.unlocated == 30, "line rows %zu, unlocated %llu", t.nrows, (unsigned long long)t.unlocated);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    sprof_top_write_text(&t, &o, mem);
    fclose(mem);
    CHECK(strstr(text, "@x * o.x + @y * o.y") != NULL, "source text missing:\n%s", text);
    free(text);
    sprof_top_free(&t);

    o.all_files = 1;
    CHECK(sprof_top_build(&t, p, &o, err, sizeof err) == 0, "%s", err);
    r = row(&t, "sp_gc_alloc", "sp_runtime.h", 100);
    CHECK(r && r->self == 28 && t.unlocated == 2, "all files");
    sprof_top_free(&t);
}

static void test_exports(const sprof_profile *p, const char *outdir)
{
    char err[256], path[1024];
    sprof_export_options o = { 1, NULL };
    unsigned char *data = NULL;
    size_t len = 0;
    CHECK(sprof_pprof_encode(p, &o, &data, &len, err, sizeof err) == 0 && len > 100, "pprof encode: %s", err);
    free(data);
    if (!outdir)
        return;
    snprintf(path, sizeof path, "%s/rich.pb.gz", outdir);
    CHECK(sprof_export_pprof(p, &o, path, err, sizeof err) == 0, "%s", err);
    snprintf(path, sizeof path, "%s/rich.speedscope.json", outdir);
    CHECK(sprof_export_speedscope(p, &o, path, err, sizeof err) == 0, "%s", err);
    /* An output nobody can create: error, nothing written. */
    snprintf(path, sizeof path, "%s/no-such-dir/x.pb.gz", outdir);
    CHECK(sprof_export_pprof(p, &o, path, err, sizeof err) != 0 && strstr(err, "no-such-dir"), "bad path accepted");
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : NULL;
    char srcdir[1024] = "/nonexistent";
    if (outdir) {
        snprintf(srcdir, sizeof srcdir, "%s/src", outdir);
        char path[1100];
        mkdir(outdir, 0755); /* either may exist from an earlier run */
        mkdir(srcdir, 0755);
        snprintf(path, sizeof path, "%s/app.rb", srcdir);
        FILE *f = fopen(path, "w");
        if (!f)
            return 2;
        for (int i = 0; i < 40; i++) /* app.rb:4 is Vec#dot's body; pad to line 40 */
            fputs(i == 0 ? app_rb : "\n", f);
        fclose(f);
    }
    sprof_profile p;
    build(&p);
    test_callgraph(&p);
    if (outdir)
        test_top(&p, srcdir);
    test_exports(&p, outdir);
    sprof_profile_free(&p);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("views_model_test: all checks passed\n");
    return failures ? 1 : 0;
}
