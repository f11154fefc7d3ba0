#include "pstack/view.h"

#include <string.h>

#include "ctp/names.h"

const struct ctp_sym *pstack_symbol(struct pstack_view *v, uint64_t addr, bool return_address)
{
	return ctp_symcache_lookup(v->syms, v->symbolizer, &v->modules, addr, return_address);
}

const char *pstack_state_name(uint32_t state)
{
	/* The trace never writes "left" (the collector decides at the end what it was); a live
	 * look cannot decide, so it says what the station says. */
	if (state == CTP_STATE_LEFT)
		return "left";
	const char *name = ctp_name_of(&ctp_state_names, state);
	return name ? name : "?";
}

const char *pstack_kind_name(uint32_t kind)
{
	const char *name = ctp_name_of(&ctp_kind_names, kind);
	return name ? name : "?";
}

const char *pstack_op_name(uint32_t op)
{
	const char *name = ctp_name_of(&ctp_op_names, op);
	return name ? name : "?";
}

size_t pstack_count_states(const struct pstack_snapshot *s, size_t count[CTP_STATE_LEFT + 1])
{
	size_t threads = 0;
	memset(count, 0, (CTP_STATE_LEFT + 1) * sizeof(*count));
	for (size_t i = 0; i < s->ncoros; i++) {
		if (s->coros[i].kind == CTP_KIND_THREAD)
			threads++;
		else if (s->coros[i].state <= CTP_STATE_LEFT)
			count[s->coros[i].state]++;
	}
	return threads;
}
