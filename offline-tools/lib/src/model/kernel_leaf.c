/* The synthetic leaf frame of a kernel-time sample (format 1.1): the
 * sample's stack is the user context that entered the kernel, and this
 * frame on top says what the kernel was doing for it. Its names are made
 * and recognised here only. */
#include <stdio.h>
#include <string.h>

#include "sprof/trace_reader.h"

const char *sprof_kernel_leaf_name(uint32_t flags, char *buf, size_t buflen)
{
    if (!(flags & SPROF_SAMPLE_KERNEL) || !buf || buflen == 0)
        return NULL;
    if (flags & SPROF_SAMPLE_SYSCALL) {
        /* the number field is 12 bits from a hostile file: the lookup is bounds-checked */
        const char *name = sprof_syscall_name(SPROF_SAMPLE_SYSCALL_NR(flags));
        if (name)
            snprintf(buf, buflen, "[syscall %s]", name);
        else
            snprintf(buf, buflen, "[syscall]");
    } else if (flags & SPROF_SAMPLE_PAGE_FAULT) {
        snprintf(buf, buflen, "[page fault]");
    } else {
        snprintf(buf, buflen, "[kernel]");
    }
    return buf;
}

int sprof_is_kernel_leaf_name(const char *name, size_t len)
{
    static const char *const exact[] = { "[syscall]", "[page fault]", "[kernel]" };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (len == strlen(exact[i]) && memcmp(name, exact[i], len) == 0)
            return 1;
    static const char prefix[] = "[syscall ";
    return len > sizeof prefix && memcmp(name, prefix, sizeof prefix - 1) == 0 && name[len - 1] == ']' &&
           !memchr(name + sizeof prefix - 1, ' ', len - sizeof prefix);
}
