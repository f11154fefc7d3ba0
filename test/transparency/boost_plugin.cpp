// The plugin of the Boost.Context-in-RTLD_LOCAL case: it links libboost_context and runs a
// generator on a boost::context::fiber. Loaded RTLD_LOCAL, its jump_fcontext & co. are not
// visible to dlsym(RTLD_NEXT) from the preload.
#include <boost/context/fiber.hpp>
#include <cstdio>
#include <utility>

namespace ctx = boost::context;

extern "C" int boost_plugin_run(char *buf, int size)
{
	int value = 0;
	ctx::fiber gen{[&value](ctx::fiber &&caller) {
		for (int i = 1; i <= 5; i++) {
			value = i * i;
			caller = std::move(caller).resume();
		}
		value = -1;
		return std::move(caller);
	}};
	int used = 0, sum = 0;
	for (;;) {
		gen = std::move(gen).resume();
		if (value < 0)
			break;
		sum += value;
		used += std::snprintf(buf + used, size - used, "%d ", value);
	}
	return sum;
}
