/* A program for another dynamic loader: built for i386 (glibc's loader of the other class, which
 * prints an error for a 64-bit library in LD_PRELOAD and goes on) and with musl (whose loader
 * fails on the preload, so that the program never runs). Says how it was started and what
 * LD_PRELOAD it got, and exits 7. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	printf("foreign_hello %s: LD_PRELOAD %s\n", argc > 1 ? argv[1] : "-",
	       preload ? preload : "unset");
	return 7;
}
