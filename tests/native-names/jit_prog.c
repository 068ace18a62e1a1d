/* A tiny JIT for tests/native-names jit_e2e.sh: copies two functions'
 * machine code (x86-64: a frame-pointer prologue, a countdown loop) into
 * an anonymous executable mapping and calls them from run_jit, as node or
 * a JVM runs the code it compiled. argv[1]: "map" also writes the perf map
 * a JIT writes for profilers (/tmp/perf-<pid>.map: "START SIZE NAME"),
 * naming them jit_hot and jit_cold; argv[2]: seconds of CPU. Prints the
 * map's path (or "-") on stdout. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* push %rbp; mov %rsp,%rbp; mov $N,%ecx; 1: dec %ecx; jnz 1b; pop %rbp; ret */
static const unsigned char body[] = {0x55, 0x48, 0x89, 0xe5, 0xb9, 0x00, 0x00, 0x00, 0x00,
                                     0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3};

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned char *emit(unsigned char *at, unsigned count)
{
    memcpy(at, body, sizeof body);
    memcpy(at + 5, &count, 4);
    return at;
}

__attribute__((noinline)) static void run_jit(void (*hot)(void), void (*cold)(void), double seconds)
{
    double end = cpu_now() + seconds;
    while (cpu_now() < end) {
        for (int i = 0; i < 3; i++) hot();
        cold();
    }
}

int main(int argc, char **argv)
{
    int with_map = argc > 1 && !strcmp(argv[1], "map");
    double seconds = argc > 2 ? atof(argv[2]) : 0.5;
    unsigned char *code = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) return perror("mmap"), 1;
    unsigned char *hot = emit(code + 64, 200000), *cold = emit(code + 4096 + 128, 200000);
    if (mprotect(code, 8192, PROT_READ | PROT_EXEC) != 0) return perror("mprotect"), 1;
    char path[64] = "-";
    if (with_map) {
        snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
        FILE *f = fopen(path, "w");
        if (!f) return perror(path), 1;
        fprintf(f, "%lx %zx jit_hot\n%lx %zx jit_cold\n", (unsigned long)(uintptr_t)hot, sizeof body,
                (unsigned long)(uintptr_t)cold, sizeof body);
        fclose(f);
    }
    run_jit((void (*)(void))(void *)hot, (void (*)(void))(void *)cold, seconds);
    printf("%s\n", path);
    return 0;
}
