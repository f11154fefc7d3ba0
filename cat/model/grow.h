/* Growing an array by doubling, the one way ctp-cat's tables grow. */
#ifndef CTP_CAT_MODEL_GROW_H
#define CTP_CAT_MODEL_GROW_H

#include <stddef.h>

/* Makes `*items` (of `*cap` items of `size` bytes) hold at least `need` items. 0, or -1 when
 * out of memory (the array is then unchanged). */
int ctp_grow(void **items, size_t *cap, size_t need, size_t size);

#define CTP_GROW(arr, cap, need) ctp_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif
