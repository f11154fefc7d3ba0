/* Real definitions that may live in a library outside the global scope (real_lookup.c). */
#ifndef CTP_PRELOAD_REAL_LOOKUP_H
#define CTP_PRELOAD_REAL_LOOKUP_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

enum { CTP_REAL_LOCAL_MAX = 8 };

/* One hooked function's real definitions: the global one when there is one (the common case,
 * one load on the hot path), else one per calling library. */
struct ctp_real_cache {
	void *global;
	int global_resolved;
	int lock;
	uint32_t nlocal;
	struct {
		uintptr_t lo, hi; /* the calling library's address range */
		void *fn;
	} local[CTP_REAL_LOCAL_MAX];
};

/* The definition for a caller when the global scope has none; aborts with a message when no
 * definition is loaded anywhere (calling NULL would crash less clearly). */
void *ctp_real_local_lookup(struct ctp_real_cache *c, const char *name, const void *caller,
			    const void *self) __attribute__((visibility("hidden")));

/* The real `name` for a call from `caller`; `self` is the hook (never returned). */
static inline void *ctp_real_for_caller(struct ctp_real_cache *c, const char *name,
					const void *caller, const void *self)
{
	void *f = __atomic_load_n(&c->global, __ATOMIC_RELAXED);
	if (__builtin_expect(f != NULL, 1))
		return f;
	if (!__atomic_load_n(&c->global_resolved, __ATOMIC_ACQUIRE)) {
		f = dlsym(RTLD_NEXT, name);
		if (f == self)
			f = NULL;
		__atomic_store_n(&c->global, f, __ATOMIC_RELAXED);
		__atomic_store_n(&c->global_resolved, 1, __ATOMIC_RELEASE);
		if (f)
			return f;
	}
	return ctp_real_local_lookup(c, name, caller, self);
}

/* The real `name` for a call from `caller`, typed as the hook `name` is. */
#define CTP_REAL_FOR_CALLER(cache, name, caller)                                                   \
	((__typeof__(name) *)ctp_real_for_caller(&(cache), #name, (caller), (const void *)(name)))

#endif
