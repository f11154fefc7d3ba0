/* What the longjmp hooks must keep of each jump, now that they push a frame below their caller
 * before jumping: the value (0 becomes 1), the signal mask sigsetjmp(env, 1) saved, the
 * callee-saved registers (locals kept in registers across the jump: built -O2 they live there),
 * a jump out of a signal handler that runs on a small sigaltstack, and each of longjmp,
 * _longjmp and siglongjmp. Built twice: plain, and with -D_FORTIFY_SOURCE=2, where longjmp and
 * siglongjmp are __longjmp_chk. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf jb;
static sigjmp_buf sjb;

static __attribute__((noinline)) void jump_longjmp(int val)
{
	longjmp(jb, val);
}

static __attribute__((noinline)) void jump__longjmp(int val)
{
	_longjmp(jb, val);
}

static __attribute__((noinline)) void jump_siglongjmp(int val)
{
	siglongjmp(sjb, val);
}

/* Values kept in callee-saved registers across the call that jumps. */
static __attribute__((noinline)) uint64_t registers_kept(void (*jump)(int), int use_sig)
{
	register uint64_t a = (uint64_t)rand() | 1, b = a * 3, c = a * 5, d = a * 7, e = a * 11;
	volatile int rounds = 0;
	int got = use_sig ? sigsetjmp(sjb, 0) : setjmp(jb);
	if (got == 0) {
		rounds++;
		jump(0);
	}
	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
	return (b == a * 3 && c == a * 5 && d == a * 7 && e == a * 11) ? (uint64_t)got : 1000;
}

static void on_usr1(int sig)
{
	(void)sig;
	siglongjmp(sjb, 42);
}

int main(void)
{
	srand(7);
	printf("longjmp(0) returns %d, registers %s\n", (int)registers_kept(jump_longjmp, 0),
	       registers_kept(jump_longjmp, 0) < 1000 ? "kept" : "LOST");
	printf("_longjmp(0) returns %d\n", (int)registers_kept(jump__longjmp, 0));
	printf("siglongjmp(0) returns %d\n", (int)registers_kept(jump_siglongjmp, 1));

	/* The mask sigsetjmp(env, 1) saved comes back; one saved with 0 does not. */
	sigset_t usr2, now;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	if (sigsetjmp(sjb, 1) == 0) {
		sigprocmask(SIG_BLOCK, &usr2, NULL);
		jump_siglongjmp(5);
	}
	sigprocmask(SIG_SETMASK, NULL, &now);
	printf("mask restored: SIGUSR2 %s\n",
	       sigismember(&now, SIGUSR2) ? "blocked" : "not blocked");

	/* Out of a handler on a small alternate stack. */
	stack_t ss = {.ss_sp = malloc(SIGSTKSZ), .ss_size = SIGSTKSZ};
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		return 2;
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_ONSTACK};
	sigaction(SIGUSR1, &sa, NULL);
	int got = sigsetjmp(sjb, 1);
	if (got == 0)
		raise(SIGUSR1);
	printf("from the handler on the alternate stack: %d\n", got);
	return 0;
}
