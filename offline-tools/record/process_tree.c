/* Signalling the command's whole process tree: a wrapper (`sh -c 'app;
 * true'`, make) that gets SIGINT alone may ignore it or die and leave the
 * program running, orphaned, with the trace still open. The tree is read
 * from /proc (each process's parent in /proc/PID/stat). */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

typedef struct proc_link {
    pid_t pid, ppid;
} proc_link;

/* The parent of pid from /proc/PID/stat ("pid (comm) state ppid ..."; comm
 * may hold spaces and parentheses, so parse after the last ')'). 0 if gone. */
static pid_t parent_of(const char *pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *close = strrchr(buf, ')');
    int ppid = 0;
    if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
        return 0;
    return (pid_t)ppid;
}

void record_signal_tree(pid_t root, int sig)
{
    proc_link *links = NULL;
    size_t n = 0, cap = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            proc_link *l = realloc(links, nc * sizeof *l);
            if (!l)
                break;
            links = l;
            cap = nc;
        }
        links[n].pid = (pid_t)atoi(e->d_name);
        links[n].ppid = parent_of(e->d_name);
        n++;
    }
    if (d)
        closedir(d);
    /* the root first, then every process whose parent is in the set so far
     * (repeat until nothing is added: /proc lists in pid order, and pids wrap) */
    pid_t *tree = malloc((n + 1) * sizeof *tree);
    size_t nt = 0;
    if (tree) {
        tree[nt++] = root;
        for (size_t added = 1; added;) {
            added = 0;
            for (size_t i = 0; i < n; i++) {
                if (!links[i].pid)
                    continue;
                for (size_t j = 0; j < nt; j++)
                    if (links[i].ppid == tree[j] && links[i].pid != root) {
                        tree[nt++] = links[i].pid;
                        links[i].pid = 0;
                        added = 1;
                        break;
                    }
            }
        }
        for (size_t j = 0; j < nt; j++)
            kill(tree[j], sig);
    } else {
        kill(root, sig);
    }
    free(tree);
    free(links);
}
