/* Running the profiled command: the sampler's environment in the child
 * only (sprof-record and its helpers stay unprofiled), signals forwarded,
 * an optional time limit, the command's status passed back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record.h"

/* Set by the handlers, acted on by the wait loop (the signals are blocked
 * everywhere else, so none is missed between a check and the wait). */
static volatile sig_atomic_t forward_sig;  /* a SIGINT/SIGTERM to pass on */
static volatile sig_atomic_t limit_reached; /* --duration's timer, or a grace period, ran out */
static sigset_t original_mask;              /* restored in the child */

/* SIGINT/SIGTERM to sprof-record: pass it on. A terminal's ^C (si_code
 * SI_KERNEL) went to the whole foreground process group, the command's
 * tree included: sending it again would deliver it twice. */
static void on_forward(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    if (info->si_code != SI_KERNEL)
        forward_sig = sig;
}

static void on_alarm(int sig)
{
    (void)sig;
    limit_reached = 1;
}

static void on_child(int sig)
{
    (void)sig; /* only wakes sigsuspend */
}

static int set_handlers(int on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = on ? SA_SIGINFO : 0;
    if (on)
        sa.sa_sigaction = on_forward;
    else
        sa.sa_handler = SIG_DFL;
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0)
        return -1;
    sa.sa_flags = 0;
    sa.sa_handler = on ? on_alarm : SIG_DFL;
    if (sigaction(SIGALRM, &sa, NULL) != 0)
        return -1;
    sa.sa_handler = on ? on_child : SIG_DFL;
    return sigaction(SIGCHLD, &sa, NULL);
}

/* LD_PRELOAD=<existing>:<ours>: a preload already asked for (an ASan
 * runtime, which wants to come first) keeps its place. */
static int add_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !*old)
        return setenv("LD_PRELOAD", lib, 1);
    size_t n = strlen(old) + 1 + strlen(lib) + 1;
    char *v = malloc(n);
    if (!v)
        return -1;
    snprintf(v, n, "%s:%s", old, lib);
    int rc = setenv("LD_PRELOAD", v, 1);
    free(v);
    return rc;
}

/* In the child, before exec (sprof-record is single-threaded, so setenv
 * after fork is safe). */
static int set_sampler_env(const record_env *e)
{
    /* a SPINEL_PROFILE or SPROF_* left in the user's environment must not
     * redirect or reshape this recording */
    unsetenv("SPINEL_PROFILE");
    unsetenv("SPROF_MODE");
    unsetenv("SPROF_HZ");
    unsetenv("SPROF_TIMER");
    unsetenv("SPROF_QUIET");
    unsetenv("SPROF_OVERWRITE");
    if ((e->preload && add_preload(e->preload) != 0) || setenv("SPROF_OUT", e->trace, 1) != 0)
        return -1;
    if ((e->hz && setenv("SPROF_HZ", e->hz, 1) != 0) || (e->timer && setenv("SPROF_TIMER", e->timer, 1) != 0) ||
        (e->wall && setenv("SPROF_MODE", "wall", 1) != 0) || (e->quiet && setenv("SPROF_QUIET", "1", 1) != 0))
        return -1;
    return 0;
}

/* fork + exec; the exec's errno comes back through a close-on-exec pipe
 * (nothing read: the exec succeeded). */
static pid_t spawn(char *const *argv, const record_env *env, int *exec_errno)
{
    int fds[2];
    *exec_errno = 0;
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        int e = ENOMEM;
        if (!env || set_sampler_env(env) == 0) {
            sigprocmask(SIG_SETMASK, &original_mask, NULL);
            execvp(argv[0], argv);
            e = errno;
        }
        ssize_t w = write(fds[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(fds[1]);
    if (pid > 0) {
        int e;
        ssize_t r;
        do
            r = read(fds[0], &e, sizeof e);
        while (r < 0 && errno == EINTR);
        if (r == (ssize_t)sizeof e)
            *exec_errno = e;
    }
    close(fds[0]);
    return pid;
}

static int exit_code(int st)
{
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

static int wait_status(pid_t pid)
{
    int st;
    pid_t r;
    do
        r = waitpid(pid, &st, 0);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -1 : exit_code(st);
}

static void arm_timer(double secs)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)secs;
    it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
    if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
        it.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &it, NULL);
}

/* Wait for pid with our signals blocked except inside sigsuspend: forward
 * what arrives, and on the time limit send SIGINT, then SIGTERM after 2 s,
 * then SIGKILL after 3 s more (a command that ignores both). */
static int wait_command(pid_t pid, double duration_s, const sigset_t *waiting_mask)
{
    static const int limit_sigs[] = { SIGINT, SIGTERM, SIGKILL };
    static const double grace[] = { 2, 3, 0 };
    int stage = 0, st;
    if (duration_s > 0)
        arm_timer(duration_s);
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return exit_code(st);
        if (r < 0 && errno != EINTR)
            return -1;
        if (forward_sig) {
            int sig = forward_sig;
            forward_sig = 0;
            record_signal_tree(pid, sig);
        }
        if (limit_reached && stage < 3) {
            limit_reached = 0;
            record_signal_tree(pid, limit_sigs[stage]);
            if (grace[stage] > 0)
                arm_timer(grace[stage]);
            stage++;
        }
        if (r == 0)
            sigsuspend(waiting_mask);
    }
}

int record_run_command(char *const *argv, const record_env *env, double duration_s, int *started)
{
    *started = 0;
    sigset_t block, waiting;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGALRM);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &original_mask);
    waiting = original_mask;
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGTERM);
    sigdelset(&waiting, SIGALRM);
    sigdelset(&waiting, SIGCHLD);
    forward_sig = 0;
    limit_reached = 0;
    int status = -1, exec_errno = 0, e = 0;
    pid_t pid = -1;
    if (set_handlers(1) != 0) {
        e = errno;
        fprintf(stderr, RECORD_TOOL ": cannot install signal handlers: %s\n", strerror(e));
    } else if ((pid = spawn(argv, env, &exec_errno)) < 0) {
        e = errno;
        fprintf(stderr, RECORD_TOOL ": cannot start %s: %s\n", argv[0], strerror(e));
    } else {
        status = wait_command(pid, exec_errno ? 0 : duration_s, &waiting);
        if (status < 0)
            fprintf(stderr, RECORD_TOOL ": waiting for %s: %s\n", argv[0], strerror(errno));
    }
    struct itimerval off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &off, NULL);
    set_handlers(0); /* from here a ^C stops sprof-record itself */
    sigprocmask(SIG_SETMASK, &original_mask, NULL);
    if (status < 0)
        return -1;
    if (exec_errno) { /* as env(1): 127 not found, 126 found but not runnable */
        fprintf(stderr, RECORD_TOOL ": %s: %s\n", argv[0], strerror(exec_errno));
        return exec_errno == ENOENT ? 127 : 126;
    }
    *started = 1;
    return status;
}

int record_run_helper(char *const *argv)
{
    int exec_errno;
    pid_t pid = spawn(argv, NULL, &exec_errno);
    if (pid < 0)
        return -1;
    int status = wait_status(pid);
    return exec_errno ? -1 : status;
}
