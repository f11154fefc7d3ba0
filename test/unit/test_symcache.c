/* The symbol cache keeps one entry per address; a caller that writes a whole stack's `stack` line
 * holds the entries of all its frames at once, so those must not move while it looks them up.
 * With ctp_symcache_reserve first, every entry of a stack that straddles the cache's growth
 * still says what it was asked for (under ASan a moved entry would be a use after free). No
 * modules: every address is "in no module", which is all this test needs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ctp/symcache.h"

enum { FRAMES = 256 };

static void entries_of_one_stack_stay_valid_across_growth(void **state)
{
	(void)state;
	struct ctp_symcache c = {0};
	/* Fill the cache to just below its first growth (1024 slots, grown past half full). */
	for (uint64_t a = 1; a < 500; a++)
		ctp_symcache_lookup(&c, NULL, NULL, 0x1000 + a, true);
	size_t cap = c.cap;
	const struct ctp_sym *syms[FRAMES];
	ctp_symcache_reserve(&c, FRAMES);
	for (uint64_t i = 0; i < FRAMES; i++)
		syms[i] = ctp_symcache_lookup(&c, NULL, NULL, 0x100000 + i, true);
	assert_true(c.cap > cap); /* the reserve grew it, before the lookups */
	for (uint64_t i = 0; i < FRAMES; i++) {
		assert_int_equal(syms[i]->key, 0x100000 + i);
		assert_null(syms[i]->module);
	}
	/* Known addresses are found again, not added. */
	size_t count = c.count;
	assert_ptr_equal(ctp_symcache_lookup(&c, NULL, NULL, 0x100000, true), syms[0]);
	assert_int_equal(c.count, count);
	ctp_symcache_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(entries_of_one_stack_stay_valid_across_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
