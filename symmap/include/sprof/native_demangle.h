/* Display names for native (C++ and Rust) symbols: the Itanium C++ ABI
 * (`_Z...`), Rust legacy (`_ZN...17h<16 hex>E`, hash dropped) and Rust v0
 * (`_R...`) manglings, demangled by GNU libiberty's maintained demangler
 * (the one binutils, gdb and perf use). Plain C names are left alone.
 * Library `sprof_demangle` (symmap/native/), used by the symmap generator
 * and the offline tools; the symmap reader itself stays libc only.
 * Spec: docs/native-names.md. */
#ifndef SPROF_NATIVE_DEMANGLE_H
#define SPROF_NATIVE_DEMANGLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Mangled names longer than this are shown raw: libiberty's C++ demangler
 * keeps work arrays proportional to the name on the stack. */
#define SPROF_DEMANGLE_MAX_INPUT 4096

/* If `raw` is a mangled C++ or Rust name (optionally followed by "@..."
 * such as "@plt" or a symbol version, which is kept as is), write its
 * demangled form to out (NUL-terminated; cut at outlen - 1 bytes with
 * "..." at the end if longer) and return 1. Otherwise (plain C name, not a
 * valid mangling, too long, outlen < 8) return 0 and leave out untouched.
 * Never reads raw past its NUL; safe on any input. Thread-safe. */
int sprof_native_demangle(const char *raw, char *out, size_t outlen);

/* The display name: demangled into buf when it is a mangled name, else
 * raw itself. Never NULL when raw is not NULL. */
const char *sprof_native_display_name(const char *raw, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif
#endif
