#include "ctp/cxx_name.h"

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

void ctp_put_cxx_name(FILE *f, const char *name, bool full)
{
	if (full) {
		fputs(name, f);
		return;
	}
	size_t depth = 0;
	for (const char *s = name; *s;) {
		size_t op = depth ? 0 : angle_operator_length(s);
		if (op) {
			fwrite(s, 1, op, f);
			s += op;
			continue;
		}
		if (s[0] == '-' && s[1] == '>') { /* an arrow inside decltype(), not a bracket */
			if (!depth)
				fputs("->", f);
			s += 2;
			continue;
		}
		if (*s == '<' && depth++ == 0)
			fputs("<...", f);
		else if (*s == '>' && depth && --depth == 0)
			fputc('>', f);
		else if (!depth)
			fputc(*s, f);
		s++;
	}
}
