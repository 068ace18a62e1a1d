/* Native symbol demangling through libiberty (see sprof/native_demangle.h
 * and docs/native-names.md for the choice). */
#include "sprof/native_demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* Only names that start like a mangling are handed over: everything else
 * (C functions, Spinel's sp_* names, "[unknown]") stays exactly as it is. */
static int looks_mangled(const char *s)
{
    return s[0] == '_' && (s[1] == 'Z' || s[1] == 'R');
}

int sprof_native_demangle(const char *raw, char *out, size_t outlen)
{
    if (!raw || !out || outlen < 8 || !looks_mangled(raw))
        return 0;
    size_t n = strnlen(raw, SPROF_DEMANGLE_MAX_INPUT + 1);
    if (n > SPROF_DEMANGLE_MAX_INPUT)
        return 0;
    /* "name@plt", "name@@GLIBCXX_3.4": demangle the name, keep the tail
     * ('@' never occurs inside an Itanium or Rust mangling). */
    const char *at = memchr(raw, '@', n);
    size_t base = at ? (size_t)(at - raw) : n;
    char tmp[SPROF_DEMANGLE_MAX_INPUT + 1];
    memcpy(tmp, raw, base);
    tmp[base] = '\0';
    /* DMGL_AUTO tries Rust first (a legacy Rust name is also valid C++:
     * the Rust demangler recognises its hash and drops it, as rustfilt
     * does; DMGL_VERBOSE, which would keep it, is not set), then C++. */
    char *d = cplus_demangle(tmp, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
    if (!d)
        return 0;
    if (!d[0]) {
        free(d);
        return 0;
    }
    size_t dl = strlen(d), tl = n - base;
    if (dl + tl < outlen) {
        memcpy(out, d, dl);
        memcpy(out + dl, raw + base, tl);
        out[dl + tl] = '\0';
    } else { /* cut, and say so */
        size_t keep = outlen - 4;
        if (keep > dl)
            keep = dl;
        memcpy(out, d, keep);
        memcpy(out + keep, "...", 4);
    }
    free(d);
    return 1;
}

const char *sprof_native_display_name(const char *raw, char *buf, size_t buflen)
{
    return sprof_native_demangle(raw, buf, buflen) ? buf : raw;
}
