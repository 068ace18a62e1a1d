/* Unit test of sprof_native_demangle (symmap/native): C++ and Rust (legacy
 * and v0) symbols as real toolchains wrote them (g++ 12.2 on
 * tests/native-names/cxx_prog.cpp and libstdc++; rustc 1.95 with the
 * default mangling and with -C symbol-mangling-version=v0; nm), names that
 * must stay untouched, the cut of a long result, and hostile input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/native_demangle.h"

static int failures;
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static const struct {
    const char *raw, *want;
} cases[] = {
    /* C++ (Itanium ABI): g++ 12.2, -O2 */
    { "_ZN3geo5scaleEi", "geo::scale(int)" },
    { "_ZN3geo5scaleEd", "geo::scale(double)" },
    { "_ZNK3geo4GridIdE9sum_cellsEv", "geo::Grid<double>::sum_cells() const" },
    { "_ZNK3geo4GridIiE9sum_cellsEv", "geo::Grid<int>::sum_cells() const" },
    { "_ZZ4mainENKUlmE_clEm", "main::{lambda(unsigned long)#1}::operator()(unsigned long) const" },
    { "_ZZ4mainENKUlmE_clEm.constprop.0",
      "main::{lambda(unsigned long)#1}::operator()(unsigned long) const [clone .constprop.0]" },
    { "_ZNSt12_Vector_baseIiSaIiEED2Ev", "std::_Vector_base<int, std::allocator<int> >::~_Vector_base()" },
    /* libstdc++.so.6 (GCC 12) */
    { "_ZSt11_Hash_bytesPKvmm", "std::_Hash_bytes(void const*, unsigned long, unsigned long)" },
    { "_ZSt11_Hash_bytesPKvmm@plt", "std::_Hash_bytes(void const*, unsigned long, unsigned long)@plt" },
    { "_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)" },
    { "_ZNSo9_M_insertIdEERSoT_", "std::ostream& std::ostream::_M_insert<double>(double)" },
    /* Rust legacy (rustc 1.95 default): the hash is dropped, as rustfilt does */
    { "_ZN1r4main17h086b0cfd890a8ea9E", "r::main" },
    { "_ZN1r4work17h26749b0d2027c777E", "r::work" },
    { "_ZN4core3ops8function6FnOnce40call_once$u7b$$u7b$vtable.shim$u7d$$u7d$17h42e08618e5619cfaE",
      "core::ops::function::FnOnce::call_once{{vtable.shim}}" },
    /* Rust v0 (rustc 1.95, -C symbol-mangling-version=v0; the standard
     * library is v0 already): crate disambiguators are dropped */
    { "_RNvCs6GmmlP4bgsG_1r4work", "r::work" },
    { "_RNvNtCsgEmfK2I1SDS_4core3fmt17pointer_fmt_inner", "core::fmt::pointer_fmt_inner" },
    { "_RNvXs1_NvNtCsjrHSEGnQ3l9_3std9panicking13panic_handlerNtB5_16StaticStrPayloadNtNtCsgEmfK2I1SDS_"
      "4core5panic12PanicPayload3get",
      "<std::panicking::panic_handler::StaticStrPayload as core::panic::PanicPayload>::get" },
    { "_RINvMsi_NtNtNtCslNYArtu3iFV_5alloc11collections5btree3mapINtB6_8BTreeMapyNtNtNtCsduwmD7cSIQq_5gimli"
      "4read6abbrev12AbbreviationE3getyEB1f_",
      "<alloc::collections::btree::map::BTreeMap<u64, gimli::read::abbrev::Abbreviation>>::get::<u64>" },
};

/* Not manglings: left exactly as they are. */
static const char *const plain[] = {
    "main", "sp_Foo_bar", "sp_Vec2__plus.isra.0", "calloc", "_start", "__libc_start_main",
    "_Z", "_R", "_ZN", "_Zfoo", "_Rfoo", "_ZN3foo", "[unknown]", "", "_GLOBAL__sub_I_main",
    "_ZN1r4main17h086b0cfd890a8ea9", /* cut before its E */
};

int main(void)
{
    char out[4096];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        memset(out, 0, sizeof out);
        int ok = sprof_native_demangle(cases[i].raw, out, sizeof out);
        CHECK(ok == 1, "%s: not demangled", cases[i].raw);
        CHECK(strcmp(out, cases[i].want) == 0, "%s:\n  got  %s\n  want %s", cases[i].raw, out, cases[i].want);
        char buf[4096];
        CHECK(strcmp(sprof_native_display_name(cases[i].raw, buf, sizeof buf), cases[i].want) == 0,
              "%s: display name", cases[i].raw);
    }
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++) {
        strcpy(out, "untouched");
        CHECK(sprof_native_demangle(plain[i], out, sizeof out) == 0, "%s: demangled to %s", plain[i], out);
        CHECK(strcmp(out, "untouched") == 0, "%s: out written", plain[i]);
        char buf[64];
        CHECK(sprof_native_display_name(plain[i], buf, sizeof buf) == plain[i], "%s: display name not raw",
              plain[i]);
    }
    CHECK(sprof_native_demangle(NULL, out, sizeof out) == 0, "NULL demangled");
    CHECK(sprof_native_demangle("_ZN3geo5scaleEi", NULL, 64) == 0, "NULL out accepted");
    CHECK(sprof_native_demangle("_ZN3geo5scaleEi", out, 4) == 0, "tiny out accepted");

    /* A result longer than the buffer is cut and says so. */
    char small[16];
    CHECK(sprof_native_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", small, sizeof small) == 1, "cut: not demangled");
    CHECK(strlen(small) == sizeof small - 1 && strcmp(small + sizeof small - 4, "...") == 0 &&
              strncmp(small, "std::vector<", 12) == 0,
          "cut: got \"%s\"", small);

    /* Longer than SPROF_DEMANGLE_MAX_INPUT: shown raw (even if valid). */
    size_t big = SPROF_DEMANGLE_MAX_INPUT + 100;
    char *s = malloc(big + 1);
    if (!s)
        return 1;
    memcpy(s, "_ZN", 3);
    size_t o = 3;
    while (o + 5 < big) {
        memcpy(s + o, "3abc", 4);
        o += 4;
    }
    memcpy(s + o, "Ev", 3);
    CHECK(sprof_native_demangle(s, out, sizeof out) == 0, "over-long name demangled");

    /* Hostile: deep nesting and random bytes after a mangling prefix must
     * neither crash nor hang (run under ASan/UBSan in CI's sanitizer build). */
    o = 0;
    memcpy(s, "_Z1fPPPPPPPP", 12);
    for (o = 12; o < SPROF_DEMANGLE_MAX_INPUT - 2; o++)
        s[o] = (o % 3) ? 'P' : 'A';
    s[o] = '\0';
    (void)sprof_native_demangle(s, out, sizeof out);
    for (o = 0; o + 2 < SPROF_DEMANGLE_MAX_INPUT; o += 2)
        memcpy(s + o, "IT", 2);
    s[0] = '_';
    s[1] = 'Z';
    s[o] = '\0';
    (void)sprof_native_demangle(s, out, sizeof out);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    static const char alpha[] = "_ZRNvEIKCsBSTt0123456789abcdefghijklmnopqrstuvwxyzSaSoPRLXJ$.@";
    for (int round = 0; round < 20000; round++) {
        size_t n = 2 + (size_t)(round % 200);
        s[0] = '_';
        s[1] = (round & 1) ? 'Z' : 'R';
        for (size_t k = 2; k < n; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s[k] = (round & 2) ? alpha[x % (sizeof alpha - 1)] : (char)(1 + x % 255);
        }
        s[n] = '\0';
        if (sprof_native_demangle(s, out, sizeof out))
            CHECK(strlen(out) < sizeof out, "random: overlong result");
    }
    free(s);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("native demangle: %zu manglings, %zu plain names, cut, over-long and 20000 random inputs ok\n",
           sizeof cases / sizeof *cases, sizeof plain / sizeof *plain);
    return 0;
}
