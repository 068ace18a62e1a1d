/* Rendering DOT to SVG with Graphviz `dot`: found on PATH, run with a fixed
 * argument list and no shell, DOT fed on its stdin, SVG written to a temp
 * file beside the destination and renamed into place on success. */
#include "sprof/callgraph.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sprof/out_file.h"

extern char **environ;

/* 1 if an executable `name` is in one of PATH's directories. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t n = colon ? (size_t)(colon - path) : strlen(path);
        char full[4096];
        if (n > 0 && n + strlen(name) + 2 < sizeof full) {
            snprintf(full, sizeof full, "%.*s/%s", (int)n, path, name);
            if (access(full, X_OK) == 0)
                return 1;
        }
        path += n;
        if (*path == ':')
            path++;
    }
    return 0;
}

int sprof_dot_render_svg(const char *dot_text, size_t len, const char *svg_path, char *err, size_t errlen)
{
    if (!on_path("dot")) {
        snprintf(err, errlen, "%s: cannot render SVG: Graphviz `dot` is not on PATH (install graphviz, "
                 "or write DOT with -o and render it elsewhere)", svg_path);
        return -1;
    }
    sprof_out_file o;
    if (sprof_out_open(&o, svg_path, err, errlen) != 0)
        return -1;
    fflush(o.fp);
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        snprintf(err, errlen, "%s: pipe: %s", svg_path, strerror(errno));
        sprof_out_abort(&o);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
    posix_spawn_file_actions_adddup2(&fa, fileno(o.fp), 1);
    posix_spawn_file_actions_addclose(&fa, pipefd[1]);
    char *argv[] = { "dot", "-Tsvg", NULL };
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[0]);
    if (rc != 0) {
        close(pipefd[1]);
        snprintf(err, errlen, "%s: cannot run dot: %s", svg_path, strerror(rc));
        sprof_out_abort(&o);
        return -1;
    }
    /* dot may exit early on bad input: do not die of SIGPIPE, report it. */
    struct sigaction ign = { 0 }, old;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    size_t off = 0;
    int write_failed = 0;
    while (off < len) {
        ssize_t w = write(pipefd[1], dot_text + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            write_failed = 1;
            break;
        }
        off += (size_t)w;
    }
    close(pipefd[1]);
    sigaction(SIGPIPE, &old, NULL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (write_failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "%s: dot failed (%s %d)", svg_path,
                 WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        sprof_out_abort(&o);
        return -1;
    }
    return sprof_out_commit(&o, err, errlen);
}
