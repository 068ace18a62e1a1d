/* Replays fuzz corpus files through a libFuzzer harness without libFuzzer,
 * so every corpus file (seeds and past findings) is a regression test in
 * the ordinary suite, under the ordinary (and sanitizer) builds.
 * Usage: replay FILE-OR-DIR... */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int replay_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ++*count;
        return replay_file(path);
    }
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char child[4096];
            snprintf(child, sizeof child, "%s/%s", path, names[i]->d_name);
            if (replay_path(child, count) != 0)
                rc = -1;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i], &count) != 0)
            rc = 1;
    printf("replayed %d inputs\n", count);
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    return rc;
}
