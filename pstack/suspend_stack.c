#include "pstack/suspend_stack.h"

#include <string.h>

uint32_t pstack_suspend_stack(const struct pstack_segment *seg,
			      const struct ctp_station_snapshot *s, uint64_t *pcs, uint32_t max)
{
	(void)seg; /* the unwinder of saved contexts will read the process's stacks through it */
	/* Only a coroutine that is not running has a stack that stays put: a running one's
	 * frames in the station are those of its previous suspend. */
	if (s->state != CTP_STATE_SUSPENDED && s->state != CTP_STATE_LEFT)
		return 0;
	uint32_t n = s->stack_len < max ? s->stack_len : max;
	memcpy(pcs, s->frames, n * sizeof(*pcs));
	return n;
}
