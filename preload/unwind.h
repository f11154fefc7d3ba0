/* Unwinding the caller's stack with libunwind, loaded privately (unwind.c), and keeping its own
 * fds apart from the program's (unwind_fds.c). */
#ifndef CTP_PRELOAD_UNWIND_H
#define CTP_PRELOAD_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "preload/compiler.h"

CTP_HIDDEN void ctp_unwind_init(void);
/* In a fork child: stacks stay on only if no other thread was walking one at the fork. */
CTP_HIDDEN void ctp_unwind_fork_child(void);
/* libunwind's own fds (unwind_fds.c): its address range, and whether a call comes from it. */
CTP_HIDDEN void ctp_unwinder_note(const void *symbol);
CTP_HIDDEN bool ctp_called_from_unwinder(const void *return_address);
/* Fills up to `max` return addresses of the caller's caller (skipping `skip` frames of the
 * preload's own); returns how many. */
CTP_HIDDEN uint32_t ctp_unwind(uint64_t *frames, uint32_t max, uint32_t skip);

#endif
