// Cost of a Boost.Context switch, measured inside the program so that the same binary can be
// run with and without the tracer: the difference is what tracing adds per switch.
//
//   bench_fcontext [jump|fiber|tsc] [round_trips]
//
// jump:  a ping-pong between main and one context through jump_fcontext directly;
// fiber: the same over boost::context::fiber (resume = jump_fcontext);
// tsc:   no switch: two reads of the TSC per round trip, as the tracer reads it for each
//        traced switch, so that the bench can tell that cost from the tracer's own.
// Prints one line: "bench_fcontext mode=M switches=N ns_per_switch=X".
#include <boost/context/detail/fcontext.hpp>
#include <boost/context/fiber.hpp>

#include <chrono>
#include <x86intrin.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ctx = boost::context;
namespace det = boost::context::detail;

static void ping_pong_entry(det::transfer_t t)
{
	for (;;)
		t = det::jump_fcontext(t.fctx, nullptr);
}

static double bench_jump(long round_trips)
{
	std::vector<char> stack(64 * 1024);
	det::fcontext_t c =
		det::make_fcontext(stack.data() + stack.size(), stack.size(), ping_pong_entry);
	c = det::jump_fcontext(c, nullptr).fctx; // warm up: start it
	auto start = std::chrono::steady_clock::now();
	for (long i = 0; i < round_trips; i++)
		c = det::jump_fcontext(c, nullptr).fctx;
	auto end = std::chrono::steady_clock::now();
	return std::chrono::duration<double, std::nano>(end - start).count();
}

static double bench_tsc(long round_trips)
{
	unsigned long long sum = 0;
	auto start = std::chrono::steady_clock::now();
	for (long i = 0; i < 2 * round_trips; i++)
		sum += __rdtsc();
	auto end = std::chrono::steady_clock::now();
	volatile unsigned long long keep = sum; // the reads are not optimised away
	(void)keep;
	return std::chrono::duration<double, std::nano>(end - start).count();
}

static double bench_fiber(long round_trips)
{
	ctx::fiber f{[](ctx::fiber &&main) {
		for (;;)
			main = std::move(main).resume();
		return std::move(main);
	}};
	f = std::move(f).resume();
	auto start = std::chrono::steady_clock::now();
	for (long i = 0; i < round_trips; i++)
		f = std::move(f).resume();
	auto end = std::chrono::steady_clock::now();
	// The fiber never returns: leave it suspended rather than unwinding it.
	static ctx::fiber keep;
	keep = std::move(f);
	return std::chrono::duration<double, std::nano>(end - start).count();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "jump";
	long round_trips = argc > 2 ? std::atol(argv[2]) : 2000000;
	double ns;
	if (std::strcmp(mode, "jump") == 0)
		ns = bench_jump(round_trips);
	else if (std::strcmp(mode, "fiber") == 0)
		ns = bench_fiber(round_trips);
	else if (std::strcmp(mode, "tsc") == 0)
		ns = bench_tsc(round_trips);
	else {
		std::fprintf(stderr, "usage: bench_fcontext [jump|fiber|tsc] [round_trips]\n");
		return 2;
	}
	long switches = 2 * round_trips;
	std::printf("bench_fcontext mode=%s switches=%ld ns_per_switch=%.2f\n", mode, switches,
		    ns / (double)switches);
	std::fflush(stdout);
	// The context of `jump` runs forever; _exit keeps the kept fiber from being unwound.
	std::_Exit(0);
}
