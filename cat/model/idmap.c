#include "cat/model/idmap.h"

#include <stdlib.h>

static uint64_t mix(uint32_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static size_t find(const struct ctp_idmap *m, uint32_t a, uint64_t b)
{
	size_t i = mix(a, b) & m->mask;
	while (m->slots[i].value != CTP_IDMAP_NONE && (m->slots[i].a != a || m->slots[i].b != b))
		i = (i + 1) & m->mask;
	return i;
}

uint32_t ctp_idmap_get(const struct ctp_idmap *m, uint32_t a, uint64_t b)
{
	return m->slots ? m->slots[find(m, a, b)].value : CTP_IDMAP_NONE;
}

static int grow(struct ctp_idmap *m)
{
	size_t n = m->slots ? (m->mask + 1) * 2 : 64;
	struct ctp_idmap bigger = {.mask = n - 1, .used = m->used};
	bigger.slots = malloc(n * sizeof(*bigger.slots));
	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i < n; i++)
		bigger.slots[i].value = CTP_IDMAP_NONE;
	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].value != CTP_IDMAP_NONE)
			bigger.slots[find(&bigger, m->slots[i].a, m->slots[i].b)] = m->slots[i];
	free(m->slots);
	*m = bigger;
	return 0;
}

int ctp_idmap_put(struct ctp_idmap *m, uint32_t a, uint64_t b, uint32_t value)
{
	if ((!m->slots || (m->used + 1) * 2 > m->mask + 1) && grow(m) < 0)
		return -1;
	struct ctp_idmap_slot *s = &m->slots[find(m, a, b)];
	if (s->value == CTP_IDMAP_NONE)
		m->used++;
	*s = (struct ctp_idmap_slot){.b = b, .a = a, .value = value};
	return 0;
}

void ctp_idmap_del(struct ctp_idmap *m, uint32_t a, uint64_t b)
{
	if (!m->slots)
		return;
	size_t i = find(m, a, b);
	if (m->slots[i].value == CTP_IDMAP_NONE)
		return;
	m->used--;
	/* Backward shift: move up every following entry whose home is at or before the hole. */
	for (size_t j = (i + 1) & m->mask; m->slots[j].value != CTP_IDMAP_NONE;
	     j = (j + 1) & m->mask) {
		size_t home = mix(m->slots[j].a, m->slots[j].b) & m->mask;
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].value = CTP_IDMAP_NONE;
}

void ctp_idmap_each(const struct ctp_idmap *m,
		    void (*fn)(void *ctx, uint32_t a, uint64_t b, uint32_t value), void *ctx)
{
	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].value != CTP_IDMAP_NONE)
			fn(ctx, m->slots[i].a, m->slots[i].b, m->slots[i].value);
}

void ctp_idmap_free(struct ctp_idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->mask = m->used = 0;
}
