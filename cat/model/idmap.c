#include "cat/model/idmap.h"

#include <stdlib.h>

#include "cat/model/grow.h"

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

static struct ctp_idmap_row *row_of(const struct ctp_idmap *m, uint32_t a)
{
	for (size_t i = 0; i < m->nrows; i++)
		if (m->rows[i].a == a)
			return (struct ctp_idmap_row *)&m->rows[i];
	return NULL;
}

uint32_t ctp_idmap_get(const struct ctp_idmap *m, uint32_t a, uint64_t b)
{
	const struct ctp_idmap_row *r = m->nrows ? row_of(m, a) : NULL;
	if (r && b < r->cap && r->values[b] != CTP_IDMAP_NONE)
		return r->values[b];
	return m->slots ? m->slots[find(m, a, b)].value : CTP_IDMAP_NONE;
}

/* Puts (a, b) in a's row when b is small enough for it (the row made if there is room): 1 when
 * put, 0 when it belongs to the slots, -1 when out of memory. An id is in one place only: one
 * the slots hold already stays there. */
static int row_put(struct ctp_idmap *m, uint32_t a, uint64_t b, uint32_t value)
{
	struct ctp_idmap_row *r = row_of(m, a);
	size_t count = r ? r->count : 0;
	if (b >= 2 * count + 1024 || (!r && m->nrows == CTP_IDMAP_ROWS))
		return 0;
	if (m->slots && m->slots[find(m, a, b)].value != CTP_IDMAP_NONE)
		return 0;
	if (!r) {
		r = &m->rows[m->nrows++];
		*r = (struct ctp_idmap_row){.a = a};
	}
	if (b >= r->cap) {
		size_t had = r->cap;
		if (ctp_grow((void **)&r->values, &r->cap, (size_t)b + 1, sizeof(*r->values)) < 0)
			return -1;
		for (size_t i = had; i < r->cap; i++)
			r->values[i] = CTP_IDMAP_NONE;
	}
	if (r->values[b] == CTP_IDMAP_NONE)
		r->count++;
	r->values[b] = value;
	return 1;
}

/* Removes (a, b) from a's row if it is there (a row left empty is freed): true if it was. */
static bool row_del(struct ctp_idmap *m, uint32_t a, uint64_t b)
{
	struct ctp_idmap_row *r = m->nrows ? row_of(m, a) : NULL;
	if (!r || b >= r->cap || r->values[b] == CTP_IDMAP_NONE)
		return false;
	r->values[b] = CTP_IDMAP_NONE;
	if (--r->count == 0) {
		free(r->values);
		*r = m->rows[--m->nrows];
	}
	return true;
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
	m->slots = bigger.slots; /* (the rows stay) */
	m->mask = bigger.mask;
	return 0;
}

int ctp_idmap_put(struct ctp_idmap *m, uint32_t a, uint64_t b, uint32_t value)
{
	int in_row = row_put(m, a, b, value);
	if (in_row != 0)
		return in_row < 0 ? -1 : 0;
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
	if (row_del(m, a, b) || !m->slots)
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
	for (size_t r = 0; r < m->nrows; r++)
		for (size_t b = 0; b < m->rows[r].cap; b++)
			if (m->rows[r].values[b] != CTP_IDMAP_NONE)
				fn(ctx, m->rows[r].a, b, m->rows[r].values[b]);
	for (size_t i = 0; m->slots && i <= m->mask; i++)
		if (m->slots[i].value != CTP_IDMAP_NONE)
			fn(ctx, m->slots[i].a, m->slots[i].b, m->slots[i].value);
}

void ctp_idmap_free(struct ctp_idmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->mask = m->used = 0;
	for (size_t r = 0; r < m->nrows; r++)
		free(m->rows[r].values);
	m->nrows = 0;
}
