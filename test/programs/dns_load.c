/* A load generator for a DNS resolver, and the authoritative upstream it resolves from, in one
 * process: what scripts/bench needs to measure a real resolver (pdns-recursor) traced and
 * untraced at a fixed concurrency, without the upstream or the client being the bottleneck.
 *
 *   dns_load serve PORTFILE
 *       Answers on 127.0.0.1 (a free UDP port, written to PORTFILE once bound), until killed:
 *       an A query for a name under ctp.test with 10.0.0.1, any other type under ctp.test with an
 *       empty NOERROR, anything else with NXDOMAIN.
 *   dns_load load PORT QUERIES WINDOW
 *       Waits (up to 30 s) until the resolver on 127.0.0.1:PORT answers, then sends QUERIES A
 *       queries for names it never asked before (each one a cache miss), WINDOW in flight at a
 * time, and prints "answered=N seconds=S qps=Q". A query unanswered for a second is sent again.
 *
 * Exit status: 0, 1 when the resolver never answered or answers were wrong, 2 on usage errors. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define ZONE "ctp.test"
#define MAX_WINDOW 1024
#define PACKET_MAX 512

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int udp_socket(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("dns_load: socket");
		exit(1);
	}
	return fd;
}

/* Appends NAME in DNS label form at p; returns the bytes written. */
static size_t put_name(uint8_t *p, const char *name)
{
	size_t n = 0;
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t len = dot ? (size_t)(dot - name) : strlen(name);
		p[n++] = (uint8_t)len;
		memcpy(p + n, name, len);
		n += len;
		name += len + (dot ? 1 : 0);
	}
	p[n++] = 0;
	return n;
}

/* The query name of a packet as text ("a.b.c"), and where its question ends; 0 if malformed. */
static size_t question_end(const uint8_t *q, size_t len, char *name, size_t cap)
{
	size_t i = 12, out = 0;
	while (i < len && q[i]) {
		size_t l = q[i++];
		if (l > 63 || i + l > len || out + l + 2 > cap)
			return 0;
		if (out)
			name[out++] = '.';
		memcpy(name + out, q + i, l);
		out += l;
		i += l;
	}
	name[out] = '\0';
	return i + 5 <= len ? i + 5 : 0; /* the root label, type and class */
}

static int under_zone(const char *name)
{
	size_t n = strlen(name), z = strlen(ZONE);
	return n >= z && strcasecmp(name + n - z, ZONE) == 0 && (n == z || name[n - z - 1] == '.');
}

static int serve(const char *port_file)
{
	int fd = udp_socket(0);
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &alen);
	FILE *f = fopen(port_file, "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f) != 0) {
		perror("dns_load: port file");
		return 1;
	}
	for (;;) {
		uint8_t q[PACKET_MAX];
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from, &flen);
		char name[256];
		size_t end = len > 12 ? question_end(q, (size_t)len, name, sizeof(name)) : 0;
		if (!end)
			continue;
		uint16_t type = (uint16_t)(q[end - 4] << 8 | q[end - 3]);
		uint8_t r[PACKET_MAX];
		memcpy(r, q, end);
		r[2] = 0x84 | (q[2] & 0x01);	 /* QR, AA, the query's RD */
		r[3] = under_zone(name) ? 0 : 3; /* NOERROR or NXDOMAIN */
		memset(r + 4, 0, 8);
		r[5] = 1; /* one question */
		size_t n = end;
		if (type == 1 && under_zone(name)) {
			static const uint8_t answer[] = {0xc0, 12,   0, 1, 0,  1, 0, 0,
							 0x0e, 0x10, 0, 4, 10, 0, 0, 1};
			memcpy(r + n, answer, sizeof(answer));
			n += sizeof(answer);
			r[7] = 1; /* one answer */
		}
		sendto(fd, r, n, 0, (struct sockaddr *)&from, flen);
	}
}

/* A query in flight. Its DNS id is the query's number mod 2^16, so that a late answer to a
 * query sent again (the first answer already came) matches no slot. */
struct in_flight {
	uint16_t id;
	long query; /* -1: free */
	double sent;
};

static void assign(struct in_flight *s, long query, double t)
{
	s->query = query;
	s->id = (uint16_t)query;
	s->sent = t;
}

static void send_query(int fd, const struct sockaddr_in *to, uint16_t id, long query)
{
	uint8_t q[PACKET_MAX] = {(uint8_t)(id >> 8), (uint8_t)id, 0x01 /* RD */, 0, 0, 1};
	char name[64];
	/* The pid makes every run's names new to the resolver's cache. */
	snprintf(name, sizeof(name), "q%ld-%ld.%s", (long)getpid(), query, ZONE);
	size_t n = 12 + put_name(q + 12, name);
	q[n++] = 0, q[n++] = 1; /* A */
	q[n++] = 0, q[n++] = 1; /* IN */
	sendto(fd, q, n, 0, (const struct sockaddr *)to, sizeof(*to));
}

/* Whether r answers slot s with the upstream's address. */
static int good_answer(const uint8_t *r, ssize_t len, const struct in_flight *s)
{
	return len >= 28 && (r[0] << 8 | r[1]) == s->id && (r[3] & 0x0f) == 0 && r[7] >= 1 &&
	       memcmp(r + len - 4, "\x0a\x00\x00\x01", 4) == 0;
}

static int load(uint16_t port, long queries, int window)
{
	int fd = udp_socket(0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port)};
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct in_flight slots[MAX_WINDOW];
	uint8_t r[PACKET_MAX];

	/* Readiness: one probe a second until the resolver answers it (30 s at most). */
	struct in_flight probe = {.id = 0xffff, .query = 0};
	int ready = 0;
	for (int tries = 0; tries < 30 && !ready; tries++) {
		send_query(fd, &to, probe.id, -1 - tries);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		double until = now_s() + 1;
		while (!ready && poll(&p, 1, (int)((until - now_s()) * 1000) + 1) > 0)
			ready = good_answer(r, recv(fd, r, sizeof(r), 0), &probe);
	}
	if (!ready) {
		fprintf(stderr, "dns_load: the resolver on port %u never answered\n", port);
		return 1;
	}

	long next = 0, answered = 0, wrong = 0;
	double start = now_s();
	for (int i = 0; i < window; i++) {
		assign(&slots[i], next < queries ? next++ : -1, start);
		if (slots[i].query >= 0)
			send_query(fd, &to, slots[i].id, slots[i].query);
	}
	while (answered + wrong < queries) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) > 0) {
			ssize_t len = recv(fd, r, sizeof(r), 0);
			int i = 0;
			while (len >= 2 && i < window &&
			       (slots[i].query < 0 || slots[i].id != (r[0] << 8 | r[1])))
				i++;
			if (len < 2 || i == window)
				continue; /* a late answer to a query sent twice */
			if (good_answer(r, len, &slots[i]))
				answered++;
			else
				wrong++;
			assign(&slots[i], next < queries ? next++ : -1, now_s());
			if (slots[i].query >= 0)
				send_query(fd, &to, slots[i].id, slots[i].query);
		}
		double t = now_s();
		for (int i = 0; i < window; i++) {
			if (slots[i].query >= 0 && t - slots[i].sent > 1.0) {
				slots[i].sent = t;
				send_query(fd, &to, slots[i].id, slots[i].query);
			}
		}
	}
	double secs = now_s() - start;
	printf("answered=%ld seconds=%.6f qps=%.0f\n", answered, secs, answered / secs);
	if (wrong)
		fprintf(stderr, "dns_load: %ld wrong answers\n", wrong);
	return wrong ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2]);
	if (argc == 5 && strcmp(argv[1], "load") == 0) {
		long port = atol(argv[2]), queries = atol(argv[3]), window = atol(argv[4]);
		if (port > 0 && port < 65536 && queries > 0 && window > 0 && window <= MAX_WINDOW)
			return load((uint16_t)port, queries, (int)window);
	}
	fprintf(stderr, "usage: dns_load serve PORTFILE | dns_load load PORT QUERIES WINDOW\n");
	return 2;
}
