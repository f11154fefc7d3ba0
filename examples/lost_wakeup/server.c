/* The lost-wakeup example's server: a line protocol over TCP on an M:N ucontext scheduler
 * (sched.c), one coroutine per connection.
 *
 *   ping  -> pong          stats -> "parked P connections C"
 *   bye   -> bye, closes   quit  -> bye, and the server stops
 *
 * When a client hangs up or resets a connection while its coroutine is parked reading, the
 * scheduler closes the fd without resuming the coroutine (sched.c, poller_drop_connection):
 * every such coroutine is stranded. It prints "stranded fd N" for each. With --fixed, the
 * coroutine is resumed with ECONNRESET instead and ends normally.
 *
 *   server [--fixed] [--workers N] [--port-file PATH]
 * It listens on 127.0.0.1 on a free port, prints it, writes it to PATH when asked, and exits
 * when a client sends quit. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sched.h"

struct conn {
	int fd;
	size_t len;
	char buf[256];
};

/* One line of the request, without its newline: 1, or 0 at EOF, -1 on an error. */
static int conn_read_line(struct coro *c, struct conn *k, char *line, size_t size)
{
	for (;;) {
		char *nl = memchr(k->buf, '\n', k->len);
		if (nl) {
			size_t n = (size_t)(nl - k->buf);
			if (n >= size)
				n = size - 1;
			memcpy(line, k->buf, n);
			line[n] = '\0';
			k->len -= (size_t)(nl + 1 - k->buf);
			memmove(k->buf, nl + 1, k->len);
			return 1;
		}
		if (k->len == sizeof(k->buf))
			return -1; /* a line too long for this protocol */
		ssize_t n = read(k->fd, k->buf + k->len, sizeof(k->buf) - k->len);
		if (n > 0)
			k->len += (size_t)n;
		else if (n == 0)
			return 0;
		else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (sched_wait_readable(c, k->fd) < 0)
				return -1;
		} else if (errno != EINTR) {
			return -1;
		}
	}
}

/* Replies are a few bytes on a fresh socket buffer: one write takes them. */
static void conn_reply(struct conn *k, const char *text)
{
	size_t len = strlen(text);
	if (write(k->fd, text, len) != (ssize_t)len)
		perror("server: write");
}

static void conn_main(struct coro *c, void *arg)
{
	struct conn *k = arg;
	char line[128], reply[128];
	while (conn_read_line(c, k, line, sizeof(line)) == 1) {
		if (strcmp(line, "ping") == 0) {
			conn_reply(k, "pong\n");
		} else if (strcmp(line, "stats") == 0) {
			snprintf(reply, sizeof(reply), "parked %d connections %d\n", sched_parked(),
				 sched_connections());
			conn_reply(k, reply);
		} else if (strcmp(line, "bye") == 0) {
			conn_reply(k, "bye\n");
			break;
		} else if (strcmp(line, "quit") == 0) {
			sched_stop();
			conn_reply(k, "bye\n");
			break;
		} else {
			conn_reply(k, "error\n");
		}
	}
	close(k->fd);
	sched_connection_closed();
	free(k);
}

static void on_accept(int fd)
{
	struct conn *k = calloc(1, sizeof(*k));
	if (!k)
		goto oom;
	k->fd = fd; /* before the spawn: a worker may run the coroutine at once */
	if (!sched_spawn(conn_main, k))
		goto oom;
	return;
oom:
	fprintf(stderr, "server: out of memory\n");
	exit(1);
}

static int listen_local(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* Written whole under another name, then renamed: a reader never sees half a port. */
static int write_port_file(const char *path, int port)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", port);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

int main(int argc, char **argv)
{
	enum hangup_policy policy = HANGUP_DROP;
	int workers = 3;
	const char *port_file = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fixed") == 0)
			policy = HANGUP_WAKE_ERROR;
		else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc)
			workers = atoi(argv[++i]);
		else if (strcmp(argv[i], "--port-file") == 0 && i + 1 < argc)
			port_file = argv[++i];
		else {
			fprintf(stderr,
				"usage: server [--fixed] [--workers N] [--port-file PATH]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	int port;
	int listen_fd = listen_local(&port);
	if (listen_fd < 0) {
		perror("server: listen");
		return 1;
	}
	printf("listening on 127.0.0.1:%d (%s)\n", port,
	       policy == HANGUP_DROP ? "buggy: hang-ups strand coroutines" : "fixed");
	if (port_file && write_port_file(port_file, port) != 0) {
		perror("server: port file");
		return 1;
	}
	if (sched_start(workers, policy) != 0) {
		perror("server: start");
		return 1;
	}
	sched_poll(listen_fd, on_accept);
	close(listen_fd);
	printf("server: stopped; %d coroutines stranded\n", sched_stranded());
	return 0;
}
