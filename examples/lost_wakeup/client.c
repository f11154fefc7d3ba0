/* The lost-wakeup example's client: opens CONNS connections to the server and pings each, waits
 * until the server has parked every connection's coroutine, then closes ABRUPT of them abruptly
 * (a reset for every other one, a plain close without "bye" for the rest) and the others
 * politely, waits until the server has let go of them all, and tells it to quit.
 *
 *   client [--hold] PORT [CONNS [ABRUPT]]   (defaults 60 and 47)
 * With --hold it prints "client: holding" once the server has stranded its coroutines and waits
 * for the end of its standard input before it tells the server to quit: the server hangs
 * meanwhile, for a live look (ctp-pstack) at a hung server.
 * Exits 0 when the server did all that, 1 otherwise (each wait is bounded). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define WAIT_SECONDS 20

static int port;

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((unsigned short)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {.tv_sec = WAIT_SECONDS};
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("client: connect");
		exit(1);
	}
	return fd;
}

/* Sends one request line and reads the one-line reply into `reply`. */
static void ask(int fd, const char *request, char *reply, size_t size)
{
	char line[64];
	snprintf(line, sizeof(line), "%s\n", request);
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		perror("client: write");
		exit(1);
	}
	size_t len = 0;
	while (len + 1 < size) {
		ssize_t n = read(fd, reply + len, 1);
		if (n != 1) {
			fprintf(stderr, "client: no reply to %s\n", request);
			exit(1);
		}
		if (reply[len] == '\n')
			break;
		len++;
	}
	reply[len] = '\0';
}

static void expect(int fd, const char *request, const char *reply)
{
	char got[128];
	ask(fd, request, got, sizeof(got));
	if (strcmp(got, reply) != 0) {
		fprintf(stderr, "client: %s: expected %s, got %s\n", request, reply, got);
		exit(1);
	}
}

/* Asks "stats" until `field` reaches `want` (bounded). */
static void wait_for(int control, const char *field, int want)
{
	struct timespec pause = {.tv_nsec = 10 * 1000 * 1000};
	int value = -1;
	for (int i = 0; i < WAIT_SECONDS * 100; i++) {
		char reply[128];
		int parked, conns;
		ask(control, "stats", reply, sizeof(reply));
		if (sscanf(reply, "parked %d connections %d", &parked, &conns) != 2) {
			fprintf(stderr, "client: bad stats reply: %s\n", reply);
			exit(1);
		}
		value = strcmp(field, "parked") == 0 ? parked : conns;
		if (value == want)
			return;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "client: %s stayed at %d, expected %d\n", field, value, want);
	exit(1);
}

int main(int argc, char **argv)
{
	bool hold = argc > 1 && strcmp(argv[1], "--hold") == 0;
	if (hold) {
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: client [--hold] PORT [CONNS [ABRUPT]]\n");
		return 2;
	}
	port = atoi(argv[1]);
	int nconns = argc > 2 ? atoi(argv[2]) : 60;
	int abrupt = argc > 3 ? atoi(argv[3]) : 47;
	if (nconns < 1 || abrupt < 0 || abrupt > nconns) {
		fprintf(stderr, "client: need 0 <= ABRUPT <= CONNS\n");
		return 2;
	}
	int control = dial();
	int *fds = calloc((size_t)nconns, sizeof(*fds));
	if (!fds)
		return 1;
	for (int i = 0; i < nconns; i++) {
		fds[i] = dial();
		expect(fds[i], "ping", "pong");
	}
	/* Every connection's coroutine is parked in read now, or will be: wait until it is. */
	wait_for(control, "parked", nconns);
	for (int i = 0; i < nconns; i++) {
		if (i < nconns - abrupt) {
			expect(fds[i], "bye", "bye");
		} else if (i % 2) {
			struct linger reset = {.l_onoff = 1, .l_linger = 0};
			setsockopt(fds[i], SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
		}
		close(fds[i]);
	}
	/* Only the control connection is left once the server has dealt with every hang-up. */
	wait_for(control, "connections", 1);
	if (hold) {
		printf("client: holding\n");
		fflush(stdout);
		char buf[256];
		while (fread(buf, 1, sizeof(buf), stdin) > 0)
			continue;
	}
	expect(control, "quit", "bye");
	close(control);
	printf("client: %d connections, %d closed abruptly\n", nconns, abrupt);
	free(fds);
	return 0;
}
