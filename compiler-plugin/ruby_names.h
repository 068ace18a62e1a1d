/* Turning Spinel's C names back into Ruby names without Spinel's map:
 * clone-suffix stripping, per-site class clones, and the best-effort
 * demangler for sp_<Class>_<method>, sp_<Class>_cls_<method>, sp_<method>.
 * Rules and their limits: docs/ruby-names.md. libc only. */
#ifndef SPROF_RUBY_NAMES_H
#define SPROF_RUBY_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Length of `name` without compiler clone suffixes (.isra.N, .constprop.N,
 * .part.N, .cold, .lto_priv.N, .localalias, in any chain). */
size_t sprof_base_name_len(const char *name);

/* Copy `name` to out (size outlen) dropping every "__implicit_<digits>"
 * (Spinel's per-allocation-site class clones: Sphere__implicit_852 -> Sphere),
 * and the spellings Spinel's map gives them ("Sphere::::implicit::852#x",
 * "Sphere::implicit::852#x" -> "Sphere#x").
 * Returns 1 if something was dropped. */
int sprof_strip_implicit(const char *name, char *out, size_t outlen);

/* Demangle a base C name (no clone suffix). Returns 1 and writes the Ruby
 * name and kind (enum sprof_kind: TOPLEVEL/IMETH/CMETH) when `cname` has
 * Spinel's sp_ shape, 0 otherwise. Every result is approximate. */
int sprof_demangle(const char *cname, char *out, size_t outlen, uint8_t *kind);

/* Repair a map row whose Ruby name still looks like C (the "Geo_cls_dist2"
 * quirk of some Spinel builds): writes "Geo.dist2" and CMETH. Returns 1 if
 * it repaired something. */
int sprof_repair_map_name(const char *ruby, char *out, size_t outlen, uint8_t *kind);

/* "_sp_proc_fn_<N>" -> 1, "_fiber_body_<N>" -> 2, else 0. */
int sprof_block_function_type(const char *base_cname);

#endif
