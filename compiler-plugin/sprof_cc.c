/* sprof-cc: a C compiler wrapper that makes any build sprof-ready.
 * Runs the real compiler ($SPROF_REAL_CC, default "cc"; split on blanks,
 * no shell) with -g -fno-omit-frame-pointer placed before the user's flags
 * (so a later -g0 or -O from the user still wins), exits with its status,
 * and when the command linked an executable or shared object, runs
 * sprof-symmap on the output to write <output>.symmap. A symmap failure is
 * one warning line; it never fails the build. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sprof/tool.h"

/* Options whose value is the next argument (when not attached). */
static const char *const takes_value[] = {
    "-o", "-x", "-I", "-L", "-l", "-D", "-U", "-include", "-imacros", "-isystem", "-iquote",
    "-idirafter", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot", "-MF", "-MT",
    "-MQ", "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-z", "-e", "--param",
    "-aux-info", "-wrapper", "-arch", "--sysroot", "-A",
};

/* Options after which nothing is linked. */
static const char *const no_link[] = {
    "-c", "-S", "-E", "-M", "-MM", "-fsyntax-only", "-r", "--version", "-dumpversion",
    "-dumpmachine", "-dumpspecs", "--help", "-###",
};

static int in_list(const char *a, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a, list[i]) == 0)
            return 1;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Run argv, wait, return the exit status as a shell would report it. */
static int run(char **argv, int stderr_fd)
{
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "sprof-cc: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        if (stderr_fd >= 0) {
            dup2(stderr_fd, 2);
            close(stderr_fd);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "sprof-cc: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 127;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

/* sprof-symmap beside this executable, else the one on PATH. */
static void find_generator(char *out, size_t outlen)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(out, outlen, "%s/sprof-symmap", self);
            if (access(out, X_OK) == 0)
                return;
        }
    }
    snprintf(out, outlen, "sprof-symmap");
}

static void write_symmap(const char *output, char **sources, size_t nsources)
{
    char gen[PATH_MAX + 32], symmap[PATH_MAX + 16];
    find_generator(gen, sizeof gen);
    if ((size_t)snprintf(symmap, sizeof symmap, "%s.symmap", output) >= sizeof symmap) {
        fprintf(stderr, "sprof-cc: warning: no symmap for %s: path too long\n", output);
        return;
    }
    char **argv = calloc(nsources * 2 + 8, sizeof *argv);
    if (!argv)
        return;
    size_t k = 0;
    argv[k++] = gen;
    argv[k++] = (char *)output;
    argv[k++] = "-o";
    argv[k++] = symmap;
    argv[k++] = "--quiet";
    for (size_t i = 0; i < nsources; i++) {
        argv[k++] = "--c-source";
        argv[k++] = sources[i];
    }
    argv[k] = NULL;
    /* Capture the generator's error to fold it into one warning line. */
    FILE *tmp = tmpfile();
    int rc = run(argv, tmp ? fileno(tmp) : -1);
    if (rc != 0) {
        char line[1024] = "";
        if (tmp) {
            rewind(tmp);
            if (!fgets(line, sizeof line, tmp))
                line[0] = '\0';
        }
        line[strcspn(line, "\n")] = '\0';
        const char *msg = line;
        if (strncmp(msg, "sprof-symmap: ", 14) == 0)
            msg += 14;
        fprintf(stderr, "sprof-cc: warning: no symmap for %s: %s\n", output,
                *msg ? msg : "sprof-symmap failed");
    } else if (tmp) {
        /* Under --quiet the generator still says when the name map is
         * broken or suspicious: pass that on, it is about the names the
         * user will read. */
        rewind(tmp);
        char line[2048];
        while (fgets(line, sizeof line, tmp)) {
            line[strcspn(line, "\n")] = '\0';
            const char *msg = line;
            if (strncmp(msg, "sprof-symmap: ", 14) == 0)
                msg += 14;
            if (*msg)
                fprintf(stderr, "sprof-cc: %s\n", msg);
        }
    }
    if (tmp)
        fclose(tmp);
    free(argv);
}

static void usage(FILE *f)
{
    fputs("usage: sprof-cc [COMPILER ARGUMENTS...]\n"
          "  A C compiler wrapper that makes any build sprof-ready: runs the real compiler\n"
          "  ($SPROF_REAL_CC, default cc; split on blanks) with -g -fno-omit-frame-pointer\n"
          "  before your flags, exits with its status, and after a link writes OUTPUT.symmap\n"
          "  with sprof-symmap (Ruby names from OUTPUT.symbols.json when Spinel wrote one,\n"
          "  else from the C sources on the command line). A symmap problem is a warning\n"
          "  line (the generator's warnings are passed on); it never fails the build.\n"
          "  With Spinel (every version): spinel app.rb --cc=sprof-cc\n"
          "  Link the sampler in too:      spinel app.rb --cc=\"sprof-cc /PREFIX/lib/libsprof_rt.a\"\n"
          "  sprof-cc --help       this text (the compiler's own: $SPROF_REAL_CC --help)\n"
          "  sprof-cc --version    sprof-cc's version, then the compiler's\n"
          "  Manual: sprof-cc(1); environment: sprof-env(7).\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return SPROF_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0 && sprof_tool_print_version("sprof-cc") != SPROF_EXIT_OK)
        return SPROF_EXIT_FAILURE; /* then on, as any other command: the compiler's version */
    if (getenv("SPROF_CC_ACTIVE")) {
        fprintf(stderr, "sprof-cc: SPROF_REAL_CC runs sprof-cc again; point it at the real compiler\n");
        return 1;
    }
    const char *real = getenv("SPROF_REAL_CC");
    if (!real || !*real)
        real = "cc";
    char *real_copy = strdup(real);
    char **cc = calloc((size_t)argc + strlen(real) + 4, sizeof *cc);
    char **sources = calloc((size_t)argc + 1, sizeof *sources);
    if (!real_copy || !cc || !sources) {
        fprintf(stderr, "sprof-cc: out of memory\n");
        return 1;
    }
    size_t n = 0, nsources = 0, ninputs = 0;
    for (char *save = NULL, *w = strtok_r(real_copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
        cc[n++] = w;
    if (n == 0)
        cc[n++] = "cc";
    cc[n++] = "-g";
    cc[n++] = "-fno-omit-frame-pointer";

    const char *output = "a.out";
    int links = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        cc[n++] = argv[i];
        if (a[0] == '-' && a[1] != '\0') {
            if (in_list(a, no_link, sizeof no_link / sizeof *no_link) || strncmp(a, "-print-", 7) == 0)
                links = 0;
            if (strcmp(a, "-o") == 0 && i + 1 < argc) {
                output = argv[i + 1];
                cc[n++] = argv[++i];
            } else if (strncmp(a, "-o", 2) == 0 && a[2]) {
                output = a + 2;
            } else if (in_list(a, takes_value, sizeof takes_value / sizeof *takes_value) && i + 1 < argc) {
                cc[n++] = argv[++i];
            }
            continue;
        }
        ninputs++; /* a file operand (or "-" for stdin) */
        if (ends_with(a, ".c"))
            sources[nsources++] = argv[i];
    }
    cc[n] = NULL;

    setenv("SPROF_CC_ACTIVE", "1", 1);
    int status = run(cc, -1);
    unsetenv("SPROF_CC_ACTIVE");
    if (status == 0 && links && ninputs > 0)
        write_symmap(output, sources, nsources);
    free(cc);
    free(sources);
    free(real_copy);
    return status;
}
