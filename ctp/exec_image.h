/* What the image an exec starts will make of the preload in LD_PRELOAD, told from the file the
 * exec names, as the kernel and the dynamic loader will read it: its mode and owner, a script's
 * "#!" line, the ELF header, the program headers and the name of the program interpreter.
 * Shared by ctp-run, which says why a program it starts runs untraced, and the preload's exec
 * hooks, which hand a connection over only to an image that will load the preload, and keep the
 * preload out of an image whose loader would complain of it or fail on it. */
#ifndef CTP_EXEC_IMAGE_H
#define CTP_EXEC_IMAGE_H

enum ctp_exec_image {
	/* A dynamic program whose loader is the preload's own kind (glibc's, of the preload's ELF
	 * class and machine), run without secure execution; also a file that cannot tell
	 * (execute-only, or a format binfmt_misc hands to another program). */
	CTP_EXEC_IMAGE_LOADS_PRELOAD,
	/* No regular file there: the exec fails. */
	CTP_EXEC_IMAGE_NO_FILE,
	/* No dynamic loader (statically linked): LD_PRELOAD passes on to what it starts. */
	CTP_EXEC_IMAGE_STATIC,
	/* A dynamic loader of another kind: another ELF class or machine (glibc's says so on
	 * stderr, and goes on), or another C library (musl's fails: the program never runs). */
	CTP_EXEC_IMAGE_OTHER_LOADER,
	/* Secure execution, in which the loader ignores LD_PRELOAD's paths: a set-user-ID or
	 * set-group-ID bit that changes an id, file capabilities to gain for a user other than
	 * root, or a process whose real and effective ids differ already (every exec of it). */
	CTP_EXEC_IMAGE_SETUID,
	CTP_EXEC_IMAGE_SETGID,
	CTP_EXEC_IMAGE_CAPABILITIES,
	CTP_EXEC_IMAGE_IDS_DIFFER,
};

enum { CTP_EXEC_IMAGE_PATH_MAX = 4096 };

/* The image that exec of `path` under `dirfd` (AT_FDCWD, or an fd as execveat takes) with
 * execveat's `at_flags` starts, for this process's ids. `elf`, when not NULL, receives the file
 * the answer is about: `path` itself, or the interpreter its "#!" line leads to. System calls
 * only, on the caller's stack, errno kept: a vfork child may ask. */
enum ctp_exec_image ctp_exec_image(int dirfd, const char *path, int at_flags,
				   char elf[CTP_EXEC_IMAGE_PATH_MAX]);

#endif
