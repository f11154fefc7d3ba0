/* Why the dynamic loader will not take the preload into the program ctp-run is about to start.
 * Such a program runs, untraced, and the trace comes out empty: without a word, a user reads
 * that as the tracer's failure. The reasons are ones the file itself shows (ctp/exec_image.h):
 * no dynamic loader (statically linked), a loader of another kind (another ELF class, machine
 * or C library), or secure execution, for which the loader ignores LD_PRELOAD's paths. Programs
 * it starts are traced all the same as long as their environment keeps LD_PRELOAD; except
 * those of a program whose loader cannot take the preload, which must not find it there. */
#define _GNU_SOURCE
#include "collector/run.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "ctp/exec_image.h"

/* What keeps the preload out, as "<file> is ...", or NULL when nothing does. */
static const char *reason(enum ctp_exec_image image)
{
	switch (image) {
	case CTP_EXEC_IMAGE_LOADS_PRELOAD:
	case CTP_EXEC_IMAGE_NO_FILE: /* execve will say what is wrong, not us */
		return NULL;
	case CTP_EXEC_IMAGE_STATIC:
		return "statically linked: no dynamic loader takes the preload in";
	case CTP_EXEC_IMAGE_OTHER_LOADER:
		return "a program of another ELF class, machine or C library, whose dynamic loader "
		       "cannot load the preload";
	case CTP_EXEC_IMAGE_SETUID:
		return "set-user-ID, and the dynamic loader ignores LD_PRELOAD for it";
	case CTP_EXEC_IMAGE_SETGID:
		return "set-group-ID, and the dynamic loader ignores LD_PRELOAD for it";
	case CTP_EXEC_IMAGE_CAPABILITIES:
		return "given file capabilities, and the dynamic loader ignores LD_PRELOAD for it";
	case CTP_EXEC_IMAGE_IDS_DIFFER:
		return "started by a process whose real and effective ids differ, and the dynamic "
		       "loader ignores LD_PRELOAD for it";
	}
	return NULL;
}

bool ctp_run_warn_untraceable(const char *program)
{
	char elf[CTP_EXEC_IMAGE_PATH_MAX];
	enum ctp_exec_image image = ctp_exec_image(AT_FDCWD, program, 0, elf);
	const char *why = reason(image);
	if (why == NULL)
		return true;
	if (strcmp(elf, program) == 0)
		fprintf(stderr, "ctp-run: warning: %s is %s; it runs untraced", program, why);
	else
		fprintf(stderr, "ctp-run: warning: %s runs in %s, which is %s; it runs untraced",
			program, elf, why);
	if (image == CTP_EXEC_IMAGE_OTHER_LOADER) {
		/* glibc's loader of another class prints an error into the program's stderr;
		 * musl's fails, and the program never runs. */
		fputs(", and so do the programs it starts (its LD_PRELOAD is left as it was)\n",
		      stderr);
		return false;
	}
	fputs(" (programs it starts are traced if LD_PRELOAD reaches them)\n", stderr);
	return true;
}
