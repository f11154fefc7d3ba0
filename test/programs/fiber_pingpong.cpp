// Boost.Fiber ping-pong, the benchmark of a fiber runtime's switch path: PAIRS pairs of fibers
// bounce a number over unbuffered channels ROUNDS times each, on THREADS threads sharing their
// fibers (shared_work scheduler). Most switches go through ontop_fcontext.
//
// Usage: fiber_pingpong [PAIRS [ROUNDS [THREADS]]]   (defaults 100, 2000, 2)
// Prints "pingpong pairs=P rounds=R seconds=S messages_per_s=M".
#include <boost/fiber/all.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace fibers = boost::fibers;
using channel = fibers::unbuffered_channel<long>;

namespace
{

__attribute__((noinline)) void ping(channel &out, channel &in, long rounds)
{
	long v = 0;
	for (long i = 0; i < rounds; i++) {
		out.push(v + 1);
		in.pop(v);
	}
	out.close();
}

__attribute__((noinline)) void pong(channel &in, channel &out)
{
	long v;
	while (in.pop(v) == fibers::channel_op_status::success)
		out.push(v + 1);
}

// A worker thread lends its time to the shared fibers until main says the work is done.
struct barrier_flag {
	fibers::mutex m;
	fibers::condition_variable cv;
	bool done = false;
};

void lend_thread(barrier_flag &flag)
{
	fibers::use_scheduling_algorithm<fibers::algo::shared_work>();
	std::unique_lock<fibers::mutex> lock(flag.m);
	flag.cv.wait(lock, [&] { return flag.done; });
}

} // namespace

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? std::atol(argv[1]) : 100;
	long rounds = argc > 2 ? std::atol(argv[2]) : 2000;
	int threads = argc > 3 ? std::atoi(argv[3]) : 2;
	if (pairs < 1 || rounds < 1 || threads < 1) {
		std::fprintf(stderr, "usage: %s [PAIRS [ROUNDS [THREADS]]]\n", argv[0]);
		return 2;
	}
	fibers::use_scheduling_algorithm<fibers::algo::shared_work>();
	barrier_flag flag;
	std::vector<std::thread> helpers;
	for (int t = 1; t < threads; t++)
		helpers.emplace_back(lend_thread, std::ref(flag));

	auto start = std::chrono::steady_clock::now();
	std::vector<channel> to_pong(pairs), to_ping(pairs);
	std::vector<fibers::fiber> all;
	for (long p = 0; p < pairs; p++) {
		all.emplace_back(ping, std::ref(to_pong[p]), std::ref(to_ping[p]), rounds);
		all.emplace_back(pong, std::ref(to_pong[p]), std::ref(to_ping[p]));
	}
	for (auto &f : all)
		f.join();
	double secs =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	{
		std::unique_lock<fibers::mutex> lock(flag.m);
		flag.done = true;
	}
	flag.cv.notify_all();
	for (auto &t : helpers)
		t.join();
	std::printf("pingpong pairs=%ld rounds=%ld seconds=%.6f messages_per_s=%.0f\n", pairs,
		    rounds, secs, 2.0 * pairs * rounds / secs);
	return 0;
}
