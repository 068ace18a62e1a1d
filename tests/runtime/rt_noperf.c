/* Runs a program where perf_event_open is refused, like a host with
 * perf_event_paranoid 3 or a container whose seccomp profile blocks it:
 * a seccomp filter makes the call fail with EACCES, then exec.
 * Usage: rt_noperf PRELOAD|- PROGRAM ARGS... (PRELOAD: LD_PRELOAD for PROGRAM only) */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rt_noperf PRELOAD|- PROGRAM ARGS...\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("rt_noperf: seccomp");
        return 2;
    }
    if (strcmp(argv[1], "-") != 0) setenv("LD_PRELOAD", argv[1], 1);
    execv(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
