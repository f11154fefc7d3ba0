/* Boost.Context's C ABI (libboost_context), as Boost.Coroutine2 and Boost.Fiber call it: for the
 * C programs of this suite that switch fcontexts themselves (link boost_context). */
#ifndef CTP_TEST_FCONTEXT_ABI_H
#define CTP_TEST_FCONTEXT_ABI_H

#include <stddef.h>

typedef void *fcontext_t;
typedef struct {
	fcontext_t fctx;
	void *data;
} transfer_t;
extern transfer_t jump_fcontext(fcontext_t to, void *vp);
extern fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

#endif
