/* libFuzzer harness: sprof_cfi_compile on arbitrary bytes. The first byte
 * chooses the layout (bit 0: .debug_frame) and the rest is the section.
 * Build (not wired into CMake):
 *   clang -g -fsanitize=fuzzer,address,undefined -Isymmap/include \
 *         tests/fuzz/cfi_fuzz.c symmap/src/\*.c -o cfi_fuzz
 *   ./cfi_fuzz tests/fuzz/corpus/cfi */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sprof/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int is_debug_frame = data[0] & 1;
    sprof_cfi_row *rows;
    size_t n;
    char err[256];
    if (sprof_cfi_compile(data + 1, size - 1, 0x400000, is_debug_frame, &rows, &n, err, sizeof(err)) != 0) {
        if (err[0] == 0 || strchr(err, '\n'))
            abort(); /* failures must say why, in one line */
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (rows[i].lo >= rows[i].hi || (i > 0 && rows[i - 1].hi > rows[i].lo))
            abort(); /* contract: sorted, non-overlapping, non-empty */
        if (sprof_cfi_find(rows, n, rows[i].lo) != &rows[i])
            abort();
    }
    free(rows);
    return 0;
}
