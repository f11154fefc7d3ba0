/* The plain form starts its collector with the program's environment less LD_PRELOAD. That
 * copy is trimmed in the collector's own process: the program's environment stays whole. It
 * prints its environment (less the variables the tracer sets, which differ between the runs by
 * design) before and after a coroutine ran, and writes what LD_PRELOAD says to a file in its
 * working directory for the case's own check. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp_coro.h"

static bool set_by_tracer(const char *entry)
{
	static const char *const names[] = {"LD_PRELOAD=", "CTP_SOCKET=", "CTP_OUTPUT="};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strncmp(entry, names[i], strlen(names[i])) == 0)
			return true;
	}
	return false;
}

static void print_environment(const char *when)
{
	size_t n = 0;
	for (char **e = environ; *e != NULL; e++) {
		if (!set_by_tracer(*e)) {
			printf("%s: %s\n", when, *e);
			n++;
		}
	}
	printf("%s: %zu variables\n", when, n);
}

int main(void)
{
	print_environment("at start");
	tp_touch_coroutine();
	print_environment("after a coroutine");

	FILE *f = fopen("ld_preload.txt", "w");
	if (f == NULL)
		return 1;
	const char *preload = getenv("LD_PRELOAD");
	fprintf(f, "%s\n", preload != NULL ? preload : "(unset)");
	return fclose(f) == 0 ? 0 : 1;
}
