/* Running a program's main work on a stack deep enough for libdw (deep_stack.c). */
#ifndef CTP_DEEP_STACK_H
#define CTP_DEEP_STACK_H

/* Returns fn(argc, argv), run on the calling thread where RLIMIT_STACK allows a stack of 8 MiB
 * or more, else on a thread of its own with an 8 MiB stack (the caller waits for it, every
 * signal blocked, so that signals reach fn's thread as they would have reached the caller). */
int ctp_main_on_deep_stack(int (*fn)(int argc, char **argv), int argc, char **argv);

#endif
