/* A fork while another thread runs a coroutine: thread T makes coroutine A, which suspends back
 * to T at once, then coroutine B, which waits in read on a pipe. Main forks then. Only main's
 * thread goes on in the child: there B and T's own context never run again, while A, suspended,
 * is the child's to resume, and the child's main resumes it. The parent then lets B read, joins
 * T and resumes A too. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

enum { STACK = 64 * 1024 };

static ucontext_t t_ctx, a_ctx, b_ctx, resumer_ctx;
static int pipe_fds[2];
static sem_t b_waits;
static const char *who = "the parent";

static void coroutine_a(void)
{
	swapcontext(&a_ctx, &t_ctx); /* suspended on T */
	printf("A resumed by %s's main\n", who);
	fflush(stdout);
	swapcontext(&a_ctx, &resumer_ctx);
}

static void coroutine_b(void)
{
	char c;
	sem_post(&b_waits);
	if (read(pipe_fds[0], &c, 1) == 1)
		printf("B read '%c'\n", c);
	swapcontext(&b_ctx, &t_ctx);
}

static void make(ucontext_t *ctx, void (*fn)(void))
{
	getcontext(ctx);
	ctx->uc_stack.ss_sp = malloc(STACK);
	ctx->uc_stack.ss_size = STACK;
	ctx->uc_link = NULL;
	makecontext(ctx, fn, 0);
}

static void *thread_t(void *arg)
{
	(void)arg;
	make(&a_ctx, coroutine_a);
	swapcontext(&t_ctx, &a_ctx);
	make(&b_ctx, coroutine_b);
	swapcontext(&t_ctx, &b_ctx);
	return NULL;
}

int main(void)
{
	if (pipe(pipe_fds) != 0 || sem_init(&b_waits, 0, 0) != 0) {
		perror("fork_leaves_threads");
		return 2;
	}
	pthread_t t;
	pthread_create(&t, NULL, thread_t, NULL);
	sem_wait(&b_waits);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		who = "the child";
		swapcontext(&resumer_ctx, &a_ctx);
		printf("the child ends\n");
		return 0;
	}
	int status;
	waitpid(child, &status, 0);
	printf("the child exited with %d\n", WEXITSTATUS(status));
	if (write(pipe_fds[1], "x", 1) != 1)
		return 2;
	pthread_join(t, NULL);
	swapcontext(&resumer_ctx, &a_ctx);
	printf("the parent ends\n");
	return 0;
}
