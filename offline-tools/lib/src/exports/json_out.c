/* JSON string escaping (see json_out.h). */
#include "sprof/json_out.h"

#include <stdint.h>

int sprof_utf8_seq_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

void sprof_json_string(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc('"', out);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc((int)c, out);
            s++;
        } else if (c < 0x20 || c == 0x7f || c == '<') { /* '<': never "</script>" inside a page */
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\t': fputs("\\t", out); break;
            case '\r': fputs("\\r", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            s++;
        } else {
            int n = sprof_utf8_seq_len(s);
            if (n == 0) {
                fputs("\\ufffd", out);
                s++;
            } else {
                fwrite(s, 1, (size_t)n, out);
                s += n;
            }
        }
    }
    putc('"', out);
}
