/* Streaming filters of ctp-cat (--pid, --coro, --tid, --type, --since, --until).
 *
 * A filter judges only the lines that carry its field: --pid the `pid`, --tid the `tid`, --coro
 * the `coro`, `from` and `to` (any of them), --since/--until the `ts`. An event line is kept when
 * every filter that can judge it agrees, and when --type lists its type; so a `loss` line (no
 * `coro`) stays under --coro, as it tells that the view may miss events.
 *
 * Definitions (`process`, `coro`, `stack`) are kept outright only when every active filter
 * judges them and agrees. Otherwise they are held back and written just before the first kept
 * line that refers to them (by `pid`, `coro`, `from`, `to`, `parent` or `stack`), so that the
 * output is again a self-contained trace. The `trace` header is always kept. */
#ifndef CTP_CAT_FILTER_H
#define CTP_CAT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cat/duration.h"

struct ctp_cat_output; /* cat/cat.h, which includes this header for its options */

struct ctp_cat_ids {
	uint64_t *v;
	size_t n;
};

struct ctp_cat_filter_spec {
	struct ctp_cat_ids pids, coros, tids;
	char **types;
	size_t ntypes;
	bool has_since, has_until;
	struct ctp_cat_time since, until;
};

/* Adds the comma-separated numbers of `list` ("12", "3,4"); -1 when one is not a number. */
int ctp_cat_ids_add(struct ctp_cat_ids *ids, const char *list);

/* Adds the comma-separated line types of `list`; -1 when one is empty or not a word. */
int ctp_cat_filter_add_types(struct ctp_cat_filter_spec *spec, const char *list);

bool ctp_cat_filter_active(const struct ctp_cat_filter_spec *spec);

void ctp_cat_filter_spec_free(struct ctp_cat_filter_spec *spec);

/* Makes `out` a filter in front of `inner` (which it then owns and frees). `spec` must outlive
 * the output. Returns -1 with errno set on failure (inner is then not taken). */
int ctp_cat_filter_open(struct ctp_cat_output *out, const struct ctp_cat_filter_spec *spec,
			const struct ctp_cat_output *inner);

#endif
