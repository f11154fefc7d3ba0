/* Shared by the transparency programs: one coroutine made with makecontext and resumed once,
 * so that a traced run has the tracer fully engaged (a coroutine known, a switch recorded)
 * before the pattern under test; the "ready" handshake; the program's own VmSize. */
#ifndef TP_CORO_H
#define TP_CORO_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static ucontext_t tp_main_ctx, tp_coro_ctx;
static char tp_coro_stack[64 * 1024];

static void tp_coro_body(void)
{
	swapcontext(&tp_coro_ctx, &tp_main_ctx);
}

/* Makes the coroutine and switches to it and back; it stays suspended. */
static inline void tp_touch_coroutine(void)
{
	if (getcontext(&tp_coro_ctx) != 0) {
		perror("getcontext");
		exit(2);
	}
	tp_coro_ctx.uc_stack.ss_sp = tp_coro_stack;
	tp_coro_ctx.uc_stack.ss_size = sizeof(tp_coro_stack);
	tp_coro_ctx.uc_link = &tp_main_ctx;
	makecontext(&tp_coro_ctx, tp_coro_body, 0);
	if (swapcontext(&tp_main_ctx, &tp_coro_ctx) != 0) {
		perror("swapcontext");
		exit(2);
	}
}

/* "ready" on stdout, flushed: the harness acts on it (a signal, ^C, a measurement). */
static inline void tp_ready(void)
{
	printf("ready\n");
	fflush(stdout);
}

/* The program's VmSize in KiB (/proc/self/status), -1 when unknown. */
static inline long tp_vm_size_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmSize:", 7) == 0)
			kb = strtol(line + 7, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}
#endif
