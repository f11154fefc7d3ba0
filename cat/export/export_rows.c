/* Events to rows, written once for every database: each line type's event fills its table's
 * columns in the schema's order (export_schema.c); a `process` event also gives one row per argv
 * entry, and a `stack` event one row per frame. */
#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cat/export/export.h"

struct ctp_export_value ctp_export_text(const char *s)
{
	if (!s)
		return (struct ctp_export_value){.kind = CTP_EXPORT_NULL};
	return (struct ctp_export_value){.kind = CTP_EXPORT_STRING, .s = s, .len = strlen(s)};
}

struct ctp_export_value ctp_export_int(int64_t i)
{
	return (struct ctp_export_value){.kind = CTP_EXPORT_INTEGER, .i = i};
}

struct ctp_export_value ctp_export_id(uint64_t id)
{
	return id ? ctp_export_int((int64_t)id)
		  : (struct ctp_export_value){.kind = CTP_EXPORT_NULL};
}

static const struct ctp_export_value null_value = {.kind = CTP_EXPORT_NULL};

/* Addresses are text "0x..." in the schema, as in the trace; 0 is unknown. */
static struct ctp_export_value address(char *buf, size_t size, uint64_t addr)
{
	if (!addr)
		return null_value;
	snprintf(buf, size, "0x%" PRIx64, addr);
	return ctp_export_text(buf);
}

static int process_rows(const struct ctp_event *ev, int64_t trace_id, struct ctp_export_value *row,
			ctp_export_emit_fn emit, void *ctx)
{
	row[0] = ctp_export_int(trace_id);
	row[1] = ctp_export_id(ev->pid);
	row[2] = ev->process.has_ppid ? ctp_export_int(ev->process.ppid) : null_value;
	row[3] = ctp_export_text(ev->process.exe);
	int rc = emit(ctx, CTP_EXPORT_PROCESSES, row);
	for (size_t i = 0; rc == 0 && i < ev->process.argc; i++) {
		row[2] = ctp_export_int((int64_t)i);
		row[3] = ctp_export_text(ev->process.argv[i]);
		rc = emit(ctx, CTP_EXPORT_PROCESS_ARGS, row);
	}
	return rc;
}

static int stack_rows(const struct ctp_event *ev, int64_t trace_id, struct ctp_export_value *row,
		      ctp_export_emit_fn emit, void *ctx)
{
	row[0] = ctp_export_int(trace_id);
	row[1] = ctp_export_id(ev->pid);
	row[2] = ctp_export_id(ev->stack_line.id);
	row[3] = ctp_export_int((int64_t)ev->stack_line.nframes);
	int rc = emit(ctx, CTP_EXPORT_STACKS, row);
	char addr[24];
	for (size_t i = 0; rc == 0 && i < ev->stack_line.nframes; i++) {
		const struct ctp_event_frame *f = &ev->stack_line.frames[i];
		row[3] = ctp_export_int((int64_t)i);
		row[4] = address(addr, sizeof(addr), f->addr);
		row[5] = ctp_export_text(f->sym);
		row[6] = f->has_off ? ctp_export_int((int64_t)f->off) : null_value;
		row[7] = ctp_export_text(f->module);
		row[8] = ctp_export_text(f->file);
		row[9] = f->line ? ctp_export_int(f->line) : null_value;
		rc = emit(ctx, CTP_EXPORT_FRAMES, row);
	}
	return rc;
}

/* A `state` line's columns after trace_id (and its snapshot's number): the same in a final state
 * and in a snapshot's. Returns how many were filled. */
static size_t state_columns(const struct ctp_event *ev, struct ctp_export_value *row)
{
	size_t n = 0;
	row[n++] = ctp_export_id(ev->pid);
	row[n++] = ctp_export_id(ev->coro);
	row[n++] = ctp_export_text(ev->state.state_name);
	row[n++] = ctp_export_id(ev->tid);
	row[n++] = ctp_export_id(ev->state.since);
	row[n++] = ctp_export_id(ev->stack);
	row[n++] =
		ev->state.has_switches ? ctp_export_int((int64_t)ev->state.switches) : null_value;
	row[n++] = ev->state.wait_fd >= 0 ? ctp_export_int(ev->state.wait_fd) : null_value;
	row[n++] = ctp_export_text(ev->state.wait_op_name);
	return n;
}

int ctp_export_event_rows(const struct ctp_event *ev, int64_t trace_id, int64_t snapshot,
			  ctp_export_emit_fn emit, void *ctx)
{
	if (!ev->line)
		return 0; /* derived from a format 1 trace: no line to export */
	struct ctp_export_value row[CTP_EXPORT_MAX_COLUMNS];
	char addr[24];
	size_t n = 0;
	enum ctp_export_table table;
	row[n++] = ctp_export_int(trace_id);
	switch (ev->type) {
	case CTP_EV_SWITCH:
		table = CTP_EXPORT_SWITCHES;
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_id(ev->tid);
		row[n++] = ctp_export_id(ev->ts);
		row[n++] = ctp_export_id(ev->sw.from);
		row[n++] = ctp_export_id(ev->sw.to);
		row[n++] = ctp_export_text(ev->sw.how_name);
		row[n++] = ctp_export_id(ev->stack);
		break;
	case CTP_EV_FD:
		table = CTP_EXPORT_FD_EVENTS;
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_id(ev->tid);
		row[n++] = ctp_export_id(ev->ts);
		row[n++] = ctp_export_id(ev->coro);
		row[n++] = ev->fd.fd >= 0 ? ctp_export_int(ev->fd.fd) : null_value;
		row[n++] = ctp_export_text(ev->fd.event_name);
		row[n++] = ctp_export_text(ev->fd.op_name);
		row[n++] = ctp_export_id(ev->fd.waiter);
		row[n++] = ctp_export_id(ev->stack);
		break;
	case CTP_EV_CORO:
		table = CTP_EXPORT_COROUTINES;
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_id(ev->coro);
		row[n++] = ctp_export_text(ev->coro_line.kind_name);
		row[n++] = ctp_export_text(ev->coro_line.entry);
		row[n++] = address(addr, sizeof(addr), ev->coro_line.entry_addr);
		row[n++] = ctp_export_id(ev->coro_line.parent);
		row[n++] = ctp_export_id(ev->tid);
		row[n++] = ctp_export_id(ev->ts);
		row[n++] = ctp_export_id(ev->stack);
		break;
	case CTP_EV_STATE:
		if (snapshot >= 0) {
			table = CTP_EXPORT_SNAPSHOT_STATES;
			row[n++] = ctp_export_int(snapshot);
		} else {
			table = CTP_EXPORT_FINAL_STATES;
		}
		n += state_columns(ev, row + n);
		break;
	case CTP_EV_CORO_END:
		table = CTP_EXPORT_CORO_ENDS;
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_id(ev->coro);
		row[n++] = ctp_export_id(ev->tid);
		row[n++] = ctp_export_id(ev->ts);
		row[n++] = ctp_export_text(ev->coro_end.how_name);
		row[n++] = ctp_export_text(ev->coro_end.switch_name);
		break;
	case CTP_EV_SNAPSHOT:
		table = CTP_EXPORT_SNAPSHOTS;
		row[n++] = ctp_export_int(snapshot);
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_id(ev->ts);
		row[n++] = ev->snapshot.has_states ? ctp_export_int((int64_t)ev->snapshot.states)
						   : null_value;
		break;
	case CTP_EV_LOSS:
		table = CTP_EXPORT_LOSSES;
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_id(ev->tid);
		row[n++] =
			ev->loss.has_count ? ctp_export_int((int64_t)ev->loss.count) : null_value;
		row[n++] = ctp_export_text(ev->loss.why);
		break;
	case CTP_EV_EXIT:
		table = CTP_EXPORT_PROCESS_EXITS;
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ev->exit.kind == CTP_EXIT_LINE_STATUS ? ctp_export_int(ev->exit.value)
								 : null_value;
		row[n++] = ev->exit.kind == CTP_EXIT_LINE_SIGNAL ? ctp_export_int(ev->exit.value)
								 : null_value;
		row[n++] = ctp_export_id(ev->tid);
		row[n++] = ctp_export_id(ev->coro);
		row[n++] = address(addr, sizeof(addr), ev->exit.addr);
		row[n++] = ctp_export_id(ev->ts); /* traces before exit times have none */
		break;
	case CTP_EV_MODULE: {
		table = CTP_EXPORT_MODULES;
		char lo[24], hi[24];
		row[n++] = ctp_export_id(ev->pid);
		row[n++] = ctp_export_text(ev->module_line.path);
		row[n++] = ctp_export_text(ev->module_line.build_id);
		/* A fixed-address executable's bias is 0: a value, not an unknown. */
		snprintf(addr, sizeof(addr), "0x%" PRIx64, ev->module_line.bias);
		row[n++] = ctp_export_text(addr);
		row[n++] = address(lo, sizeof(lo), ev->module_line.lo);
		row[n++] = address(hi, sizeof(hi), ev->module_line.hi);
		assert(n == ctp_export_tables[table].ncols);
		return emit(ctx, table, row);
	}
	case CTP_EV_STACK:
		return stack_rows(ev, trace_id, row, emit, ctx);
	case CTP_EV_PROCESS:
		return process_rows(ev, trace_id, row, emit, ctx);
	default:
		return 0;
	}
	assert(n == ctp_export_tables[table].ncols);
	return emit(ctx, table, row);
}
