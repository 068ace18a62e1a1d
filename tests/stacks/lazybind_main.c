/* lazybind SECONDS CALLER_LIB: dlopen the caller library (RTLD_LAZY), run
 * its lazy_call_all (2000 lazy bindings), dlclose it (both libraries are
 * unmapped), again for SECONDS. Under sprof: stacks through ld.so's
 * lazy-binding trampoline keep their caller, and a library unloaded while
 * its return addresses wait in a perf_event ring does not fault the
 * runtime's writer (which read its code bytes after dlclose before). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: lazybind SECONDS CALLER_LIB\n");
        return 2;
    }
    double secs = atof(argv[1]), t0 = now();
    unsigned sink = 0, rounds = 0;
    while (now() - t0 < secs) {
        void *h = dlopen(argv[2], RTLD_LAZY | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "lazybind: %s\n", dlerror());
            return 1;
        }
        int (*call_all)(int);
        *(void **)&call_all = dlsym(h, "lazy_call_all");
        if (!call_all) {
            fprintf(stderr, "lazybind: %s\n", dlerror());
            return 1;
        }
        sink += (unsigned)call_all(1);
        dlclose(h);
        rounds++;
    }
    printf("lazybind: %u rounds (%u)\n", rounds, sink);
    return 0;
}
