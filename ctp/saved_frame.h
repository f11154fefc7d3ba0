/* Where a switch that saves registers on the suspended coroutine's own stack left them: the
 * frame a saved context of kind CTP_CTX_FCONTEXT or CTP_CTX_SIMGRID_RAW points to (ctp/segment.h,
 * CTP.md "Saved contexts"). One table for every reader of such a frame: the collector and
 * ctp-pstack (ctp/stackwalk.c), the preload's pass at exit (preload/unwind_saved.c); the gdb
 * extension keeps a copy that test/gdb compares with this one. */
#ifndef CTP_SAVED_FRAME_H
#define CTP_SAVED_FRAME_H

#include <stdint.h>

#include "ctp/segment.h"

/* Indices of 8-byte words from the frame's start; the caller's stack pointer is right above the
 * frame's last word (the return address, `rip`). */
struct ctp_saved_frame {
	uint8_t words;
	uint8_t r12, r13, r14, r15, rbx, rbp, rip;
};

enum { CTP_SAVED_FRAME_MAX_WORDS = 13 };

/* The frame of a saved context kind, NULL for a kind that is not such a frame (a ucontext_t). */
static inline const struct ctp_saved_frame *ctp_saved_frame_of(uint32_t ctx_kind)
{
	/* Boost.Context 1.61+ (jump_fcontext, ontop_fcontext): 8 bytes of MXCSR and x87 control
	 * word, r12, r13, r14, r15, rbx, rbp, return address. The longjmp hooks build the same. */
	static const struct ctp_saved_frame fcontext = {
		.words = 8, .r12 = 1, .r13 = 2, .r14 = 3, .r15 = 4, .rbx = 5, .rbp = 6, .rip = 7};
	/* SimGrid's raw_swapcontext pushes rdi, rsi, rdx, rcx, r8, r9, rbp, rbx, r12, r13, r14,
	 * r15 below its return address. */
	static const struct ctp_saved_frame simgrid_raw = {
		.words = 13, .r15 = 0, .r14 = 1, .r13 = 2, .r12 = 3, .rbx = 4, .rbp = 5, .rip = 12};
	switch (ctx_kind) {
	case CTP_CTX_FCONTEXT:
		return &fcontext;
	case CTP_CTX_SIMGRID_RAW:
		return &simgrid_raw;
	default:
		return 0;
	}
}

#endif
