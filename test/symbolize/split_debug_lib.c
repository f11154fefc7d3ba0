/* A library whose debug information is moved into a separate file at build time
 * (split_debug.sh): the symbolizer must find its file:line there, by its build-id. Built twice,
 * with different factors, so that the two builds have different build-ids. */

void *ctp_dbg_return_address;
int ctp_dbg_call_line;

__attribute__((noinline)) static void capture_return_address(void)
{
	ctp_dbg_return_address = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

/* The line number and the call must stay on one line. */
// clang-format off
__attribute__((noinline)) int ctp_dbg_function(int x)
{
	ctp_dbg_call_line = __LINE__; capture_return_address();
	return x * CTP_DBG_FACTOR;
}
// clang-format on
