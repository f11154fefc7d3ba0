/* What the two views of a snapshot (text for people, JSON for scripts) share: the snapshot, its
 * groups, the symbols of the process, and the words for states and waits. */
#ifndef CTP_PSTACK_VIEW_H
#define CTP_PSTACK_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctp/symcache.h"
#include "pstack/groups.h"
#include "pstack/snapshot.h"

/* What a core file says of itself, for the views' header. */
struct pstack_core_facts {
	const char *path;	/* as the user named it */
	const char *executable; /* the program's file, NULL when unknown */
	int signal;		/* the signal that made the core, 0 none (gcore) */
	uint32_t signal_tid;	/* the thread that took it */
};

struct pstack_view {
	const struct pstack_snapshot *snap;
	const struct pstack_groups *groups;
	struct ctp_symcache *syms;
	struct ctp_symbolizer *symbolizer;    /* NULL: addresses only */
	struct ctp_module_source modules;     /* for modules loaded since the table was read */
	const char *command;		      /* the process's command line, for the header */
	const struct pstack_core_facts *core; /* NULL: a live process */
	bool full_names;		      /* text: C++ names with their template arguments */
	FILE *out;
};

/* What `addr` is: a return address of a suspend stack, or an entry function. */
const struct ctp_sym *pstack_symbol(struct pstack_view *v, uint64_t addr, bool return_address);

/* The word for a state: those of the trace format, and "left" (see docs/ctp-pstack.md). */
const char *pstack_state_name(uint32_t state);

/* The word for a coroutine kind, "?" when unknown. */
const char *pstack_kind_name(uint32_t kind);

/* The word for a wait operation, "?" when unknown. */
const char *pstack_op_name(uint32_t op);

/* How many coroutines of the snapshot are in each state (count[state], threads not counted);
 * returns how many threads' own stacks it holds. */
size_t pstack_count_states(const struct pstack_snapshot *s, size_t count[CTP_STATE_LEFT + 1]);

void pstack_write_text(struct pstack_view *v);
void pstack_write_json(struct pstack_view *v);

/* The snapshot as a trace, into `z` (docs/ctp-pstack.md, "As a trace"). */
struct pstack_procinfo;
struct ctp_zwriter;
void pstack_write_trace(struct pstack_view *v, const struct pstack_procinfo *pi,
			struct ctp_zwriter *z);

#endif
