/* Bounded line reading and malformed-line diagnostics for the text parsers
 * (perf script, Spinel allocation reports). A hostile input cannot make a
 * line cost more than SPROF_PERF_MAX_LINE bytes of memory. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "perf_script_internal.h"

int sprof_line_reader_init(sprof_line_reader *rd, FILE *in)
{
    memset(rd, 0, sizeof *rd);
    rd->in = in;
    rd->buf = malloc(SPROF_PERF_MAX_LINE + 1);
    return rd->buf ? 0 : -1;
}

void sprof_line_reader_free(sprof_line_reader *rd)
{
    free(rd->buf);
    rd->buf = NULL;
}

int sprof_line_next(sprof_line_reader *rd, char **line, size_t *len)
{
    size_t n = 0;
    int c = EOF;
    rd->too_long = 0;
    for (;;) {
        c = getc_unlocked(rd->in);
        if (c == EOF || c == '\n')
            break;
        if (n < SPROF_PERF_MAX_LINE)
            rd->buf[n++] = c == '\0' ? ' ' : (char)c;
        else
            rd->too_long = 1; /* keep consuming up to the newline */
    }
    if (c == EOF && ferror(rd->in))
        return -1;
    if (c == EOF && n == 0 && !rd->too_long)
        return 0;
    while (n > 0 && rd->buf[n - 1] == '\r')
        n--;
    rd->buf[n] = '\0';
    rd->lineno++;
    *line = rd->buf;
    *len = n;
    return 1;
}

int sprof_text_malformed(sprof_text_diag *d, unsigned long lineno, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    d->nmalformed++;
    if (d->strict) {
        snprintf(d->err, d->errlen, "%s:%lu: %s", d->name, lineno, msg);
        return -1;
    }
    if (d->nmalformed <= SPROF_TEXT_MAX_WARNINGS)
        fprintf(d->warn ? d->warn : stderr, "%s:%lu: warning: %s (line skipped)\n", d->name, lineno,
                msg);
    return 0;
}

void sprof_text_diag_finish(sprof_text_diag *d)
{
    if (d->nmalformed > SPROF_TEXT_MAX_WARNINGS)
        fprintf(d->warn ? d->warn : stderr,
                "%s: warning: %lu malformed lines in all (%lu not shown)\n", d->name,
                d->nmalformed, d->nmalformed - SPROF_TEXT_MAX_WARNINGS);
}

int sprof_text_next_line(sprof_line_reader *rd, sprof_text_diag *d, char **line, size_t *len)
{
    int r;
    while ((r = sprof_line_next(rd, line, len)) == 1 && rd->too_long)
        if (sprof_text_malformed(d, rd->lineno, "line longer than %d bytes", SPROF_PERF_MAX_LINE) != 0)
            return -1;
    if (r < 0)
        snprintf(d->err, d->errlen, "%s: read error", d->name);
    return r;
}
