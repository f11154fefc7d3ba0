/* Messages on the Unix socket (SOCK_SEQPACKET) between a traced process, the launcher and the
 * collector. One message per packet; all integers in host order (both ends are on one machine).
 * See ctp/CTP.md "Connection". */
#ifndef CTP_WIRE_H
#define CTP_WIRE_H

#include <stdint.h>

#define CTP_WIRE_MAGIC 0x31505443u /* "CTP1" */
#define CTP_WIRE_MAX 65536u	   /* largest message; a hello's strings are cut to fit */

enum ctp_msg_type {
	/* traced process -> collector, first message, with the segment memfd as SCM_RIGHTS */
	CTP_MSG_HELLO = 1,
	/* traced process -> collector: about to execve; the segment will see no more writes */
	CTP_MSG_EXEC = 2,
	/* launcher -> collector, first message: this connection is the launcher's */
	CTP_MSG_LAUNCHER = 3,
	/* launcher -> collector: the app it started ended with this wait status */
	CTP_MSG_APP_EXIT = 4,
	/* traced process -> collector: it forked; the child says hello with it as ppid */
	CTP_MSG_FORKED = 5,
	/* traced process -> collector: it started process `pid` (ctp_msg_spawned) by posix_spawn
	 * or vfork, whose new image may say hello */
	CTP_MSG_SPAWNED = 6,
	/* traced process -> collector, with a socket as SCM_RIGHTS: a new connection, on which a
	 * hello follows: a fork child's (sent on the connection it inherited from its parent), or
	 * that of the image an exec or posix_spawn is about to start, when that image could not
	 * reach the listening socket's path, which only the collector's user may (a server that
	 * changed its user since it started) */
	CTP_MSG_CONNECT = 7,
};

struct ctp_msg_header {
	uint32_t magic;
	uint32_t type; /* enum ctp_msg_type */
};

/* A lone byte (no header) from a traced process means "wake up": see CTP.md "Wakeup". */
#define CTP_WAKE_BYTE 'w'

/* ctp_msg_hello.flags */
#define CTP_HELLO_FORKED 1u /* a fork child: ppid is the process that forked it */

struct ctp_msg_hello {
	struct ctp_msg_header h;
	uint32_t pid;
	uint32_t ppid;
	uint32_t flags; /* CTP_HELLO_* */
	uint32_t argc;	/* strings that follow: exe, then argc argv entries, each NUL-terminated */
	uint32_t strings_len;
	char strings[];
};

struct ctp_msg_spawned {
	struct ctp_msg_header h;
	uint32_t pid;
};

struct ctp_msg_app_exit {
	struct ctp_msg_header h;
	uint32_t pid;
	int32_t wait_status; /* as from waitpid */
};

#endif
