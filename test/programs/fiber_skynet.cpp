// Boost.Fiber skynet: a fiber spawns 10 children, each 10 more, down to COUNT leaf fibers that
// return their number; the parents sum them up. Every fiber has a fixed 16 KiB stack, so the
// memory a tracer adds per fiber shows in the process's peak RSS.
//
// Usage: fiber_skynet [COUNT]   (default 100000; a power of 10)
// Prints "skynet count=N sum=S seconds=T maxrss_kb=K".
#include <boost/fiber/all.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>

namespace fibers = boost::fibers;

namespace
{

using allocator = boost::fibers::fixedsize_stack;
constexpr std::size_t stack_bytes = 16 * 1024;

__attribute__((noinline)) long skynet(long num, long size)
{
	if (size == 1)
		return num;
	long sub = size / 10, sum = 0;
	fibers::fiber children[10];
	long results[10];
	for (int i = 0; i < 10; i++)
		children[i] = fibers::fiber(
			std::allocator_arg, allocator(stack_bytes),
			[&results, i, num, sub] { results[i] = skynet(num + i * sub, sub); });
	for (int i = 0; i < 10; i++) {
		children[i].join();
		sum += results[i];
	}
	return sum;
}

} // namespace

int main(int argc, char **argv)
{
	long count = argc > 1 ? std::atol(argv[1]) : 100000;
	long p = 1;
	while (p < count)
		p *= 10;
	if (count < 1 || p != count) {
		std::fprintf(stderr, "usage: %s [COUNT, a power of 10]\n", argv[0]);
		return 2;
	}
	auto start = std::chrono::steady_clock::now();
	long sum = 0;
	fibers::fiber root(std::allocator_arg, allocator(stack_bytes),
			   [&sum, count] { sum = skynet(0, count); });
	root.join();
	double secs =
		std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	std::printf("skynet count=%ld sum=%ld seconds=%.6f maxrss_kb=%ld\n", count, sum, secs,
		    ru.ru_maxrss);
	return sum == count * (count - 1) / 2 ? 0 : 1;
}
