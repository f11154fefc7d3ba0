// C++ exceptions inside ucontext coroutines: thrown deep and caught frames above, thrown after a
// coroutine was suspended and resumed inside the try block, and carried out of a coroutine as a
// std::exception_ptr that main rethrows. The tracer must not change any of it (its unwinder is
// loaded privately, so the program's _Unwind_* stay libgcc's).
//
// Prints the counts and a checksum; exits 0 when every count is what it must be.
//
//   cxx_exceptions [COROS [ITERATIONS]]   (defaults 4 and 1000)
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

struct Custom {
	long value;
};

struct Coro {
	ucontext_t ctx;
	std::vector<char> stack;
	std::exception_ptr carried; // for main to rethrow
	bool done = false;
};

ucontext_t main_ctx;
std::vector<Coro> coros;
int iterations;
long caught, caught_after_resume, rethrown_in_main, checksum;

void yield(int self)
{
	swapcontext(&coros[self].ctx, &main_ctx);
}

[[gnu::noinline]] void deep_throw(int depth, int self, int iter)
{
	if (depth == 0)
		throw std::runtime_error("coroutine " + std::to_string(self) + " iteration " +
					 std::to_string(iter));
	deep_throw(depth - 1, self, iter);
	checksum--; // not reached; keeps the recursion from being a tail call
}

[[gnu::noinline]] void suspend_then_throw(int self, int iter)
{
	yield(self);
	throw Custom{iter};
}

void body(int self)
{
	for (int iter = 0; iter < iterations; iter++) {
		try {
			deep_throw(5 + iter % 3, self, iter);
		} catch (const std::runtime_error &e) {
			caught++;
			checksum += (long)std::strlen(e.what());
		}
		try {
			suspend_then_throw(self, iter); // the one yield of this iteration
		} catch (const Custom &c) {
			caught_after_resume++;
			checksum += c.value;
		}
		try {
			deep_throw(2, self, iter);
		} catch (...) {
			coros[self].carried = std::current_exception();
		}
	}
}

void entry(int self)
{
	body(self);
	coros[self].done = true;
}

} // namespace

int main(int argc, char **argv)
{
	int ncoros = argc > 1 ? std::atoi(argv[1]) : 4;
	iterations = argc > 2 ? std::atoi(argv[2]) : 1000;
	coros.resize((size_t)ncoros);
	for (int i = 0; i < ncoros; i++) {
		Coro &c = coros[(size_t)i];
		c.stack.resize(256 * 1024);
		getcontext(&c.ctx);
		c.ctx.uc_stack.ss_sp = c.stack.data();
		c.ctx.uc_stack.ss_size = c.stack.size();
		c.ctx.uc_link = &main_ctx;
		makecontext(&c.ctx, (void (*)())entry, 1, i);
	}
	for (bool any = true; any;) {
		any = false;
		for (Coro &c : coros) {
			if (c.done)
				continue;
			any = true;
			swapcontext(&main_ctx, &c.ctx);
			if (c.carried) {
				try {
					std::rethrow_exception(c.carried);
				} catch (const std::runtime_error &e) {
					rethrown_in_main++;
					checksum += e.what()[0];
				}
				c.carried = nullptr;
			}
		}
	}
	long want = (long)ncoros * iterations;
	std::printf("caught %ld caught_after_resume %ld rethrown_in_main %ld checksum %ld\n",
		    caught, caught_after_resume, rethrown_in_main, checksum);
	return caught == want && caught_after_resume == want && rethrown_in_main == want ? 0 : 1;
}
