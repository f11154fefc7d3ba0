/* Names the trace left out, found after the run: a frame or an entry that the collector could
 * not name (a stripped binary without its debug file at hand) is looked up again in the objects
 * the trace's `module` lines name, by build-id: the file itself if it is still the build that
 * ran, its debug file under /usr/lib/debug/.build-id, or a debuginfod server (DEBUGINFOD_URLS),
 * with the symbolizer the collector uses (ctp/symbolize.h). Names found are owned here. */
#ifndef CTP_CAT_MODEL_RESYMBOLIZE_H
#define CTP_CAT_MODEL_RESYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "cat/model/event.h"

struct ctp_resym;

/* A namer for `d` (event.h): from now on it names what the trace left out. Returns NULL when
 * out of memory (d is then left as it was); free it with ctp_resym_free after d. */
struct ctp_resym *ctp_resym_attach(struct ctp_event_decoder *d);
void ctp_resym_free(struct ctp_resym *r);

#endif
