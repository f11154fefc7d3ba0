/* The processes a collector without a launcher waits for once every traced one has gone: a pid
 * stops being awaited when it says hello, when it has gone, and when it is a zombie that will
 * never run again; a fork child, whose pid its parent could not tell, is awaited under its
 * parent's pid until a hello names that parent, once per fork. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/awaited.h"

/* A child that has exited; reaped or left a zombie. */
static uint32_t ended_child(bool reap)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	if (reap) {
		assert_int_equal(waitpid(pid, NULL, 0), pid);
	} else {
		siginfo_t info;
		/* Wait for its end without reaping it. */
		assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
	}
	return (uint32_t)pid;
}

static void test_pid_until_hello(void **state)
{
	(void)state;
	struct ctp_awaited a = {0};
	ctp_awaited_add_pid(&a, (uint32_t)getpid()); /* alive: this test */
	ctp_awaited_add_pid(&a, (uint32_t)getpid()); /* once only */
	assert_true(ctp_awaited_any(&a));
	assert_false(ctp_awaited_hello(&a, (uint32_t)getpid(), 1, false));
	assert_false(ctp_awaited_any(&a));
	ctp_awaited_free(&a);
}

static void test_gone_and_zombie_pids_are_not_awaited(void **state)
{
	(void)state;
	struct ctp_awaited a = {0};
	uint32_t reaped = ended_child(true);
	uint32_t zombie = ended_child(false);
	ctp_awaited_add_pid(&a, reaped);
	ctp_awaited_add_pid(&a, zombie);
	assert_false(ctp_awaited_any(&a));
	assert_int_equal(a.npids, 0);
	/* A live one among them keeps the wait. */
	ctp_awaited_add_pid(&a, zombie);
	ctp_awaited_add_pid(&a, (uint32_t)getpid());
	assert_true(ctp_awaited_any(&a));
	assert_int_equal(a.npids, 1);
	waitpid((pid_t)zombie, NULL, 0);
	ctp_awaited_free(&a);
}

static void test_forks_counted_by_parent(void **state)
{
	(void)state;
	struct ctp_awaited a = {0};
	ctp_awaited_add_forks(&a, 100, 1);
	ctp_awaited_add_forks(&a, 100, 1); /* a second fork of the same parent */
	ctp_awaited_add_forks(&a, 200, 1);
	assert_true(ctp_awaited_any(&a));
	assert_false(ctp_awaited_hello(&a, 5000, 300, true));  /* another parent's child */
	assert_false(ctp_awaited_hello(&a, 5001, 100, false)); /* spawned, not forked */
	assert_true(ctp_awaited_hello(&a, 5002, 100, true));
	assert_true(ctp_awaited_hello(&a, 5003, 200, true));
	assert_true(ctp_awaited_any(&a)); /* one child of 100 yet */
	assert_true(ctp_awaited_hello(&a, 5004, 100, true));
	assert_false(ctp_awaited_any(&a));
	assert_false(
		ctp_awaited_hello(&a, 5005, 100, true)); /* more children than forks announced */
	ctp_awaited_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pid_until_hello),
		cmocka_unit_test(test_gone_and_zombie_pids_are_not_awaited),
		cmocka_unit_test(test_forks_counted_by_parent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
