/* Access to the shared segment. Every field another process (or thread) reads concurrently is
 * touched only through these, so that the compiler neither tears nor caches them and TSan sees
 * the protocol as it is. */
#ifndef CTP_ATOMICS_H
#define CTP_ATOMICS_H

#define CTP_LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CTP_LOAD_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define CTP_STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define CTP_STORE_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define CTP_FENCE_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)
#define CTP_FENCE_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define CTP_FENCE_SEQ_CST() __atomic_thread_fence(__ATOMIC_SEQ_CST)

#endif
