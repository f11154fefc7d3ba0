#define _GNU_SOURCE
#include "ctp/stackwalk.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>

#include "ctp/saved_frame.h"
#include "ctp/core_file.h"
#include "ctp/segment.h"

/* Frames of the tracer's own that can lie above a swapcontext's call site. */
enum { OWN_FRAMES_MAX = 8 };

/* DWARF register numbers of x86-64 (SysV psABI). */
enum { DW_RBX = 3, DW_RBP = 6, DW_RSP = 7, DW_R12 = 12 };

struct ctp_stackwalk {
	Dwfl *dwfl;
	uint32_t pid;
	const struct ctp_core *core; /* NULL for a live process */
	const char *executable;	     /* the core's, or NULL for the one its NT_FILE names */
	ctp_mem_read_fn read;
	void *arg;
	uint32_t walks_since_report; /* modules are re-read for a pc in none of them, not often */
	/* The walk under way. */
	const struct ctp_regs *regs;
	uint64_t lo, hi, call_site;
	uint64_t *pcs, *slots;
	uint32_t max, n, skipped;
	bool found;
};

bool ctp_read_pid_memory(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t got = process_vm_readv((pid_t)(uintptr_t)arg, &local, 1, &remote, 1, 0);
	if (got >= 0 && (size_t)got != len)
		errno = EFAULT;
	return got >= 0 && (size_t)got == len;
}

bool ctp_read_pid_words(uint32_t pid, const uint64_t *addrs, uint32_t n, uint64_t *out)
{
	struct iovec remote[64];
	if (n == 0 || n > 64)
		return n == 0;
	for (uint32_t i = 0; i < n; i++)
		remote[i] = (struct iovec){.iov_base = (void *)(uintptr_t)addrs[i], .iov_len = 8};
	struct iovec local = {.iov_base = out, .iov_len = 8 * (size_t)n};
	ssize_t got = process_vm_readv((pid_t)pid, &local, 1, remote, n, 0);
	return got == (ssize_t)(8 * (size_t)n);
}

bool ctp_regs_from_context(ctp_mem_read_fn read, void *arg, uint32_t ctx_kind, uint64_t ctx,
			   struct ctp_regs *out)
{
	if (ctx_kind == CTP_CTX_UCONTEXT) {
		greg_t g[NGREG];
		if (!read(arg, ctx + offsetof(ucontext_t, uc_mcontext.gregs), g, sizeof(g)))
			return false;
		*out = (struct ctp_regs){
			.rip = (uint64_t)g[REG_RIP],
			.rsp = (uint64_t)g[REG_RSP],
			.rbp = (uint64_t)g[REG_RBP],
			.rbx = (uint64_t)g[REG_RBX],
			.r12 = (uint64_t)g[REG_R12],
			.r13 = (uint64_t)g[REG_R13],
			.r14 = (uint64_t)g[REG_R14],
			.r15 = (uint64_t)g[REG_R15],
		};
		return true;
	}
	const struct ctp_saved_frame *f = ctp_saved_frame_of(ctx_kind);
	if (f) {
		uint64_t w[CTP_SAVED_FRAME_MAX_WORDS];
		if (!read(arg, ctx, w, 8u * f->words))
			return false;
		*out = (struct ctp_regs){
			.r12 = w[f->r12],
			.r13 = w[f->r13],
			.r14 = w[f->r14],
			.r15 = w[f->r15],
			.rbx = w[f->rbx],
			.rbp = w[f->rbp],
			.rip = w[f->rip],
			.rsp = ctx + 8u * f->words,
		};
		return true;
	}
	return false;
}

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	struct ctp_stackwalk *w = dwfl_arg;
	if (*thread_argp)
		return 0; /* one pseudo-thread: the coroutine being walked */
	*thread_argp = w;
	return (pid_t)w->pid;
}

/* Only the walked stack: whatever else a register points to is not the walk's business. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	(void)dwfl;
	struct ctp_stackwalk *w = dwfl_arg;
	if (addr < w->lo || addr > w->hi - sizeof(*result))
		return false;
	uint64_t v;
	if (!w->read(w->arg, addr, &v, sizeof(v)))
		return false;
	*result = v;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct ctp_regs *r = ((struct ctp_stackwalk *)thread_arg)->regs;
	Dwarf_Word rbx = r->rbx;
	Dwarf_Word bp_sp[2] = {r->rbp, r->rsp};
	Dwarf_Word r12_15[4] = {r->r12, r->r13, r->r14, r->r15};
	if (!dwfl_thread_state_registers(thread, DW_RBX, 1, &rbx) ||
	    !dwfl_thread_state_registers(thread, DW_RBP, 2, bp_sp) ||
	    !dwfl_thread_state_registers(thread, DW_R12, 4, r12_15))
		return false;
	dwfl_thread_state_register_pc(thread, r->rip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* CFI comes from .eh_frame, in the modules' own files: no search for separate debug files (a
 * debuginfod client would go to the network). */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = no_debuginfo,
};

/* A core's modules are found by their build-ids and the paths its NT_FILE note gives, the
 * files on disk (again no debuginfod). */
static const Dwfl_Callbacks core_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = no_debuginfo,
};

static bool report_modules(struct ctp_stackwalk *w, Dwfl *dwfl)
{
	if (w->core)
		return dwfl_core_file_report(dwfl, (Elf *)w->core->elf, w->executable) > 0;
	return dwfl_linux_proc_report(dwfl, (pid_t)w->pid) == 0;
}

static Dwfl *open_dwfl(struct ctp_stackwalk *w)
{
	Dwfl *dwfl = dwfl_begin(w->core ? &core_callbacks : &proc_callbacks);
	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	if (!report_modules(w, dwfl) || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
	    !dwfl_attach_state(dwfl, NULL, (pid_t)w->pid, &thread_callbacks, w)) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

static struct ctp_stackwalk *open_walk(const struct ctp_stackwalk *init)
{
	struct ctp_stackwalk *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	*w = *init;
	w->dwfl = open_dwfl(w);
	if (!w->dwfl) {
		free(w);
		return NULL;
	}
	return w;
}

struct ctp_stackwalk *ctp_stackwalk_open_pid(uint32_t pid, ctp_mem_read_fn read, void *arg)
{
	return open_walk(&(struct ctp_stackwalk){.pid = pid, .read = read, .arg = arg});
}

struct ctp_stackwalk *ctp_stackwalk_open_core(const struct ctp_core *core, const char *executable)
{
	return open_walk(&(struct ctp_stackwalk){
		.pid = core->pid,
		.core = core,
		.executable = executable,
		.read = ctp_read_core_memory,
		.arg = (void *)core,
	});
}

void ctp_stackwalk_close(struct ctp_stackwalk *w)
{
	if (!w)
		return;
	dwfl_end(w->dwfl);
	free(w);
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct ctp_stackwalk *w = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	if (!w->found) {
		if (w->call_site && pc != w->call_site)
			return ++w->skipped >= OWN_FRAMES_MAX ? DWARF_CB_ABORT : DWARF_CB_OK;
		w->found = true;
	}
	if (w->slots) {
		Dwarf_Word sp = 0;
		w->slots[w->n] =
			w->n > 0 && dwfl_frame_reg(state, DW_RSP, &sp) == 0 && sp >= 8 ? sp - 8 : 0;
	}
	w->pcs[w->n++] = pc;
	return w->n >= w->max ? DWARF_CB_ABORT : DWARF_CB_OK;
}

uint32_t ctp_stackwalk_run(struct ctp_stackwalk *w, const struct ctp_regs *regs, uint64_t lo,
			   uint64_t hi, uint64_t call_site, uint64_t *pcs, uint32_t max)
{
	return ctp_stackwalk_run_slots(w, regs, lo, hi, call_site, pcs, NULL, max);
}

uint32_t ctp_stackwalk_run_slots(struct ctp_stackwalk *w, const struct ctp_regs *regs, uint64_t lo,
				 uint64_t hi, uint64_t call_site, uint64_t *pcs, uint64_t *slots,
				 uint32_t max)
{
	if (!w || max == 0 || hi <= lo || hi - lo < 8 || regs->rsp < lo || regs->rsp >= hi)
		return 0;
	/* A pc in no module known: objects loaded since the modules were read (but a stale
	 * context may hold any value: not on every walk). A core's modules are all known. */
	w->walks_since_report++;
	if (!w->core && !dwfl_addrmodule(w->dwfl, regs->rip) && w->walks_since_report >= 64) {
		w->walks_since_report = 0;
		Dwfl *fresh = open_dwfl(w);
		if (fresh) {
			dwfl_end(w->dwfl);
			w->dwfl = fresh;
		}
	}
	w->regs = regs;
	w->lo = lo;
	w->hi = hi;
	w->call_site = call_site;
	w->pcs = pcs;
	w->slots = slots;
	w->max = max;
	w->n = 0;
	w->skipped = 0;
	w->found = false;
	/* Ends with -1 both at the outermost frame and at the first it cannot unwind: the frames
	 * gathered so far are the stack either way. */
	(void)dwfl_getthread_frames(w->dwfl, (pid_t)w->pid, on_frame, w);
	w->regs = NULL;
	return w->found ? w->n : 0;
}
