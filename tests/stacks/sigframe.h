/* Shared by sigframe.c and sigframe_barrier.c (tests/stacks). */
#ifndef SIGFRAME_H
#define SIGFRAME_H
#include <signal.h>

void sigframe_burn(void);
void barrier_on_fault(int sig, siginfo_t *si, void *uc);
#endif
