/* XML-safe text for the SVG: every name comes from an untrusted input, so
 * markup characters are escaped and bytes XML cannot carry (control
 * characters, invalid UTF-8, U+FFFE/U+FFFF) become '?'. */
#include <stdint.h>
#include <string.h>

#include "flamegraph_internal.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xEF && s[1] == 0xBF && (s[2] == 0xBE || s[2] == 0xBF))
            return 0; /* U+FFFE, U+FFFF: not XML characters */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        if (s[1] < lo || s[1] > hi || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

size_t sprof_flame_utf8_len(const char *s)
{
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t k = utf8_seq(p);
        p += k ? k : 1;
        n++;
    }
    return n;
}

void sprof_flame_xml_escape(FILE *out, const char *s, size_t max_chars)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t n = 0; *p && n < max_chars; n++) {
        size_t k = utf8_seq(p);
        if (k == 0) {
            fputc('?', out);
            p++;
            continue;
        }
        if (k > 1) {
            fwrite(p, 1, k, out);
            p += k;
            continue;
        }
        unsigned char c = *p++;
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        case '\n': fputs("&#10;", out); break;
        case '\t': fputc(' ', out); break;
        default: fputc(c < 0x20 || c == 0x7f ? '?' : c, out); break;
        }
    }
}
