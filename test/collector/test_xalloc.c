/* The tables' allocator (ctp/xalloc.h) under an address-space limit (ulimit -v): with a reserve
 * kept aside, an allocation that fails is tried again once the reserve is given back, and goes
 * through where the collector used to abort (a table that could not grow by 256 bytes ended it,
 * and its trace); a second failure, with nothing left in reserve, still ends the process. Each
 * case runs in a child of its own: the reserve and the limit are the process's. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/address_space.h"
#include "ctp/xalloc.h"
#include "test/collector/may_return_null.h"

enum { RESERVE = 8 << 20, ROOM = 1 << 20, FITS_WITH_RESERVE = 4 << 20, TOO_BIG = 64 << 20 };

struct outcome {
	int allocations; /* how many the child made before it ended */
	int signal;	 /* what ended it, 0 for none */
};

/* In a child: reserve (or not), leave ROOM bytes of address space, allocate FITS_WITH_RESERVE
 * bytes, then TOO_BIG. */
static struct outcome run_child(bool with_reserve)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[0]);
		if (with_reserve)
			ctp_xalloc_reserve(RESERVE);
		struct rlimit was;
		getrlimit(RLIMIT_AS, &was);
		struct rlimit tight = {.rlim_cur = ctp_mapped_bytes_now() + ROOM,
				       .rlim_max = was.rlim_max};
		if (setrlimit(RLIMIT_AS, &tight) != 0)
			_exit(2);
		char done = 1;
		if (ctp_xcalloc(1, FITS_WITH_RESERVE) && write(fds[1], &done, 1) != 1)
			_exit(2);
		if (ctp_xcalloc(1, TOO_BIG) && write(fds[1], &done, 1) != 1)
			_exit(2);
		_exit(0);
	}
	close(fds[1]);
	struct outcome o = {0};
	char byte;
	while (read(fds[0], &byte, 1) == 1)
		o.allocations++;
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	if (WIFSIGNALED(status))
		o.signal = WTERMSIG(status);
	else
		assert_int_equal(WEXITSTATUS(status), 0);
	return o;
}

static void a_failed_allocation_goes_through_with_the_reserve_given_back(void **state)
{
	(void)state;
	struct outcome o = run_child(true);
	assert_int_equal(o.allocations, 1);
	assert_int_equal(o.signal, SIGABRT); /* the second failure: nothing left in reserve */
}

/* The same without a reserve: the first allocation is past the room the limit leaves. */
static void without_a_reserve_the_same_allocation_ends_the_process(void **state)
{
	(void)state;
	struct outcome o = run_child(false);
	assert_int_equal(o.allocations, 0);
	assert_int_equal(o.signal, SIGABRT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_failed_allocation_goes_through_with_the_reserve_given_back),
		cmocka_unit_test(without_a_reserve_the_same_allocation_ends_the_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
