// A Boost.Asio echo server and its clients in one io_context, every party a stackful coroutine
// made by boost::asio::spawn (Boost 1.74: Boost.Coroutine v1 over Boost.Context): one acceptor,
// one session per connection, one client per connection. Each client sends its messages and
// reads each echo back, then closes; the session sees EOF and returns; when every client is
// done the acceptor is closed and its coroutine returns too. Healthy, every coroutine ends.
//
// Usage: asio_echo [--clients N] [--messages M] [--lose-one] [--time]
// Prints "echoed X of Y" at the end (with --lose-one, the fd it closed; with --time, the
// seconds the io_context ran, for scripts/bench).
//
// --lose-one plants the classic bug: one session's socket is closed with ::close() behind
// Asio's back while its coroutine waits to read, which also takes the descriptor out of Asio's
// epoll set. The session waits forever on a closed fd (a lost wakeup); its client sees the
// connection end and gives up. Once every other party has ended, the program stops the
// io_context and leaves, as a server that is shut down while a session hangs would.
#define BOOST_COROUTINES_NO_DEPRECATION_WARNING
#include <boost/asio.hpp>
#include <boost/asio/spawn.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace
{

struct options {
	int clients = 50;
	int messages = 20;
	bool lose_one = false;
	bool time = false;
};

struct server_state {
	asio::io_context io;
	tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::address_v4::loopback(), 0)};
	bool lose_one = false;
	int clients_left = 0;
	int sessions_live = 0;
	bool acceptor_done = false;
	long echoed = 0;
	int sessions = 0;
	int victim_fd = -1;
};

// With --lose-one the stranded session keeps the io_context busy forever: stop it once every
// other party has ended, so that only the planted bug is left suspended.
void stop_if_only_victim_left(server_state &s)
{
	if (s.lose_one && s.clients_left == 0 && s.acceptor_done && s.sessions_live == 1)
		s.io.stop();
}

// Reads and writes back until the peer closes. The victim session is the first one: its fd is
// what --lose-one closes behind Asio's back.
void session_echo(server_state &s, tcp::socket socket, asio::yield_context yield)
{
	if (s.sessions++ == 0)
		s.victim_fd = socket.native_handle();
	s.sessions_live++;
	char buf[256];
	for (;;) {
		boost::system::error_code ec;
		std::size_t n = socket.async_read_some(asio::buffer(buf), yield[ec]);
		if (ec)
			break;
		asio::async_write(socket, asio::buffer(buf, n), yield[ec]);
		if (ec)
			break;
	}
	s.sessions_live--;
	stop_if_only_victim_left(s);
}

void acceptor_loop(server_state &s, asio::yield_context yield)
{
	for (;;) {
		boost::system::error_code ec;
		tcp::socket socket(s.io);
		s.acceptor.async_accept(socket, yield[ec]);
		if (ec)
			break; // closed once every client is done
		asio::spawn(s.io, [&s, sock = std::move(socket)](asio::yield_context y) mutable {
			session_echo(s, std::move(sock), y);
		});
	}
	s.acceptor_done = true;
	stop_if_only_victim_left(s);
}

// The last client to finish closes the acceptor, which cancels its pending accept.
void client_done(server_state &s)
{
	if (--s.clients_left == 0)
		s.acceptor.close();
}

void client_talk(server_state &s, const options &o, int index, asio::yield_context yield)
{
	boost::system::error_code ec;
	tcp::socket socket(s.io);
	socket.async_connect(s.acceptor.local_endpoint(), yield[ec]);
	for (int m = 0; !ec && m < o.messages; m++) {
		if (o.lose_one && index == 0 && m == 1 && s.victim_fd >= 0) {
			// The bug: a raw close of a descriptor Asio still owns, while its session
			// waits.
			::close(s.victim_fd);
		}
		char out[64], in[64];
		int len = std::snprintf(out, sizeof out, "client %d message %d\n", index, m);
		asio::async_write(socket, asio::buffer(out, len), yield[ec]);
		if (ec)
			break;
		asio::async_read(socket, asio::buffer(in, len), yield[ec]);
		if (ec)
			break;
		if (std::memcmp(in, out, len) == 0)
			s.echoed++;
	}
	client_done(s);
}

options parse(int argc, char **argv)
{
	options o;
	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--clients") && i + 1 < argc)
			o.clients = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--messages") && i + 1 < argc)
			o.messages = std::atoi(argv[++i]);
		else if (!std::strcmp(argv[i], "--lose-one"))
			o.lose_one = true;
		else if (!std::strcmp(argv[i], "--time"))
			o.time = true;
		else {
			std::fprintf(
				stderr,
				"usage: %s [--clients N] [--messages M] [--lose-one] [--time]\n",
				argv[0]);
			std::exit(2);
		}
	}
	return o;
}

} // namespace

int main(int argc, char **argv)
{
	options o = parse(argc, argv);
	// Leaked on purpose: with --lose-one a session is stranded in it, and a server that is shut
	// down while a session hangs does not unwind it either.
	server_state &s = *new server_state;
	s.clients_left = o.clients;
	s.lose_one = o.lose_one;
	asio::spawn(s.io, [&s](asio::yield_context y) { acceptor_loop(s, y); });
	for (int i = 0; i < o.clients; i++)
		asio::spawn(s.io, [&s, &o, i](asio::yield_context y) { client_talk(s, o, i, y); });
	auto start = std::chrono::steady_clock::now();
	s.io.run();
	double secs =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	std::printf("echoed %ld of %ld\n", s.echoed, (long)o.clients * o.messages);
	if (o.time)
		std::printf("seconds=%.6f\n", secs);
	if (o.lose_one)
		std::printf("closed fd %d under a waiting session\n", s.victim_fd);
	if (!o.lose_one)
		delete &s;
	return 0;
}
