/* The functions the preload wraps, resolved lazily with dlsym(RTLD_NEXT): a hook can run before
 * the constructor (another library's constructor may call it), so none may rely on init. */
#ifndef CTP_PRELOAD_REAL_H
#define CTP_PRELOAD_REAL_H

#include <dlfcn.h>

/* Declares `real_NAME`, a pointer of NAME's type, resolved on first use. Two threads may both
 * resolve it; they store the same value. */
#define CTP_REAL(name)                                                                             \
	static __typeof__(name) *real_##name##_cache;                                              \
	__typeof__(name) *real_##name = __atomic_load_n(&real_##name##_cache, __ATOMIC_RELAXED);   \
	if (__builtin_expect(real_##name == NULL, 0)) {                                            \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);                         \
		__atomic_store_n(&real_##name##_cache, real_##name, __ATOMIC_RELAXED);             \
	}

#endif
