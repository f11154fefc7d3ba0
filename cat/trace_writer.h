/* Whether a trace file is still being written: some process (its collector) holds it open for
 * writing. --follow stops once none does; a plain read says so when the trace stops short. */
#ifndef CTP_CAT_TRACE_WRITER_H
#define CTP_CAT_TRACE_WRITER_H

enum ctp_cat_writer {
	CTP_CAT_WRITER_UNKNOWN, /* not ours to ask (another user's file), or no leases there */
	CTP_CAT_WRITER_GONE,
	CTP_CAT_WRITER_PRESENT,
};

/* For a file open read-only as `fd`. */
enum ctp_cat_writer ctp_cat_trace_writer(int fd);

/* For the file at `path`. */
enum ctp_cat_writer ctp_cat_trace_writer_at(const char *path);

#endif
