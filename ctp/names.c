#include "ctp/names.h"

#include <string.h>

#include "ctp/segment.h"

#define TABLE(name, ...)                                                                           \
	static const char *const name##_list[] = {__VA_ARGS__};                                    \
	const struct ctp_name_table name = {name##_list,                                           \
					    (uint32_t)(sizeof(name##_list) / sizeof(char *))}

TABLE(ctp_kind_names, [CTP_KIND_THREAD] = "thread", [CTP_KIND_UCONTEXT] = "ucontext",
      [CTP_KIND_FCONTEXT] = "fcontext", [CTP_KIND_SIMGRID_RAW] = "simgrid_raw");
/* CTP_STATE_LEFT has no name: the collector turns it into "suspended" or "exited". */
TABLE(ctp_state_names, [CTP_STATE_CREATED] = "created", [CTP_STATE_RUNNING] = "running",
      [CTP_STATE_SUSPENDED] = "suspended", [CTP_STATE_EXITED] = "exited");
TABLE(ctp_switch_how_names, [CTP_HOW_SWAPCONTEXT] = "swapcontext",
      [CTP_HOW_SETCONTEXT] = "setcontext", [CTP_HOW_RETURN] = "return",
      [CTP_HOW_JUMP_FCONTEXT] = "jump_fcontext", [CTP_HOW_ONTOP_FCONTEXT] = "ontop_fcontext",
      [CTP_HOW_SIGLONGJMP] = "siglongjmp", [CTP_HOW_RAW_SWAPCONTEXT] = "raw_swapcontext");
TABLE(ctp_op_names, [CTP_OP_READ] = "read", [CTP_OP_WRITE] = "write", [CTP_OP_ACCEPT] = "accept",
      [CTP_OP_CONNECT] = "connect", [CTP_OP_POLL] = "poll");
TABLE(ctp_fd_event_names, [CTP_FD_WOULD_BLOCK] = "would_block", [CTP_FD_CLOSE] = "close",
      [CTP_FD_READY] = "ready", [CTP_FD_REGISTER] = "register", [CTP_FD_UNREGISTER] = "unregister");
TABLE(ctp_end_how_names, [CTP_END_UNKNOWN] = "unknown", [CTP_END_RETURNED] = "returned",
      [CTP_END_LEFT] = "left", [CTP_END_ENDED] = "ended", [CTP_END_ABANDONED] = "abandoned",
      [CTP_END_THREAD_EXIT] = "thread_exit");

const char *ctp_name_of(const struct ctp_name_table *t, uint32_t value)
{
	return value < t->count ? t->names[value] : NULL;
}

uint32_t ctp_name_find(const struct ctp_name_table *t, const char *name, size_t len,
		       uint32_t missing)
{
	for (uint32_t i = 0; i < t->count; i++)
		if (t->names[i] && strlen(t->names[i]) == len &&
		    memcmp(t->names[i], name, len) == 0)
			return i;
	return missing;
}
