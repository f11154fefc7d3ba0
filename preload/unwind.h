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
/* Whether thread t may walk stacks at what libunwind's thread-local cache costs it
 * (unwind_tls.c): decided at its first walk, inside the walk's fork guard, and kept in
 * t->unwinder_tls. */
struct ctp_thread;
CTP_HIDDEN bool ctp_unwinder_tls_decide(struct ctp_thread *t);
/* Up to `max` return addresses of the caller's caller (skipping `skip` frames of the preload's
 * own); returns how many, and points *frames at them, in the thread's walk area (walk_stack.h):
 * good until the thread's next walk. The walk runs on the thread's walk stack, not on the stack
 * it walks, which only needs known bounds. */
CTP_HIDDEN uint32_t ctp_unwind(const uint64_t **frames, uint32_t max, uint32_t skip);
/* The same walk, kept from the frame whose return address is call_site on: the frames of the
 * preload's own above it, however many, are dropped. 0 when call_site is not among the first
 * frames. slot: where call_site is stored (a hook's frame address + 8), so that a stack walked at
 * that place before may be checked in memory instead (unwind_memo.h); 0 when unknown. */
CTP_HIDDEN uint32_t ctp_unwind_from(const uint64_t **frames, uint32_t max, uint64_t call_site,
				    uint64_t slot);
/* The same, for a caller that runs on the walk stack already (ctp_on_walk_stack, with `area`):
 * sp is the slot of the stack walked that holds call_site (whose bounds must be known). A stack
 * walked at the same place before may be checked in memory instead (unwind_memo.h). */
struct ctp_walk_area;
CTP_HIDDEN uint32_t ctp_unwind_from_walk_stack(struct ctp_walk_area *area, const uint64_t **frames,
					       uint32_t max, uint64_t call_site, uint64_t sp);
/* Only the memory check of the same: the stack remembered at the place whose call site is
 * stored at sp (unwind_memo.h), 0 frames when there is none. `running`: the station of the
 * coroutine that suspends there, whose stack bounds answer without a lookup. For a caller on the
 * walk stack, where the memo is used (walk_stack.h): its notes run there too, never in between. */
struct ctp_station;
CTP_HIDDEN uint32_t ctp_unwind_remembered(struct ctp_walk_area *area, const uint64_t **frames,
					  uint32_t max, uint64_t sp,
					  const struct ctp_station *running);

/* Whether the running stack has room for a walk on it (known bounds, 8 KiB left): the pass at
 * exit (unwind_saved.c) walks in place. */
CTP_HIDDEN bool ctp_unwind_room(void);
/* A symbol of the privately loaded libunwind, NULL when stacks are off. */
CTP_HIDDEN void *ctp_unwind_symbol(const char *name);
/* Brackets a walk (a fork guard, fork_guard.h); false: a fork is under way, walk nothing. */
CTP_HIDDEN bool ctp_unwind_walk_begin(void);
CTP_HIDDEN void ctp_unwind_walk_end(void);

/* Unwinding of suspended coroutines from their saved contexts, in the process itself
 * (unwind_saved.c): at its end, for coroutines still suspended, whose memory the collector can no
 * longer read once the process is gone. */
CTP_HIDDEN void ctp_unwind_suspended_at_exit(void);
/* In a fork child: what it inherited suspended is not walked at its exit. */
CTP_HIDDEN void ctp_unwind_saved_fork_child(void);

#endif
