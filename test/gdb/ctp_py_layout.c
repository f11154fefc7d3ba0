/* Prints the cTP layout as gdb/ctp.py reads it, from the C declarations themselves (offsetof,
 * sizeof, the enums of ctp/segment.h and glibc's ucontext_t), one `name value` line each in the
 * form of `python3 gdb/ctp.py --layout`; test/gdb/layout.sh compares the two, so that a change
 * of the segment's layout cannot silently break the gdb extension. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <ucontext.h>

#include "ctp/saved_frame.h"
#include "ctp/segment.h"

#define FIELD(prefix, type, field) printf("%s.%s %zu\n", prefix, #field, offsetof(type, field))
#define VALUE(name, value) printf("%s %llu\n", name, (unsigned long long)(value))

int main(void)
{
	FIELD("header", struct ctp_header, magic);
	FIELD("header", struct ctp_header, version);
	FIELD("header", struct ctp_header, header_size);
	FIELD("header", struct ctp_header, station_count);
	FIELD("header", struct ctp_header, pid);
	FIELD("header", struct ctp_header, segment_size);
	FIELD("header", struct ctp_header, blocks_head);
	FIELD("header", struct ctp_header, station_size);
	FIELD("header", struct ctp_header, stack_depth);
	FIELD("block", struct ctp_block, kind);
	FIELD("block", struct ctp_block, size);
	FIELD("block", struct ctp_block, next);
	FIELD("chunk", struct ctp_station_chunk, first);
	FIELD("chunk", struct ctp_station_chunk, count);
	FIELD("chunk", struct ctp_station_chunk, stations_off);
	FIELD("station", struct ctp_station, seq);
	FIELD("station", struct ctp_station, state);
	FIELD("station", struct ctp_station, coro);
	FIELD("station", struct ctp_station, kind);
	FIELD("station", struct ctp_station, tid);
	FIELD("station", struct ctp_station, entry);
	FIELD("station", struct ctp_station, last_switch);
	FIELD("station", struct ctp_station, switches);
	FIELD("station", struct ctp_station, stack_lo);
	FIELD("station", struct ctp_station, stack_hi);
	FIELD("station", struct ctp_station, wait_fd);
	FIELD("station", struct ctp_station, wait_op);
	FIELD("station", struct ctp_station, stack_len);
	FIELD("station", struct ctp_station, saved_ctx);
	FIELD("station", struct ctp_station, ctx_kind);
	FIELD("station", struct ctp_station, stack_kind);
	FIELD("station", struct ctp_station, ended_to);
	FIELD("station", struct ctp_station, frames);
	VALUE("sizeof.header", sizeof(struct ctp_header));
	VALUE("sizeof.block", sizeof(struct ctp_block));
	VALUE("sizeof.chunk", sizeof(struct ctp_station_chunk));
	VALUE("sizeof.station", sizeof(struct ctp_station));
	VALUE("const.magic", CTP_MAGIC);
	VALUE("const.version", CTP_VERSION);
	VALUE("const.max_stack_depth", CTP_MAX_STACK_DEPTH);
	VALUE("const.cache_line", CTP_CACHE_LINE);
	VALUE("const.block_stations", CTP_BLOCK_STATIONS);
	VALUE("state.free", CTP_STATE_FREE);
	VALUE("state.created", CTP_STATE_CREATED);
	VALUE("state.running", CTP_STATE_RUNNING);
	VALUE("state.suspended", CTP_STATE_SUSPENDED);
	VALUE("state.exited", CTP_STATE_EXITED);
	VALUE("state.left", CTP_STATE_LEFT);
	VALUE("kind.thread", CTP_KIND_THREAD);
	VALUE("kind.ucontext", CTP_KIND_UCONTEXT);
	VALUE("kind.fcontext", CTP_KIND_FCONTEXT);
	VALUE("kind.simgrid_raw", CTP_KIND_SIMGRID_RAW);
	VALUE("op.read", CTP_OP_READ);
	VALUE("op.write", CTP_OP_WRITE);
	VALUE("op.accept", CTP_OP_ACCEPT);
	VALUE("op.connect", CTP_OP_CONNECT);
	VALUE("op.poll", CTP_OP_POLL);
	VALUE("wait.op_mask", CTP_WAIT_OP_MASK);
	VALUE("wait.closed", CTP_WAIT_CLOSED);
	VALUE("wait.epoch_shift", CTP_WAIT_EPOCH_SHIFT);
	VALUE("wait.epoch_mask", CTP_WAIT_EPOCH_MASK);
	VALUE("ctx.ucontext", CTP_CTX_UCONTEXT);
	VALUE("ctx.fcontext", CTP_CTX_FCONTEXT);
	VALUE("ctx.simgrid_raw", CTP_CTX_SIMGRID_RAW);
	for (uint32_t kind = CTP_CTX_FCONTEXT; kind <= CTP_CTX_SIMGRID_RAW; kind++) {
		const struct ctp_saved_frame *f = ctp_saved_frame_of(kind);
		printf("frame.%u.words %u\n", kind, f->words);
		printf("frame.%u.r12 %u\nframe.%u.r13 %u\nframe.%u.r14 %u\nframe.%u.r15 %u\n", kind,
		       f->r12, kind, f->r13, kind, f->r14, kind, f->r15);
		printf("frame.%u.rbx %u\nframe.%u.rbp %u\nframe.%u.rip %u\n", kind, f->rbx, kind,
		       f->rbp, kind, f->rip);
	}
	VALUE("ucontext.gregs", offsetof(ucontext_t, uc_mcontext.gregs));
	VALUE("greg.r12", REG_R12);
	VALUE("greg.r13", REG_R13);
	VALUE("greg.r14", REG_R14);
	VALUE("greg.r15", REG_R15);
	VALUE("greg.rbp", REG_RBP);
	VALUE("greg.rbx", REG_RBX);
	VALUE("greg.rsp", REG_RSP);
	VALUE("greg.rip", REG_RIP);
	return 0;
}
