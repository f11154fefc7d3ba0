/* coroTracer's JSON Lines record shape, so that its tools can read a ctp trace:
 *   {"probe_id":u64,"tid":u64,"addr":"0x%016x","seq":u64,"is_active":bool,"ts":u64}
 * Each switch becomes two records at its time: `from` suspends (is_active false), then `to`
 * resumes (is_active true). probe_id is the coroutine id, addr its entry function's address
 * (zero for a thread's own stack, which has none), seq counts the records of each probe from 0.
 * coroTracer knows one process: a trace of several processes mixes their probe ids, which is
 * said once on stderr (--pid picks one). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cat/cat.h"
#include "cat/names.h"
#include "ctp/jsonw.h"

#define OUT_BUFFER_SIZE (64u << 10)

struct out_corotracer {
	FILE *f;
	struct ctp_cat_names *names;
	json_t *seqs; /* "pid:coro" -> records written for that probe */
	struct ctp_jsonw w;
	uint64_t first_pid;
	bool have_pid, warned;
};

static uint64_t next_seq(struct out_corotracer *o, uint64_t pid, uint64_t coro)
{
	char key[48];
	snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIu64, pid, coro);
	json_t *v = json_object_get(o->seqs, key);
	uint64_t seq = v ? (uint64_t)json_integer_value(v) : 0;
	json_object_set_new(o->seqs, key, json_integer((json_int_t)(seq + 1)));
	return seq;
}

static uint64_t probe_addr(struct out_corotracer *o, uint64_t pid, uint64_t coro)
{
	json_t *line = ctp_cat_names_coro_line(o->names, pid, coro);
	const char *addr = json_string_value(json_object_get(line, "entry_addr"));
	return addr ? strtoull(addr, NULL, 16) : 0;
}

static void put_record(struct out_corotracer *o, uint64_t pid, uint64_t coro, uint64_t tid,
		       bool active, uint64_t ts)
{
	struct ctp_jsonw *w = &o->w;
	char addr[24];
	snprintf(addr, sizeof(addr), "0x%016" PRIx64, probe_addr(o, pid, coro));
	CTP_JSONW_LIT(w, "{\"probe_id\":");
	ctp_jsonw_u64(w, coro);
	CTP_JSONW_LIT(w, ",\"tid\":");
	ctp_jsonw_u64(w, tid);
	CTP_JSONW_LIT(w, ",\"addr\":");
	ctp_jsonw_str(w, addr);
	CTP_JSONW_LIT(w, ",\"seq\":");
	ctp_jsonw_u64(w, next_seq(o, pid, coro));
	if (active)
		CTP_JSONW_LIT(w, ",\"is_active\":true,\"ts\":");
	else
		CTP_JSONW_LIT(w, ",\"is_active\":false,\"ts\":");
	ctp_jsonw_u64(w, ts);
	CTP_JSONW_LIT(w, "}\n");
}

static int corotracer_line(void *state, const struct ctp_trace_line *line)
{
	struct out_corotracer *o = state;
	const json_t *j = line->json;
	ctp_cat_names_see(o->names, j);
	if (strcmp(ctp_cat_type(j), "switch") != 0)
		return 0;
	uint64_t pid = 0, tid = 0, ts = 0, from, to;
	ctp_cat_u64(j, "pid", &pid);
	ctp_cat_u64(j, "tid", &tid);
	ctp_cat_u64(j, "ts", &ts);
	if (!o->have_pid) {
		o->have_pid = true;
		o->first_pid = pid;
	} else if (pid != o->first_pid && !o->warned) {
		o->warned = true;
		fputs("ctp-cat: the trace has several processes; their coroutine ids mix in "
		      "coroTracer records (--pid picks one)\n",
		      stderr);
	}
	ctp_jsonw_reset(&o->w);
	if (ctp_cat_u64(j, "from", &from))
		put_record(o, pid, from, tid, false, ts);
	if (ctp_cat_u64(j, "to", &to))
		put_record(o, pid, to, tid, true, ts);
	if (fwrite_unlocked(o->w.buf, 1, o->w.len, o->f) != o->w.len)
		return -1;
	return 0;
}

static int corotracer_finish(void *state)
{
	struct out_corotracer *o = state;
	return fflush(o->f) == 0 ? 0 : -1;
}

static void corotracer_free(void *state)
{
	struct out_corotracer *o = state;
	ctp_cat_names_free(o->names);
	json_decref(o->seqs);
	ctp_jsonw_free(&o->w);
	free(o);
}

int ctp_cat_out_corotracer_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_corotracer *o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	o->names = ctp_cat_names_new();
	o->seqs = json_object();
	if (!o->names || !o->seqs) {
		ctp_cat_names_free(o->names);
		json_decref(o->seqs);
		free(o);
		return -1;
	}
	ctp_jsonw_init(&o->w);
	o->f = f;
	if (!isatty(fileno(f)))
		setvbuf(f, NULL, _IOFBF, OUT_BUFFER_SIZE);
	out->state = o;
	out->line = corotracer_line;
	out->finish = corotracer_finish;
	out->free = corotracer_free;
	return 0;
}
