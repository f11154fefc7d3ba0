/* The preload's memo of walked stacks (preload/unwind_memo.c), on stacks made up here: a place
 * walked twice is remembered and serves the next suspend there while memory still holds its
 * return addresses; a changed word turns it down; any two places a program keeps coming back to
 * stay remembered together, whatever their hashes (with one place a set, a pair whose hashes
 * met pushed each other out at every walk, one pair in 32); a place reached through other
 * callers keeps a stack for each (with one, requests that came alternately through two
 * handlers were all walked); and the same frames found again elsewhere in memory take no
 * second place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "preload/unwind_memo.h"

enum { WORDS = 64, SLOT = 10, PAIRS = 2000 };

/* A stack of WORDS words whose call site (frames[0]) is stored at word SLOT and whose caller's
 * return addresses lie further up, as a walk would find them. */
struct fake_stack {
	uint64_t word[WORDS];
	uint64_t frames[3];
};

static void make_stack(struct fake_stack *s, uint64_t call_site)
{
	memset(s, 0, sizeof(*s));
	s->frames[0] = call_site;
	s->frames[1] = call_site + 0x1000;
	s->frames[2] = call_site + 0x2000;
	s->word[SLOT] = s->frames[0];
	s->word[SLOT + 4] = s->frames[1];
	s->word[SLOT + 9] = s->frames[2];
}

static uint64_t slot_of(struct fake_stack *s)
{
	return (uint64_t)&s->word[SLOT];
}

static uint64_t top_of(struct fake_stack *s)
{
	return (uint64_t)&s->word[WORDS];
}

static void walked(struct ctp_unwind_memo *m, struct fake_stack *s)
{
	ctp_unwind_memo_note(m, slot_of(s), top_of(s), s->frames, 3);
}

static uint32_t found(struct ctp_unwind_memo *m, struct fake_stack *s)
{
	const uint64_t *frames = NULL;
	uint32_t n = ctp_unwind_memo_find(m, slot_of(s), top_of(s), 16, &frames);
	if (n)
		assert_memory_equal(frames, s->frames, 8 * n);
	return n;
}

static void remembered_at_second_walk(void **state)
{
	(void)state;
	struct ctp_unwind_memo *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	struct fake_stack s;
	make_stack(&s, 0x401000);
	assert_int_equal(found(m, &s), 0);
	walked(m, &s);
	assert_int_equal(found(m, &s), 0); /* noted once: not remembered */
	walked(m, &s);
	assert_int_equal(found(m, &s), 3);
	s.word[SLOT + 9] = 0x999; /* another caller's frame there now */
	assert_int_equal(found(m, &s), 0);
	free(m);
}

static void two_places_stay_together(void **state)
{
	(void)state;
	struct ctp_unwind_memo *m = malloc(sizeof(*m));
	assert_non_null(m);
	struct fake_stack a, b;
	make_stack(&a, 0x401000);
	int lost = 0;
	for (uint64_t k = 1; k <= PAIRS; k++) {
		memset(m, 0, sizeof(*m));
		make_stack(&b, 0x500000 + 16 * k);
		/* Each place is walked twice, in turn, as two coroutines suspending there would. */
		walked(m, &a);
		walked(m, &b);
		walked(m, &a);
		walked(m, &b);
		lost += found(m, &a) == 0 || found(m, &b) == 0;
	}
	assert_int_equal(lost, 0);
	free(m);
}

/* How many of the memo's places hold a stack remembered for call_site. */
static int stacks_for(const struct ctp_unwind_memo *m, uint64_t call_site)
{
	int count = 0;
	for (int set = 0; set < CTP_UNWIND_MEMO_SETS; set++)
		for (int w = 0; w < CTP_UNWIND_MEMO_WAYS; w++)
			count += m->place[set][w].call_site == call_site && m->place[set][w].n;
	return count;
}

static void other_callers_keep_their_stacks(void **state)
{
	(void)state;
	struct ctp_unwind_memo *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	/* One call site at one depth, reached through three callers: the frames above it
	 * differ. */
	struct fake_stack s[3];
	for (int i = 0; i < 3; i++) {
		make_stack(&s[i], 0x401000);
		s[i].frames[1] += 0x100 * (uint64_t)i;
		s[i].word[SLOT + 4] = s[i].frames[1];
	}
	walked(m, &s[0]);
	walked(m, &s[0]);
	assert_int_equal(found(m, &s[0]), 3);
	for (int i = 1; i < 3; i++) {
		assert_int_equal(found(m, &s[i]), 0); /* not yet: another caller's stack */
		walked(m, &s[i]);
	}
	/* Requests that come through each in turn are all served from memory now. */
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < 3; i++)
			assert_int_equal(found(m, &s[i]), 3);
	assert_int_equal(stacks_for(m, 0x401000), 3);
	free(m);
}

static void same_frames_take_one_place(void **state)
{
	(void)state;
	struct ctp_unwind_memo *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	struct fake_stack a;
	make_stack(&a, 0x401000);
	/* The caller's return address also lies lower, in a local variable, where the search
	 * finds it first; in the next coroutine's stack that word holds something else. */
	a.word[SLOT + 2] = a.frames[1];
	walked(m, &a);
	walked(m, &a);
	assert_int_equal(found(m, &a), 3);
	a.word[SLOT + 2] = 0x5000;
	assert_int_equal(found(m, &a), 0);
	walked(m, &a);
	/* Remembered where the return address really lies: whatever that word holds next. */
	for (int i = 1; i < 8; i++) {
		a.word[SLOT + 2] = 0x5000 + (uint64_t)i;
		assert_int_equal(found(m, &a), 3);
	}
	assert_int_equal(stacks_for(m, 0x401000), 1);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(remembered_at_second_walk),
		cmocka_unit_test(two_places_stay_together),
		cmocka_unit_test(other_callers_keep_their_stacks),
		cmocka_unit_test(same_frames_take_one_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
