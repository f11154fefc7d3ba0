// Boost.Coroutine2 generators (header-only, on boost::context::fiber, so on jump_fcontext and
// ontop_fcontext of libboost_context): a pipeline that is drained, generators destroyed before
// they finish (forced unwind), one leaked (never finished, never destroyed), and exceptions
// thrown inside coroutines. Prints what it computed, so that a run with the tracer can be
// compared with a run without it.
#include <boost/coroutine2/coroutine.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

using gen = boost::coroutines2::coroutine<long>;

// Counts unwound generator frames: a destroyed generator must run its destructors.
static int unwound;
struct on_unwind {
	~on_unwind()
	{
		unwound++;
	}
};

__attribute__((noinline)) void gen_numbers(gen::push_type &sink, long n)
{
	for (long i = 1; i <= n; i++)
		sink(i);
}

__attribute__((noinline)) void gen_squares(gen::push_type &sink, gen::pull_type &source)
{
	for (long v : source)
		sink(v * v);
}

__attribute__((noinline)) void gen_forever(gen::push_type &sink)
{
	on_unwind guard;
	for (long i = 0;; i++)
		sink(i);
}

__attribute__((noinline)) void gen_leaked(gen::push_type &sink)
{
	for (long i = 100;; i++)
		sink(i);
}

// Throws inside the coroutine and catches it there, between two yields.
__attribute__((noinline)) void gen_catches(gen::push_type &sink)
{
	for (long i = 0; i < 3; i++) {
		try {
			if (i == 1)
				throw std::runtime_error("inside");
			sink(i);
		} catch (const std::runtime_error &e) {
			sink(1000 + (long)std::string(e.what()).size());
		}
	}
}

// Throws out of the coroutine: coroutine2 rethrows it in the caller.
__attribute__((noinline)) void gen_throws(gen::push_type &sink)
{
	sink(1);
	throw std::runtime_error("out of the generator");
}

int main()
{
	// 1. A drained pipeline: squares of numbers.
	long sum = 0;
	{
		gen::pull_type numbers([](gen::push_type &s) { gen_numbers(s, 10); });
		gen::pull_type squares([&](gen::push_type &s) { gen_squares(s, numbers); });
		for (long v : squares)
			sum += v;
	}
	std::printf("pipeline sum %ld\n", sum);

	// 2. Destroyed early: two infinite generators, and a pipeline stage over one of them.
	long taken = 0;
	for (int k = 0; k < 2; k++) {
		gen::pull_type forever(gen_forever);
		for (int i = 0; i < 3; i++) {
			taken += forever.get();
			forever();
		}
	}
	{
		gen::pull_type source(gen_forever);
		gen::pull_type squares([&](gen::push_type &s) { gen_squares(s, source); });
		taken += squares.get();
		squares();
		taken += squares.get();
	}
	std::printf("taken %ld unwound %d\n", taken, unwound);

	// 3. Leaked: never finished, never destroyed.
	gen::pull_type *leaked = new gen::pull_type(gen_leaked);
	(*leaked)();
	std::printf("leaked at %ld\n", leaked->get());

	// 4. Exceptions inside coroutines.
	long caught = 0;
	{
		gen::pull_type catches(gen_catches);
		for (long v : catches)
			caught += v;
	}
	std::string what;
	try {
		gen::pull_type throws(gen_throws);
		while (throws)
			throws();
	} catch (const std::runtime_error &e) {
		what = e.what();
	}
	std::printf("caught %ld, rethrown '%s'\n", caught, what.c_str());
	return 0;
}
