// A SimGrid s4u simulation: two actors on two hosts exchange a message ROUNDS times through two
// mailboxes. Each actor counts what it did; the program prints both counts and the simulated
// time; with --time, also "seconds=S", the wall time of the simulation (for scripts/bench).
// SimGrid's context factory (how actors switch) is chosen on the command line:
//
//   simgrid_pingpong ROUNDS [--time] [--cfg=contexts/factory:raw|ucontext|boost|thread]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

static int pings_sent, pongs_sent;

static void pinger(int rounds)
{
	sg4::Mailbox *out = sg4::Mailbox::by_name("ping"), *in = sg4::Mailbox::by_name("pong");
	for (int i = 0; i < rounds; i++) {
		out->put(new int(i), 1000);
		pings_sent++;
		delete in->get<int>();
	}
}

static void ponger(int rounds)
{
	sg4::Mailbox *in = sg4::Mailbox::by_name("ping"), *out = sg4::Mailbox::by_name("pong");
	for (int i = 0; i < rounds; i++) {
		int *v = in->get<int>();
		out->put(v, 1000);
		pongs_sent++;
	}
}

int main(int argc, char **argv)
{
	sg4::Engine engine(&argc, argv);
	int rounds = argc > 1 ? std::stoi(argv[1]) : 100;
	auto *zone = sg4::create_full_zone("zone");
	sg4::Host *a = zone->create_host("a", 1e9), *b = zone->create_host("b", 1e9);
	sg4::Link *link = zone->create_link("link", 1e9)->set_latency(1e-6);
	zone->add_route(a->get_netpoint(), b->get_netpoint(), nullptr, nullptr,
			{sg4::LinkInRoute(link)});
	zone->seal();
	sg4::Actor::create("pinger", a, pinger, rounds);
	sg4::Actor::create("ponger", b, ponger, rounds);
	bool timed = argc > 2 && std::strcmp(argv[2], "--time") == 0;
	auto start = std::chrono::steady_clock::now();
	engine.run();
	std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
	std::printf("pings %d pongs %d simulated %.6f s\n", pings_sent, pongs_sent,
		    engine.get_clock());
	if (timed)
		std::printf("seconds=%.6f\n", took.count());
	return 0;
}
