/* Perfetto's native trace format (protobuf TracePackets), for ui.perfetto.dev and
 * trace_processor: --format=perfetto. The messages are those of perfetto.proto (ctp's own
 * minimal copy of the parts of Perfetto's schema it writes), packed with protobuf-c.
 *
 * Layout: per traced process a process track (pid, executable's name, argv); under it one track
 * per coroutine, named "entry#id", holding the coroutine's runs as slices (begin at the switch
 * that resumed it, end at the switch that left it; debug annotation `tid`: the thread it ran
 * on; at its end, `suspended at`: the stack where it suspended, innermost first, as an interned
 * string). A flow goes from each run that switched to the run it resumed, and from a `close` of an
 * fd to the coroutine that was waiting on it (an instant "close fd N" inside the closer's run, an
 * instant "fd N closed while waiting" on the waiter's track): the lost wakeups. `loss` lines are
 * instants "events lost" on the process's track.
 *
 * Size: slice names (one per coroutine), the category, the annotation names and each stack (its
 * packet written when its `stack` line is read) are interned once on the one packet sequence, so
 * a run costs two small packets. Times are ns since the trace's
 * start.
 *
 * Streaming: each packet is written as soon as its event is read (the file is a Trace message
 * whose packets are written one by one). What is kept: per live thread the coroutine it runs,
 * per live coroutine its name and whether its track was written (dropped at its end and at its
 * process's exit), per live process the iids of its stacks' strings (the collector interns each
 * stack once), so memory follows the live threads, coroutines and distinct stacks, never the
 * trace's length.
 * Runs still open at a process's exit or the trace's end have no end: Perfetto shows them as
 * "did not end". */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cat/cat.h"
#include "ctp/symbolize.h"
#include "ctp/names.h"
#include "ctp/segment.h"
#include "perfetto.pb-c.h"

#define SEQUENCE_ID 1
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
/* Interned ids on the sequence: the one category and annotation name, then one name per
 * coroutine (and per instant's name) from FIRST_NAME_IID on. */
#define CATEGORY_IID 1
#define TID_ANNOTATION_IID 1
#define SUSPENDED_ANNOTATION_IID 2
#define FIRST_NAME_IID 1
#define FIRST_STACK_IID 1
/* Frames named in a stack's string: where it waits, and what called that. */
#define STACK_FRAMES_SHOWN 8
#define NAME_SIZE 256

/* A (pid, id) key: a thread (id = tid), a coroutine (id = coroutine id) or a process (id 0). */
struct entry {
	struct entry *next;
	uint32_t pid;
	uint64_t id;
	/* threads */
	uint64_t coro;	/* the coroutine it runs, when `open` */
	uint64_t since; /* when that run began */
	/* coroutines and processes: their track's uuid; threads: the open run's track */
	uint64_t uuid;
	bool open; /* a run of `coro` on this thread was begun and not ended */
	/* coroutines */
	const char *entry_name; /* interned by the decoder; NULL unknown */
	const char *kind_name;
	uint64_t name_iid; /* 0: not interned yet */
	bool declared;	   /* its track descriptor was written */
};

struct map {
	struct entry **buckets;
	size_t nbuckets, count;
};

struct out_perfetto {
	FILE *f;
	uint64_t start;
	struct map threads, coros, procs; /* procs: (pid, 0) */
	struct map stacks;		  /* (pid, stack id): name_iid is its string's iid */
	/* Track uuids are numbered from 1 as tracks appear, so that they take few bytes. */
	uint64_t next_iid, next_flow, next_uuid, next_stack_iid;
	uint8_t *buf;
	size_t cap;
	bool cleared; /* the first packet, which clears the incremental state, was written */
};

/* ---- the (pid, id) tables ---- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static size_t slot(const struct map *m, uint32_t pid, uint64_t id)
{
	return mix(mix(pid) ^ id) & (m->nbuckets - 1);
}

static struct entry *find(const struct map *m, uint32_t pid, uint64_t id)
{
	if (m->nbuckets == 0)
		return NULL;
	for (struct entry *e = m->buckets[slot(m, pid, id)]; e; e = e->next)
		if (e->pid == pid && e->id == id)
			return e;
	return NULL;
}

static int grow(struct map *m)
{
	size_t n = m->nbuckets ? m->nbuckets * 2 : 1024;
	struct entry **b = calloc(n, sizeof(*b));
	if (!b)
		return -1;
	struct map bigger = {b, n, m->count};
	for (size_t i = 0; i < m->nbuckets; i++) {
		for (struct entry *e = m->buckets[i], *next; e; e = next) {
			next = e->next;
			size_t s = slot(&bigger, e->pid, e->id);
			e->next = b[s];
			b[s] = e;
		}
	}
	free(m->buckets);
	*m = bigger;
	return 0;
}

static struct entry *get(struct map *m, uint32_t pid, uint64_t id)
{
	struct entry *e = find(m, pid, id);
	if (e)
		return e;
	if (m->count >= m->nbuckets && grow(m) < 0)
		return NULL;
	if (!(e = calloc(1, sizeof(*e))))
		return NULL;
	e->pid = pid;
	e->id = id;
	size_t s = slot(m, pid, id);
	e->next = m->buckets[s];
	m->buckets[s] = e;
	m->count++;
	return e;
}

static void drop(struct map *m, uint32_t pid, uint64_t id)
{
	if (m->nbuckets == 0)
		return;
	for (struct entry **p = &m->buckets[slot(m, pid, id)]; *p; p = &(*p)->next) {
		if ((*p)->pid == pid && (*p)->id == id) {
			struct entry *e = *p;
			*p = e->next;
			free(e);
			m->count--;
			return;
		}
	}
}

/* Drops every entry of process `pid` (it exited). */
static void drop_process(struct map *m, uint32_t pid)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		for (struct entry **p = &m->buckets[i]; *p;) {
			if ((*p)->pid == pid) {
				struct entry *e = *p;
				*p = e->next;
				free(e);
				m->count--;
			} else {
				p = &(*p)->next;
			}
		}
	}
}

static void free_map(struct map *m)
{
	for (size_t i = 0; i < m->nbuckets; i++) {
		for (struct entry *e = m->buckets[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(m->buckets);
	memset(m, 0, sizeof(*m));
}

/* ---- track ids ---- */

/* The process's track uuid (0: out of memory). An exec keeps the pid, and so the track. */
static uint64_t process_uuid(struct out_perfetto *o, uint32_t pid)
{
	struct entry *p = get(&o->procs, pid, 0);
	if (!p)
		return 0;
	if (!p->uuid)
		p->uuid = o->next_uuid++;
	return p->uuid;
}

/* ---- writing packets ---- */

static int put_varint(struct out_perfetto *o, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;
	do {
		b[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return fwrite_unlocked(b, 1, n, o->f) == n ? 0 : -1;
}

/* Writes `p` as one more `packet` (field 1, length-delimited) of the file's Trace. */
static int put_packet(struct out_perfetto *o, Pftrace__TracePacket *p)
{
	p->has_trusted_packet_sequence_id = 1;
	p->trusted_packet_sequence_id = SEQUENCE_ID;
	size_t n = pftrace__trace_packet__get_packed_size(p);
	if (n > o->cap) {
		size_t cap = n * 2;
		uint8_t *b = realloc(o->buf, cap);
		if (!b)
			return -1;
		o->buf = b;
		o->cap = cap;
	}
	pftrace__trace_packet__pack(p, o->buf);
	static const uint8_t key = 1 << 3 | 2; /* field 1, length-delimited */
	if (fwrite_unlocked(&key, 1, 1, o->f) != 1 || put_varint(o, n) < 0)
		return -1;
	return fwrite_unlocked(o->buf, 1, n, o->f) == n ? 0 : -1;
}

static uint64_t since_start(const struct out_perfetto *o, uint64_t ts)
{
	return ts > o->start ? ts - o->start : 0;
}

/* The first packet: clears the sequence's incremental state and interns the category "run" and
 * the annotation names "tid" and "suspended at". */
static int put_first(struct out_perfetto *o)
{
	Pftrace__EventCategory cat = PFTRACE__EVENT_CATEGORY__INIT;
	cat.has_iid = 1;
	cat.iid = CATEGORY_IID;
	cat.name = "run";
	Pftrace__EventCategory *cats[] = {&cat};
	Pftrace__DebugAnnotationName tid = PFTRACE__DEBUG_ANNOTATION_NAME__INIT;
	tid.has_iid = 1;
	tid.iid = TID_ANNOTATION_IID;
	tid.name = "tid";
	Pftrace__DebugAnnotationName at = PFTRACE__DEBUG_ANNOTATION_NAME__INIT;
	at.has_iid = 1;
	at.iid = SUSPENDED_ANNOTATION_IID;
	at.name = "suspended at";
	Pftrace__DebugAnnotationName *names[] = {&tid, &at};
	Pftrace__InternedData in = PFTRACE__INTERNED_DATA__INIT;
	in.n_event_categories = 1;
	in.event_categories = cats;
	in.n_debug_annotation_names = 2;
	in.debug_annotation_names = names;
	Pftrace__TracePacket p = PFTRACE__TRACE_PACKET__INIT;
	p.has_sequence_flags = 1;
	p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
	p.interned_data = &in;
	o->cleared = true;
	return put_packet(o, &p);
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path ? path : "?";
}

static int put_process(struct out_perfetto *o, const struct ctp_event *ev)
{
	Pftrace__ProcessDescriptor pd = PFTRACE__PROCESS_DESCRIPTOR__INIT;
	pd.has_pid = 1;
	pd.pid = (int32_t)ev->pid;
	pd.process_name = (char *)base_name(ev->process.exe);
	pd.n_cmdline = ev->process.argc;
	pd.cmdline = (char **)ev->process.argv;
	Pftrace__TrackDescriptor td = PFTRACE__TRACK_DESCRIPTOR__INIT;
	td.has_uuid = 1;
	if (!(td.uuid = process_uuid(o, ev->pid)))
		return -1;
	td.process = &pd;
	Pftrace__TracePacket p = PFTRACE__TRACE_PACKET__INIT;
	p.track_descriptor = &td;
	return put_packet(o, &p);
}

static void coro_name(const struct entry *c, char *buf, size_t size)
{
	const char *what = c->entry_name ? c->entry_name : c->kind_name ? c->kind_name : "coro";
	snprintf(buf, size, "%s#%" PRIu64, what, c->id);
}

/* The coroutine's track, written before its first event. */
static int declare(struct out_perfetto *o, struct entry *c)
{
	if (c->declared)
		return 0;
	char name[NAME_SIZE];
	coro_name(c, name, sizeof(name));
	Pftrace__TrackDescriptor td = PFTRACE__TRACK_DESCRIPTOR__INIT;
	td.has_uuid = 1;
	c->uuid = o->next_uuid++;
	td.uuid = c->uuid;
	td.has_parent_uuid = 1;
	if (!(td.parent_uuid = process_uuid(o, c->pid)))
		return -1;
	td.name = name;
	Pftrace__TracePacket p = PFTRACE__TRACE_PACKET__INIT;
	p.track_descriptor = &td;
	c->declared = true;
	return put_packet(o, &p);
}

/* One track event. `name`/`name_iid`: the slice's name, interned in this packet when
 * `intern` is set. */
struct te {
	uint64_t ts, track;
	Pftrace__TrackEvent__Type type;
	uint64_t name_iid;
	const char *intern; /* the name to intern as name_iid in this packet, or NULL */
	const char *name;   /* a name not interned (instants), or NULL */
	uint64_t flow, terminating_flow; /* 0: none */
	bool has_tid;
	uint32_t tid;
	uint64_t stack_iid; /* a run's end: where it suspended (0: not known) */
};

static int put_event(struct out_perfetto *o, const struct te *t)
{
	if (!o->cleared && put_first(o) < 0)
		return -1;
	Pftrace__TrackEvent e = PFTRACE__TRACK_EVENT__INIT;
	e.has_type = 1;
	e.type = t->type;
	e.has_track_uuid = 1;
	e.track_uuid = t->track;
	uint64_t cat = CATEGORY_IID;
	if (t->type != PFTRACE__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
		e.n_category_iids = 1;
		e.category_iids = &cat;
		if (t->name_iid) {
			e.has_name_iid = 1;
			e.name_iid = t->name_iid;
		} else {
			e.name = (char *)t->name;
		}
	}
	uint64_t flow = t->flow, term = t->terminating_flow;
	if (flow) {
		e.n_flow_ids = 1;
		e.flow_ids = &flow;
	}
	if (term) {
		e.n_terminating_flow_ids = 1;
		e.terminating_flow_ids = &term;
	}
	Pftrace__DebugAnnotation tid = PFTRACE__DEBUG_ANNOTATION__INIT;
	Pftrace__DebugAnnotation at = PFTRACE__DEBUG_ANNOTATION__INIT;
	Pftrace__DebugAnnotation *anns[2];
	if (t->has_tid) {
		tid.has_name_iid = 1;
		tid.name_iid = TID_ANNOTATION_IID;
		tid.has_uint_value = 1;
		tid.uint_value = t->tid;
		anns[e.n_debug_annotations++] = &tid;
	}
	if (t->stack_iid) {
		at.has_name_iid = 1;
		at.name_iid = SUSPENDED_ANNOTATION_IID;
		at.has_string_value_iid = 1;
		at.string_value_iid = t->stack_iid;
		anns[e.n_debug_annotations++] = &at;
	}
	if (e.n_debug_annotations)
		e.debug_annotations = anns;
	Pftrace__EventName en = PFTRACE__EVENT_NAME__INIT;
	Pftrace__EventName *ens[] = {&en};
	Pftrace__InternedData in = PFTRACE__INTERNED_DATA__INIT;
	Pftrace__TracePacket p = PFTRACE__TRACE_PACKET__INIT;
	if (t->intern) {
		en.has_iid = 1;
		en.iid = t->name_iid;
		en.name = (char *)t->intern;
		in.n_event_names = 1;
		in.event_names = ens;
		p.interned_data = &in;
	}
	p.has_timestamp = 1;
	p.timestamp = since_start(o, t->ts);
	p.has_sequence_flags = 1;
	p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE;
	p.track_event = &e;
	return put_packet(o, &p);
}

/* The coroutine (pid, coro), known from its `coro` line or, failing that, met in a switch. */
static struct entry *coro_entry(struct out_perfetto *o, uint32_t pid, uint64_t coro)
{
	struct entry *c = get(&o->coros, pid, coro);
	if (c && declare(o, c) < 0)
		return NULL;
	return c;
}

/* Begins a run of `coro` on thread `tid` at `ts`; `flow` (if not 0) ends there. */
static int begin_run(struct out_perfetto *o, uint32_t pid, uint32_t tid, uint64_t coro, uint64_t ts,
		     uint64_t flow)
{
	struct entry *c = coro_entry(o, pid, coro);
	struct entry *t = get(&o->threads, pid, tid);
	if (!c || !t)
		return -1;
	char name[NAME_SIZE];
	struct te e = {.ts = ts,
		       .track = c->uuid,
		       .type = PFTRACE__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN,
		       .terminating_flow = flow,
		       .has_tid = true,
		       .tid = tid};
	if (!c->name_iid) {
		c->name_iid = o->next_iid++;
		coro_name(c, name, sizeof(name));
		e.intern = name;
	}
	e.name_iid = c->name_iid;
	t->coro = coro;
	t->uuid = c->uuid;
	t->since = ts;
	t->open = true;
	return put_event(o, &e);
}

/* Ends the run open on thread `tid` at `ts`, where its coroutine suspended at `stack` (0: not
 * known); returns the flow that leaves it (0: no run was open, so none), or -1 on a write error
 * via *err. */
static uint64_t end_run(struct out_perfetto *o, uint32_t pid, uint32_t tid, uint64_t ts,
			bool with_flow, uint32_t stack, int *err)
{
	struct entry *t = find(&o->threads, pid, tid);
	if (!t || !t->open)
		return 0;
	uint64_t flow = with_flow ? o->next_flow++ : 0;
	const struct entry *st = stack ? find(&o->stacks, pid, stack) : NULL;
	struct te e = {.ts = ts,
		       .track = t->uuid,
		       .type = PFTRACE__TRACK_EVENT__TYPE__TYPE_SLICE_END,
		       .flow = flow,
		       .stack_iid = st ? st->name_iid : 0};
	t->open = false;
	if (put_event(o, &e) < 0)
		*err = -1;
	return flow;
}

static int on_switch(struct out_perfetto *o, const struct ctp_event *ev)
{
	int err = 0;
	uint64_t flow = end_run(o, ev->pid, ev->tid, ev->ts, true, ev->stack, &err);
	if (err < 0)
		return -1;
	return begin_run(o, ev->pid, ev->tid, ev->sw.to, ev->ts, flow);
}

/* A close that stranded a waiter: a flow from the closer's run (an instant inside it) to an
 * instant on the waiter's track. */
static int on_close(struct out_perfetto *o, const struct ctp_event *ev)
{
	struct entry *waiter = coro_entry(o, ev->pid, ev->fd.waiter);
	struct entry *closer = ev->coro ? coro_entry(o, ev->pid, ev->coro) : NULL;
	if (!waiter || (ev->coro && !closer))
		return -1;
	char what[64];
	uint64_t flow = o->next_flow++;
	snprintf(what, sizeof(what), "close fd %d", ev->fd.fd);
	struct te e = {.ts = ev->ts,
		       .type = PFTRACE__TRACK_EVENT__TYPE__TYPE_INSTANT,
		       .name = what,
		       .has_tid = true,
		       .tid = ev->tid};
	if (closer) {
		e.track = closer->uuid;
		e.flow = flow;
		if (put_event(o, &e) < 0)
			return -1;
	}
	snprintf(what, sizeof(what), "fd %d closed while waiting", ev->fd.fd);
	e.track = waiter->uuid;
	e.flow = 0;
	e.terminating_flow = closer ? flow : 0;
	e.has_tid = false;
	return put_event(o, &e);
}

static int on_loss(struct out_perfetto *o, const struct ctp_event *ev)
{
	char what[64];
	snprintf(what, sizeof(what), "events lost: %" PRIu64, ev->loss.count);
	if (!process_uuid(o, ev->pid))
		return -1;
	struct te e = {.ts = ev->ts ? ev->ts : o->start,
		       .track = process_uuid(o, ev->pid),
		       .type = PFTRACE__TRACK_EVENT__TYPE__TYPE_INSTANT,
		       .name = what,
		       .has_tid = true,
		       .tid = ev->tid};
	return put_event(o, &e);
}

/* A `stack` line: its frames as one string ("f <- g <- h"), interned now in a packet of its own,
 * so that the ends of runs that suspended there refer to it by iid. */
static int on_stack(struct out_perfetto *o, const struct ctp_event *ev)
{
	struct entry *st = get(&o->stacks, ev->pid, ev->stack_line.id);
	if (!st)
		return -1;
	char text[2048];
	size_t used = 0;
	for (size_t i = 0; i < ev->stack_line.nframes && i < STACK_FRAMES_SHOWN; i++) {
		const struct ctp_event_frame *fr = &ev->stack_line.frames[i];
		char place[512];
		int n = snprintf(text + used, sizeof(text) - used, "%s%s", i ? " <- " : "",
				 fr->sym ? fr->sym
					 : ctp_frame_place(place, sizeof(place), fr->module,
							   fr->has_module_off, fr->module_off,
							   fr->addr));
		if (n < 0 || (size_t)n >= sizeof(text) - used)
			break; /* a name too long for the rest: the string ends before it */
		used += (size_t)n;
	}
	text[used] = '\0';
	if (!o->cleared && put_first(o) < 0)
		return -1;
	st->name_iid = o->next_stack_iid++;
	Pftrace__InternedString str = PFTRACE__INTERNED_STRING__INIT;
	str.has_iid = 1;
	str.iid = st->name_iid;
	str.has_str = 1;
	str.str.data = (uint8_t *)text;
	str.str.len = used;
	Pftrace__InternedString *strs[] = {&str};
	Pftrace__InternedData in = PFTRACE__INTERNED_DATA__INIT;
	in.n_debug_annotation_string_values = 1;
	in.debug_annotation_string_values = strs;
	Pftrace__TracePacket p = PFTRACE__TRACE_PACKET__INIT;
	p.has_sequence_flags = 1;
	p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE;
	p.interned_data = &in;
	return put_packet(o, &p);
}

static int perfetto_event(void *state, const struct ctp_event *ev)
{
	struct out_perfetto *o = state;
	struct entry *c;
	switch (ev->type) {
	case CTP_EV_TRACE:
		o->start = ev->trace.start;
		return o->cleared ? 0 : put_first(o);
	case CTP_EV_PROCESS:
		return put_process(o, ev);
	case CTP_EV_CORO:
		if (!(c = get(&o->coros, ev->pid, ev->coro)))
			return -1;
		c->entry_name = ev->coro_line.entry;
		c->kind_name = ev->coro_line.kind_name;
		if (declare(o, c) < 0)
			return -1;
		/* A thread's own coroutine runs from the thread's start. A run still open on the
		 * same thread is one of the image an exec replaced: it ends here. (A thread's
		 * coroutine announced late, from its station, after runs of that thread: nothing.)
		 */
		if (ev->coro_line.kind == CTP_KIND_THREAD && ev->tid != 0 && ev->ts != 0) {
			struct entry *t = find(&o->threads, ev->pid, ev->tid);
			if (t && t->open && t->since > ev->ts)
				return 0;
			int err = 0;
			end_run(o, ev->pid, ev->tid, ev->ts, false, 0, &err);
			if (err < 0)
				return -1;
			return begin_run(o, ev->pid, ev->tid, ev->coro, ev->ts, 0);
		}
		return 0;
	case CTP_EV_SWITCH:
		return on_switch(o, ev);
	case CTP_EV_STACK:
		return on_stack(o, ev);
	case CTP_EV_CORO_END:
		/* The switch that leaves it (if any) comes after and needs only the thread's entry.
		 * A thread that exited ends its run here, and its entry goes. */
		drop(&o->coros, ev->pid, ev->coro);
		if (ev->coro_end.how == CTP_END_THREAD_EXIT && ev->tid != 0 && ev->ts != 0) {
			struct entry *t = find(&o->threads, ev->pid, ev->tid);
			if (t && t->open && t->coro == ev->coro && t->since <= ev->ts) {
				int err = 0;
				end_run(o, ev->pid, ev->tid, ev->ts, false, 0, &err);
				if (err < 0)
					return -1;
			}
			drop(&o->threads, ev->pid, ev->tid);
		}
		return 0;
	case CTP_EV_FD:
		if (ev->fd.event == CTP_FD_CLOSE && ev->fd.waiter != 0)
			return on_close(o, ev);
		return 0;
	case CTP_EV_LOSS:
		return on_loss(o, ev);
	case CTP_EV_EXIT:
		drop_process(&o->threads, ev->pid);
		drop_process(&o->coros, ev->pid);
		drop_process(&o->stacks, ev->pid);
		drop(&o->procs, ev->pid, 0);
		return 0;
	default:
		return 0;
	}
}

static int perfetto_finish(void *state)
{
	struct out_perfetto *o = state;
	if (!o->cleared && put_first(o) < 0)
		return -1;
	return fflush(o->f) == 0 && !ferror(o->f) ? 0 : -1;
}

static void perfetto_free(void *state)
{
	struct out_perfetto *o = state;
	free_map(&o->threads);
	free_map(&o->coros);
	free_map(&o->procs);
	free_map(&o->stacks);
	free(o->buf);
	free(o);
}

int ctp_cat_out_perfetto_open(struct ctp_cat_output *out, FILE *f)
{
	struct out_perfetto *o = calloc(1, sizeof(*o));
	if (!o) {
		errno = ENOMEM;
		return -1;
	}
	o->f = f;
	o->next_iid = FIRST_NAME_IID;
	o->next_stack_iid = FIRST_STACK_IID;
	o->next_flow = 1;
	o->next_uuid = 1;
	*out = (struct ctp_cat_output){.state = o,
				       .event = perfetto_event,
				       .finish = perfetto_finish,
				       .free = perfetto_free};
	return 0;
}
