#include "ctp/cxx_name.h"

#include <stdlib.h>
#include <string.h>

/* The length of the operator that starts at s ("operator<<", "operator->", ...), whose angle
 * brackets are no template's; 0 when s starts no such operator. */
static size_t angle_operator_length(const char *s)
{
	static const char *const ops[] = {
		"operator<=>", "operator<<=", "operator>>=", "operator<<",
		"operator>>",  "operator<=",  "operator>=",  "operator->*",
		"operator->",  "operator<",   "operator>"};
	if (strncmp(s, "operator", 8) != 0)
		return 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(s, ops[i], strlen(ops[i])) == 0)
			return strlen(ops[i]);
	return 0;
}

/* Appends c to out while there is room, keeping the terminating NUL; counts it either way. */
static void emit(char *out, size_t cap, size_t *len, char c)
{
	if (*len + 1 < cap)
		out[*len] = c;
	(*len)++;
}

size_t ctp_cxx_name_short(const char *name, char *out, size_t cap)
{
	size_t len = 0, depth = 0;
	for (const char *s = name; *s;) {
		size_t op = depth ? 0 : angle_operator_length(s);
		if (op) {
			for (size_t i = 0; i < op; i++)
				emit(out, cap, &len, s[i]);
			s += op;
			continue;
		}
		if (s[0] == '-' && s[1] == '>') { /* an arrow inside decltype(), not a bracket */
			if (!depth) {
				emit(out, cap, &len, '-');
				emit(out, cap, &len, '>');
			}
			s += 2;
			continue;
		}
		if (*s == '<' && depth++ == 0) {
			for (const char *e = "<..."; *e; e++)
				emit(out, cap, &len, *e);
		} else if (*s == '>' && depth && --depth == 0) {
			emit(out, cap, &len, '>');
		} else if (!depth) {
			emit(out, cap, &len, *s);
		}
		s++;
	}
	if (cap)
		out[len < cap ? len : cap - 1] = '\0';
	return len;
}

void ctp_put_cxx_name(FILE *f, const char *name, bool full)
{
	if (full || !strchr(name, '<')) {
		fputs(name, f);
		return;
	}
	char buf[1024];
	size_t len = ctp_cxx_name_short(name, buf, sizeof(buf));
	if (len < sizeof(buf)) {
		fputs(buf, f);
		return;
	}
	char *big = malloc(len + 1);
	if (!big) {
		fputs(name, f); /* out of memory: the name as it is, rather than none */
		return;
	}
	ctp_cxx_name_short(name, big, len + 1);
	fputs(big, f);
	free(big);
}
