/* What an address-space limit leaves the collector (address_space.c). */
#ifndef CTP_COLLECTOR_ADDRESS_SPACE_H
#define CTP_COLLECTOR_ADDRESS_SPACE_H

#include <stdint.h>

/* The spool's bound: `wanted`, or less where RLIMIT_AS leaves less room (said on stderr).
 * Raises the soft limit to the hard one first. */
uint64_t ctp_spool_bytes_within_address_space(uint64_t wanted);

/* Bytes of address space the process has mapped now (/proc/self/statm's first field), 0 when
 * that cannot be read. */
uint64_t ctp_mapped_bytes_now(void);

#endif
