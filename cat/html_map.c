/* A small hash map from a pair of numbers to an index, for the dashboard's lookups (pids,
 * coroutines, threads, stacks). Open addressing with linear probing, grown at half full. */
#include <stdlib.h>

#include "cat/html.h"

struct ctp_html_map_slot {
	uint64_t a, b;
	uint32_t value; /* CTP_HTML_NONE: empty */
};

struct ctp_html_map {
	struct ctp_html_map_slot *slots;
	size_t mask, used;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

struct ctp_html_map *ctp_html_map_new(void)
{
	struct ctp_html_map *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->mask = 63;
	m->slots = malloc((m->mask + 1) * sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	for (size_t i = 0; i <= m->mask; i++)
		m->slots[i].value = CTP_HTML_NONE;
	return m;
}

void ctp_html_map_free(struct ctp_html_map *m)
{
	if (m)
		free(m->slots);
	free(m);
}

static struct ctp_html_map_slot *map_slot(const struct ctp_html_map *m, uint64_t a, uint64_t b)
{
	size_t i = mix(a, b) & m->mask;
	while (m->slots[i].value != CTP_HTML_NONE && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & m->mask;
	return &m->slots[i];
}

uint32_t ctp_html_map_get(const struct ctp_html_map *m, uint64_t a, uint64_t b)
{
	return map_slot(m, a, b)->value;
}

int ctp_html_map_put(struct ctp_html_map *m, uint64_t a, uint64_t b, uint32_t value)
{
	if ((m->used + 1) * 2 > m->mask + 1) {
		struct ctp_html_map bigger = {.mask = m->mask * 2 + 1};
		bigger.slots = malloc((bigger.mask + 1) * sizeof(*bigger.slots));
		if (!bigger.slots)
			return -1;
		for (size_t i = 0; i <= bigger.mask; i++)
			bigger.slots[i].value = CTP_HTML_NONE;
		for (size_t i = 0; i <= m->mask; i++)
			if (m->slots[i].value != CTP_HTML_NONE)
				*map_slot(&bigger, m->slots[i].a, m->slots[i].b) = m->slots[i];
		free(m->slots);
		m->slots = bigger.slots;
		m->mask = bigger.mask;
	}
	struct ctp_html_map_slot *s = map_slot(m, a, b);
	if (s->value == CTP_HTML_NONE)
		m->used++;
	*s = (struct ctp_html_map_slot){a, b, value};
	return 0;
}
