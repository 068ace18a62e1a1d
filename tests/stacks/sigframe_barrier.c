/* tests/stacks, signal_barrier: a write barrier as garbage collectors
 * build it. The program's frame-pointer code stores into pages it made
 * read-only; a SIGSEGV handler on an alternate signal stack spends CPU,
 * then unprotects the page, and the store runs again. The handler and its
 * callees are compiled without frame pointers (this file), so while they
 * run rbp is still the interrupted code's, on the thread's stack: under
 * perf_event the kernel's chain starts there, and the stack copy holds
 * only the alternate stack. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>

#include "sigframe.h"

void barrier_on_fault(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    sigframe_burn();
    mprotect((void *)((uintptr_t)si->si_addr & ~(uintptr_t)4095), 4096, PROT_READ | PROT_WRITE);
}
