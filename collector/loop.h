/* The collector's event loop: the listening socket, every connection (traced processes and the
 * launcher), harvesting, sleeping and finishing. */
#ifndef CTP_COLLECTOR_LOOP_H
#define CTP_COLLECTOR_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct ctp_collector_options {
	const char *socket_path;
	const char *output;
	int ready_fd; /* -1 = none */
	bool summary;
	int level;
	int grace_ms;
	int hold_ms; /* longest hold of conversion while the CPUs are busy (convert_pacing.h) */
	uint64_t spool_bytes;	/* bound of the memory holding harvested, unconverted records */
	bool remove_socket_dir; /* the socket's directory was made for this run: remove it too */
};

/* Runs the collector to its end. Returns the process exit status (0, or 1 on a fatal error
 * or when part of the trace could not be written). */
int ctp_collector_run(const struct ctp_collector_options *o);

#endif
