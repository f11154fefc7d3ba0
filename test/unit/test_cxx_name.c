/* C++ names shortened for people (ctp/cxx_name.h): each outermost template argument list becomes
 * <...>, operators keep their brackets, and a full name is written as it is. The names are the
 * shapes the text views meet in Boost and Asio programs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctp/cxx_name.h"

/* The name as ctp_put_cxx_name writes it (a buffer the caller frees). */
static char *written(const char *name, bool full)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	ctp_put_cxx_name(f, name, full);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void expect_written(const char *name, bool full, const char *want)
{
	char *got = written(name, full);
	assert_string_equal(got, want);
	free(got);
}

static void template_arguments_are_elided(void **state)
{
	(void)state;
	expect_written("std::vector<int, std::allocator<int> >::push_back(int const&)", false,
		       "std::vector<...>::push_back(int const&)");
	expect_written("boost::fibers::context::resume(std::unique_lock<boost::fibers::detail::"
		       "spinlock_ttas>&)",
		       false, "boost::fibers::context::resume(std::unique_lock<...>&)");
	/* Nested lists count once: only the outermost is elided, whatever is inside. */
	expect_written("void boost::context::detail::fiber_entry<boost::context::detail::"
		       "fiber_record<boost::context::fiber, std::_Bind<void (*(int))(int)> > >"
		       "(boost::context::detail::transfer_t)",
		       false,
		       "void boost::context::detail::fiber_entry<...>(boost::context::detail::"
		       "transfer_t)");
}

static void operators_keep_their_brackets(void **state)
{
	(void)state;
	expect_written("std::ostream::operator<<(int)", false, "std::ostream::operator<<(int)");
	expect_written("operator<=>(a const&, b const&)", false, "operator<=>(a const&, b const&)");
	expect_written("std::unique_ptr<T, D>::operator->() const", false,
		       "std::unique_ptr<...>::operator->() const");
	/* An arrow inside a template list is no closing bracket. */
	expect_written("f<decltype(p->x)>(int)", false, "f<...>(int)");
}

static void full_names_and_plain_names_are_kept(void **state)
{
	(void)state;
	const char *name = "std::map<int, std::string>::at(int const&)";
	expect_written(name, true, name);
	expect_written("sched_wait_readable", false, "sched_wait_readable");
	expect_written("", false, "");
}

/* Into a buffer: cut to fit, always terminated, and the whole length returned so that a caller
 * can tell it was cut. */
static void shortened_into_a_buffer(void **state)
{
	(void)state;
	const char *name = "std::vector<int>::at(unsigned long)";
	const char *want = "std::vector<...>::at(unsigned long)";
	char buf[64];
	assert_int_equal(ctp_cxx_name_short(name, buf, sizeof(buf)), strlen(want));
	assert_string_equal(buf, want);
	char small[12];
	assert_int_equal(ctp_cxx_name_short(name, small, sizeof(small)), strlen(want));
	assert_string_equal(small, "std::vector");
}

/* A name still long once shortened (here 3,000 characters outside any template list) is
 * written whole, past any fixed buffer. */
static void long_names_are_written_whole(void **state)
{
	(void)state;
	enum { PLAIN = 3000 };
	char *name = malloc(PLAIN + 16);
	assert_non_null(name);
	memset(name, 'a', PLAIN);
	strcpy(name + PLAIN, "<int>()");
	char *got = written(name, false);
	assert_int_equal(strlen(got), PLAIN + strlen("<...>()"));
	assert_string_equal(got + PLAIN, "<...>()");
	free(got);
	free(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(template_arguments_are_elided),
		cmocka_unit_test(operators_keep_their_brackets),
		cmocka_unit_test(full_names_and_plain_names_are_kept),
		cmocka_unit_test(shortened_into_a_buffer),
		cmocka_unit_test(long_names_are_written_whole),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
