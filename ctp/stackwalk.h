/* The stack of a suspended coroutine, unwound from outside the process that runs it: from the
 * registers its switch saved (station.saved_ctx, enum ctp_ctx_kind) and its memory, read through
 * a callback. One unwinder for every reader: the collector on a live process (memory through
 * process_vm_readv), live snapshots (ctp-pstack PID) and core files (ctp-pstack --core: the
 * memory of the core's PT_LOADs, its modules from its NT_FILE note).
 * Built on elfutils' libdwfl (CFI from the modules' files, with their frame-pointer fallback).
 *
 * Everything read is untrusted: the walk reads memory only inside the stack bounds it is given,
 * and stops at the first frame it cannot unwind. */
#ifndef CTP_STACKWALK_H
#define CTP_STACKWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Copies len bytes at addr of the unwound program's memory into buf; false when it cannot. */
typedef bool (*ctp_mem_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* The registers a walk starts from: the callee-saved ones and where the frame returns. */
struct ctp_regs {
	uint64_t rip, rsp, rbp, rbx, r12, r13, r14, r15;
};

/* Reads the registers saved by a switch in a context of kind ctx_kind (enum ctp_ctx_kind) at
 * ctx. False when the kind is unknown or the memory cannot be read. */
bool ctp_regs_from_context(ctp_mem_read_fn read, void *arg, uint32_t ctx_kind, uint64_t ctx,
			   struct ctp_regs *out);

/* process_vm_readv on the process whose pid is (uintptr_t)arg. errno tells why it failed
 * (EPERM: not allowed to read it, ESRCH: gone). */
bool ctp_read_pid_memory(void *arg, uint64_t addr, void *buf, size_t len);

/* The 8-byte words at addrs[0..n) (n <= 64) of process pid, in one process_vm_readv. */
bool ctp_read_pid_words(uint32_t pid, const uint64_t *addrs, uint32_t n, uint64_t *out);

struct ctp_stackwalk;

/* A walker for live process pid, its modules read from /proc/PID/maps; NULL on failure. */
struct ctp_stackwalk *ctp_stackwalk_open_pid(uint32_t pid, ctp_mem_read_fn read, void *arg);
/* A walker over a core file (ctp/core_file.h), which must outlive it: memory from the core, the
 * modules from its NT_FILE note found on disk by build-id or path; `executable` (may be NULL)
 * names the program's file when it is no longer where the core says. NULL on failure. */
struct ctp_core;
struct ctp_stackwalk *ctp_stackwalk_open_core(const struct ctp_core *core, const char *executable);

void ctp_stackwalk_close(struct ctp_stackwalk *w);

/* Unwinds from regs, reading stack memory only within [lo, hi), into up to max return
 * addresses, innermost first. With call_site != 0 the frames above the one at call_site (the
 * tracer's own, in a swapcontext hook) are dropped, and nothing is returned when call_site is
 * not among the first few frames (the context no longer holds that suspend). */
uint32_t ctp_stackwalk_run(struct ctp_stackwalk *w, const struct ctp_regs *regs, uint64_t lo,
			   uint64_t hi, uint64_t call_site, uint64_t *pcs, uint32_t max);

/* The same walk, also telling where in memory each return address was read: slots[k] for
 * pcs[k], k >= 1 (the caller's stack pointer, less 8); slots[0] = 0, the call site coming from
 * the context; a slot libdwfl cannot tell is 0. Reading those words again later says cheaply
 * whether the stack is still the same. */
uint32_t ctp_stackwalk_run_slots(struct ctp_stackwalk *w, const struct ctp_regs *regs, uint64_t lo,
				 uint64_t hi, uint64_t call_site, uint64_t *pcs, uint64_t *slots,
				 uint32_t max);

#endif
