#include "cat/model/strings.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow(struct ctp_strings *t)
{
	size_t cap = t->cap ? t->cap * 2 : 256;
	char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i])
			continue;
		size_t s = hash_bytes(t->slots[i], strlen(t->slots[i])) & (cap - 1);
		while (slots[s])
			s = (s + 1) & (cap - 1);
		slots[s] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

const char *ctp_strings_intern(struct ctp_strings *t, const char *s, size_t len)
{
	if (!s)
		return NULL;
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	size_t i = hash_bytes(s, len) & (t->cap - 1);
	for (; t->slots[i]; i = (i + 1) & (t->cap - 1))
		if (strncmp(t->slots[i], s, len) == 0 && t->slots[i][len] == '\0')
			return t->slots[i];
	t->slots[i] = strndup(s, len);
	if (!t->slots[i])
		return NULL;
	t->count++;
	return t->slots[i];
}

void ctp_strings_free(struct ctp_strings *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	*t = (struct ctp_strings){0};
}
