/* Attributes every file of libctp_preload.so uses. Nothing the preload declares is exported:
 * the library is built with -fvisibility=hidden and only the hooked functions are visible
 * (CTP_EXPORT). */
#ifndef CTP_PRELOAD_COMPILER_H
#define CTP_PRELOAD_COMPILER_H

#define CTP_HIDDEN __attribute__((visibility("hidden")))
#define CTP_EXPORT __attribute__((visibility("default")))
#define CTP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CTP_LIKELY(x) __builtin_expect(!!(x), 1)
/* For the small steps of the switch path, which must be one function with the hook that runs
 * them (GCC's heuristics leave some out of line once they are several). */
#define CTP_ALWAYS_INLINE static inline __attribute__((always_inline))

#endif
