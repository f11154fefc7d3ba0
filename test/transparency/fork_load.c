/* Fork under load: two threads make and switch ucontext coroutines in a loop while the main
 * thread forks 50 times; each child makes one coroutine, switches to it once and _exit(0)s.
 * A child that inherits a lock held mid-operation by another thread wedges: alarm(20) turns
 * that into exit 99. The workers switch only while a fork is under way (and a few rounds after),
 * which is what matters, so that the trace stays small. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tp_coro.h"

enum { CHILDREN = 50, STACK = 32 * 1024 };

static volatile int stop, forking;

struct worker {
	ucontext_t home, co;
	char stack[STACK];
	long switches;
};

static __thread struct worker *self;

static void worker_body(void)
{
	for (;;) {
		self->switches++;
		swapcontext(&self->co, &self->home);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	self = w;
	while (!stop) {
		if (!forking) {
			sched_yield();
			continue;
		}
		/* A new coroutine every round, switched to a few times. */
		getcontext(&w->co);
		w->co.uc_stack.ss_sp = w->stack;
		w->co.uc_stack.ss_size = sizeof(w->stack);
		w->co.uc_link = NULL;
		makecontext(&w->co, worker_body, 0);
		for (int i = 0; i < 4; i++)
			swapcontext(&w->home, &w->co);
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "a child wedged\n";
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(98);
	_exit(99);
}

int main(void)
{
	static struct worker workers[2];
	pthread_t threads[2];
	signal(SIGALRM, on_alarm);
	alarm(20);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&threads[i], NULL, worker_main, &workers[i]) != 0)
			return 2;
	int exited0 = 0, other = 0;
	for (int i = 0; i < CHILDREN; i++) {
		forking = 1;
		pid_t pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			tp_touch_coroutine();
			_exit(0);
		}
		forking = 0;
		int status;
		if (waitpid(pid, &status, 0) != pid)
			return 2;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			exited0++;
		else
			other++;
	}
	stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	alarm(0);
	/* Whether the workers got to switch during the forks is the scheduler's business, not
	 * the program's output: it differs from run to run, traced or not. */
	printf("%d children: %d exit 0, %d otherwise\n", CHILDREN, exited0, other);
	return 0;
}
