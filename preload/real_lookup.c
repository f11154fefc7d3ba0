/* The real definitions of functions the preload hooks that live outside libc. A library loaded
 * with RTLD_LOCAL (how Python and JNI extensions load, with their own dependencies) is not in the
 * global scope: dlsym(RTLD_NEXT) cannot see its libboost_context, yet the extension's calls bind
 * to the preload's hook, which is global. Its real function is then the one in the calling
 * library's own scope, which dlopen(RTLD_NOLOAD) of that library gives without loading anything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "preload/fork_guard.h"
#include "preload/object_range.h"
#include "preload/process.h"
#include "preload/real_lookup.h"

struct containing {
	uintptr_t addr;
	const char *name;
	uintptr_t lo, hi;
	bool found;
};

static int find_containing(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct containing *c = arg;
	uint64_t lo, hi;
	if (!ctp_object_range(info, &lo, &hi) || c->addr < lo || c->addr >= hi)
		return 0;
	c->name = info->dlpi_name;
	c->lo = lo;
	c->hi = hi;
	c->found = true;
	return 1;
}

/* `name` in the scope of the loaded object called `path`, never `self`. */
static void *lookup_in(const char *path, const char *name, const void *self)
{
	if (!path || !*path)
		return NULL; /* the main program: its scope is the global one */
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	void *f = dlsym(h, name);
	dlclose(h);
	return f == self ? NULL : f;
}

struct any_definition {
	const char *name;
	const void *self;
	void *found;
};

static int find_any(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct any_definition *a = arg;
	a->found = lookup_in(info->dlpi_name, a->name, a->self);
	return a->found != NULL;
}

void *ctp_real_local_lookup(struct ctp_real_cache *c, const char *name, const void *caller,
			    const void *self)
{
	uint32_t n = __atomic_load_n(&c->nlocal, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (c->local[i].lo <= (uintptr_t)caller && (uintptr_t)caller < c->local[i].hi)
			return c->local[i].fn;

	int saved_errno = errno;
	struct containing where = {.addr = (uintptr_t)caller};
	ctp_fork_guard_enter();
	dl_iterate_phdr(find_containing, &where);
	void *fn = where.found ? lookup_in(where.name, name, self) : NULL;
	if (!fn) {
		/* Called from somewhere whose scope does not have it: any loaded definition. */
		struct any_definition any = {.name = name, .self = self};
		dl_iterate_phdr(find_any, &any);
		fn = any.found;
	}
	ctp_fork_guard_leave();
	if (!fn) {
		ctp_log("no real definition of ", name, " is loaded: cannot go on");
		abort();
	}
	/* Cached unless another thread is caching (never wait: a fork at that moment would leave
	 * the child a lock nobody releases). */
	if (where.found && !__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE)) {
		uint32_t k = c->nlocal;
		if (k < CTP_REAL_LOCAL_MAX) {
			c->local[k].lo = where.lo;
			c->local[k].hi = where.hi;
			c->local[k].fn = fn;
			__atomic_store_n(&c->nlocal, k + 1, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
	}
	errno = saved_errno;
	return fn;
}
