#include "cat/model/grow.h"

#include <stdint.h>
#include <stdlib.h>

int ctp_grow(void **items, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2 / size)
			return -1;
		n *= 2;
	}
	void *p = realloc(*items, n * size);
	if (!p)
		return -1;
	*items = p;
	*cap = n;
	return 0;
}
