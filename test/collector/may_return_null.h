/* A sanitizer's allocator ends the process ("Failed to mmap") where malloc would return NULL,
 * unless told to return NULL as glibc's does: tests of what the collector does when memory
 * runs out include this once, and run under ASan and TSan too. */
#ifndef CTP_TEST_MAY_RETURN_NULL_H
#define CTP_TEST_MAY_RETURN_NULL_H

#if defined(__SANITIZE_ADDRESS__)
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif
#if defined(__SANITIZE_THREAD__)
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

#endif
