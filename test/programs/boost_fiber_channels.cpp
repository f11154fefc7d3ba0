// Boost.Fiber (libboost_fiber, switching mostly through ontop_fcontext): producer and consumer
// fibers over buffered channels, joined when done, and one fiber that waits forever on a
// condition variable that nobody notifies. main ends without joining it.
#include <boost/fiber/all.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace fibers = boost::fibers;

using channel = fibers::buffered_channel<long>;

static fibers::mutex never_mutex;
static fibers::condition_variable never_cv;
static bool never_ready;

__attribute__((noinline)) void producer(channel &out, long first, long count)
{
	for (long i = first; i < first + count; i++)
		out.push(i);
}

__attribute__((noinline)) void squarer(channel &in, channel &out)
{
	long v;
	while (in.pop(v) == fibers::channel_op_status::success)
		out.push(v * v);
	out.close();
}

__attribute__((noinline)) void consumer(channel &in, long *sum)
{
	long v;
	while (in.pop(v) == fibers::channel_op_status::success)
		*sum += v;
}

__attribute__((noinline)) void wait_forever()
{
	std::unique_lock<fibers::mutex> lock(never_mutex);
	never_cv.wait(lock, [] { return never_ready; });
}

int main()
{
	fibers::fiber waiter(wait_forever);
	waiter.detach();

	channel numbers(4), squares(4);
	long sum = 0;
	fibers::fiber p1(producer, std::ref(numbers), 1, 50);
	fibers::fiber p2(producer, std::ref(numbers), 51, 50);
	fibers::fiber sq(squarer, std::ref(numbers), std::ref(squares));
	fibers::fiber c(consumer, std::ref(squares), &sum);
	p1.join();
	p2.join();
	numbers.close();
	sq.join();
	c.join();
	// A finished fiber's context is freed by the dispatcher, which runs when no fiber is
	// ready: sleeping lets it free the last one.
	boost::this_fiber::sleep_for(std::chrono::milliseconds(1));
	std::printf("sum of squares %ld\n", sum);
	std::fflush(stdout);
	// The scheduler would wait for the detached waiter at thread exit: leave without it.
	std::_Exit(0);
}
