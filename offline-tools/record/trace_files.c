/* The files of one recording: a private temporary directory for the trace
 * (and a symmap made for it), the executable the trace names, keeping the
 * raw trace where -o asks, and clearing up. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sprof/out_file.h"
#include "sprof/trace_reader.h"
#include "record.h"

char *record_make_workdir(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    size_t n = strlen(tmp) + sizeof "/sprof-record.XXXXXX";
    char *dir = malloc(n);
    if (!dir)
        return NULL;
    snprintf(dir, n, "%s/sprof-record.XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        fprintf(stderr, RECORD_TOOL ": cannot create a directory in %s for the trace: %s\n", tmp, strerror(errno));
        free(dir);
        return NULL;
    }
    /* an absolute name: the process tree may change directory */
    char *abs = realpath(dir, NULL);
    if (abs) {
        free(dir);
        dir = abs;
    }
    return dir;
}

void record_remove_workdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        /* the trace, traces wrappers kept (<name>.<pid>), a made symmap */
        for (struct dirent *e; (e = readdir(d));)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(dir);
}

char *record_trace_exe(const char *trace)
{
    char err[512];
    sprof_trace *t = sprof_trace_open(trace, err, sizeof err);
    if (!t)
        return NULL;
    char *exe = NULL;
    sprof_trace_record rec;
    while (!exe && sprof_trace_next(t, &rec, err, sizeof err) == 1)
        if (rec.type == SPROF_REC_INFO && rec.u.info.exe_path && *rec.u.info.exe_path)
            exe = strdup(rec.u.info.exe_path);
    sprof_trace_close(t);
    return exe;
}

/* rename, or copy (atomically, through sprof_out_file) across file systems */
int record_keep_file(const char *from, const char *to)
{
    if (rename(from, to) == 0)
        return 0;
    if (errno != EXDEV) {
        fprintf(stderr, RECORD_TOOL ": %s: %s\n", to, strerror(errno));
        return -1;
    }
    char err[1024];
    FILE *in = fopen(from, "rb");
    if (!in) {
        fprintf(stderr, RECORD_TOOL ": %s: %s\n", from, strerror(errno));
        return -1;
    }
    sprof_out_file of;
    if (sprof_out_open(&of, to, err, sizeof err) != 0) {
        fclose(in);
        fprintf(stderr, RECORD_TOOL ": %s\n", err);
        return -1;
    }
    char buf[65536];
    size_t n;
    int bad = 0;
    while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0)
        bad = fwrite(buf, 1, n, of.fp) != n;
    bad |= ferror(in);
    fclose(in);
    if (bad) {
        sprof_out_abort(&of);
        fprintf(stderr, RECORD_TOOL ": copying %s to %s failed\n", from, to);
        return -1;
    }
    if (sprof_out_commit(&of, err, sizeof err) != 0) {
        fprintf(stderr, RECORD_TOOL ": %s\n", err);
        return -1;
    }
    return 0;
}
