/* Trace lines to rows, written once for every database. Most line types are one row whose
 * columns name their fields (export_schema.c); a `process` line also gives one row per argv
 * entry, and a `stack` line one row per frame. */
#include <string.h>

#include "cat/export.h"

struct ctp_export_value ctp_export_value_of(json_t *v, enum ctp_export_type type)
{
	struct ctp_export_value out = {.kind = CTP_EXPORT_NULL};
	if (!v)
		return out;
	if (type == CTP_EXPORT_INT) {
		if (json_is_integer(v)) {
			out.kind = CTP_EXPORT_INTEGER;
			out.i = json_integer_value(v);
		} else if (json_is_true(v) || json_is_false(v)) {
			out.kind = CTP_EXPORT_INTEGER;
			out.i = json_is_true(v);
		}
	} else if (json_is_string(v)) {
		out.kind = CTP_EXPORT_STRING;
		out.s = json_string_value(v);
		out.len = json_string_length(v);
	}
	return out;
}

static struct ctp_export_value integer(int64_t i)
{
	return (struct ctp_export_value){.kind = CTP_EXPORT_INTEGER, .i = i};
}

/* Fills the columns of `def` that name a field, from `obj`, starting at column `first`. */
static void fill(struct ctp_export_value *row, const struct ctp_export_table_def *def,
		 unsigned first, json_t *obj)
{
	for (unsigned c = first; c < def->ncols; c++) {
		const struct ctp_export_column *col = &def->cols[c];
		row[c] = col->field
				 ? ctp_export_value_of(json_object_get(obj, col->field), col->type)
				 : (struct ctp_export_value){.kind = CTP_EXPORT_NULL};
	}
}

static int process_rows(json_t *line, int64_t trace_id, struct ctp_export_value *row,
			ctp_export_emit_fn emit, void *ctx)
{
	json_t *argv = json_object_get(line, "argv");
	struct ctp_export_value pid =
		ctp_export_value_of(json_object_get(line, "pid"), CTP_EXPORT_INT);
	size_t i;
	json_t *arg;
	json_array_foreach(argv, i, arg)
	{
		row[0] = integer(trace_id);
		row[1] = pid;
		row[2] = integer((int64_t)i);
		row[3] = ctp_export_value_of(arg, CTP_EXPORT_TEXT);
		int rc = emit(ctx, CTP_EXPORT_PROCESS_ARGS, row);
		if (rc)
			return rc;
	}
	return 0;
}

static int stack_rows(json_t *line, int64_t trace_id, struct ctp_export_value *row,
		      ctp_export_emit_fn emit, void *ctx)
{
	const struct ctp_export_table_def *stacks = &ctp_export_tables[CTP_EXPORT_STACKS];
	const struct ctp_export_table_def *frames = &ctp_export_tables[CTP_EXPORT_FRAMES];
	json_t *list = json_object_get(line, "frames");
	row[0] = integer(trace_id);
	fill(row, stacks, 1, line);
	row[3] = integer((int64_t)json_array_size(list));
	int rc = emit(ctx, CTP_EXPORT_STACKS, row);
	if (rc)
		return rc;
	struct ctp_export_value pid = row[1], id = row[2];
	size_t i;
	json_t *frame;
	json_array_foreach(list, i, frame)
	{
		row[0] = integer(trace_id);
		row[1] = pid;
		row[2] = id;
		row[3] = integer((int64_t)i);
		fill(row, frames, 4, frame);
		rc = emit(ctx, CTP_EXPORT_FRAMES, row);
		if (rc)
			return rc;
	}
	return 0;
}

/* The tables that are one row per line, by line type. The switch is tested first: it is
 * nearly every line of a big trace. */
static const enum ctp_export_table simple_tables[] = {
	CTP_EXPORT_SWITCHES,	 CTP_EXPORT_FD_EVENTS, CTP_EXPORT_COROUTINES,
	CTP_EXPORT_FINAL_STATES, CTP_EXPORT_LOSSES,    CTP_EXPORT_PROCESS_EXITS,
};

int ctp_export_line_rows(json_t *line, int64_t trace_id, ctp_export_emit_fn emit, void *ctx)
{
	const char *type = json_string_value(json_object_get(line, "type"));
	if (!type)
		return 0;
	struct ctp_export_value row[CTP_EXPORT_MAX_COLUMNS];
	for (size_t i = 0; i < sizeof(simple_tables) / sizeof(simple_tables[0]); i++) {
		const struct ctp_export_table_def *def = &ctp_export_tables[simple_tables[i]];
		if (strcmp(type, def->line_type) == 0) {
			row[0] = integer(trace_id);
			fill(row, def, 1, line);
			return emit(ctx, simple_tables[i], row);
		}
	}
	if (strcmp(type, "stack") == 0)
		return stack_rows(line, trace_id, row, emit, ctx);
	if (strcmp(type, "process") == 0) {
		const struct ctp_export_table_def *def = &ctp_export_tables[CTP_EXPORT_PROCESSES];
		row[0] = integer(trace_id);
		fill(row, def, 1, line);
		int rc = emit(ctx, CTP_EXPORT_PROCESSES, row);
		return rc ? rc : process_rows(line, trace_id, row, emit, ctx);
	}
	return 0;
}
