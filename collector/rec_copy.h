/* Copying one ring record: the harvester copies each out of its ring, the reorder stage into
 * its queue. */
#ifndef CTP_COLLECTOR_REC_COPY_H
#define CTP_COLLECTOR_REC_COPY_H

#include <stddef.h>
#include <string.h>

/* Copies a record of `size` bytes (at least 8; a switch's is 48): up to 64 as two copies of a
 * size fixed at compile time, which may overlap but read and write only the record's bytes.
 * memcpy with a size known only at run time is a call into libc and a dozen branches there, a
 * twentieth of the collector's instructions when each record took two. */
static inline void ctp_rec_copy(void *dst, const void *src, size_t size)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (size >= 32 && size <= 64) {
		memcpy(d, s, 32);
		memcpy(d + size - 32, s + size - 32, 32);
	} else if (size >= 16 && size < 32) {
		memcpy(d, s, 16);
		memcpy(d + size - 16, s + size - 16, 16);
	} else if (size >= 8 && size < 16) {
		memcpy(d, s, 8);
		memcpy(d + size - 8, s + size - 8, 8);
	} else {
		memcpy(d, s, size);
	}
}

#endif
