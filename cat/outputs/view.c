#include "cat/outputs/view.h"

#include <stdlib.h>
#include <unistd.h>

/* Fewer write calls than stdio's default for a pipe or file; a terminal stays line-buffered so
 * that a person sees lines as they come. */
#define OUT_BUFFER_SIZE (64u << 10)

void *ctp_cat_view_new(size_t size, FILE *f, bool with_names)
{
	struct ctp_cat_view *v = calloc(1, size);
	if (!v)
		return NULL;
	if (with_names && !(v->names = ctp_cat_names_new())) {
		free(v);
		return NULL;
	}
	v->f = f;
	if (!isatty(fileno(f)))
		setvbuf(f, NULL, _IOFBF, OUT_BUFFER_SIZE);
	return v;
}

int ctp_cat_view_finish(void *state)
{
	struct ctp_cat_view *v = state;
	return fflush(v->f) == 0 ? 0 : -1;
}

void ctp_cat_view_free(void *state)
{
	struct ctp_cat_view *v = state;
	if (!v)
		return;
	ctp_cat_names_free(v->names);
	free(v);
}
