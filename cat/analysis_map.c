#include "cat/analysis_map.h"

#include <stdlib.h>
#include <string.h>

#define EMPTY UINT32_MAX

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Fibonacci hashing spreads the small, dense ids (coroutines, fds) of a trace. */
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static int grow(struct ctp_amap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(cap * sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	memset(vals, 0xff, cap * sizeof(*vals));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == EMPTY)
			continue;
		size_t s = slot_of(m->keys[i], cap);
		while (vals[s] != EMPTY)
			s = (s + 1) & (cap - 1);
		keys[s] = m->keys[i];
		vals[s] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int ctp_amap_put(struct ctp_amap *m, uint64_t key, uint32_t val)
{
	if ((m->count + 1) * 2 > m->cap && grow(m) < 0)
		return -1;
	size_t s = slot_of(key, m->cap);
	while (m->vals[s] != EMPTY && m->keys[s] != key)
		s = (s + 1) & (m->cap - 1);
	if (m->vals[s] == EMPTY)
		m->count++;
	m->keys[s] = key;
	m->vals[s] = val;
	return 0;
}

bool ctp_amap_get(const struct ctp_amap *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return false;
	for (size_t s = slot_of(key, m->cap); m->vals[s] != EMPTY; s = (s + 1) & (m->cap - 1)) {
		if (m->keys[s] == key) {
			*val = m->vals[s];
			return true;
		}
	}
	return false;
}

void ctp_amap_free(struct ctp_amap *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct ctp_amap){0};
}

static uint64_t hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int strings_grow(struct ctp_astrings *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i])
			continue;
		size_t s = hash_string(t->slots[i]) & (cap - 1);
		while (slots[s])
			s = (s + 1) & (cap - 1);
		slots[s] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *ctp_astrings_intern(struct ctp_astrings *t, const char *s)
{
	if (!s)
		return NULL;
	if ((t->count + 1) * 2 > t->cap && strings_grow(t) < 0)
		return NULL;
	size_t i = hash_string(s) & (t->cap - 1);
	for (; t->slots[i]; i = (i + 1) & (t->cap - 1)) {
		if (strcmp(t->slots[i], s) == 0)
			return t->slots[i];
	}
	t->slots[i] = strdup(s);
	if (!t->slots[i])
		return NULL;
	t->count++;
	return t->slots[i];
}

void ctp_astrings_free(struct ctp_astrings *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	*t = (struct ctp_astrings){0};
}
