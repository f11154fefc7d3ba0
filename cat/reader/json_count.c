#include "cat/reader/json_count.h"

#include <stdbool.h>

/* A number or literal starts where the last significant byte outside strings was one that
 * comes before a value ('[', ',', ':') or at the start; its later bytes are not counted. */
static bool before_value(char prev)
{
	return prev == '\0' || prev == '[' || prev == ',' || prev == ':';
}

uint64_t ctp_json_count_values(const char *text, size_t len, uint64_t stop_at)
{
	uint64_t values = 0;
	bool in_string = false, escaped = false;
	char prev = '\0';
	for (size_t i = 0; i < len && values <= stop_at; i++) {
		char c = text[i];
		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
			continue;
		}
		switch (c) {
		case ' ':
		case '\t':
		case '\r':
		case '\n':
			continue;
		case '"':
			in_string = true;
			values++;
			break;
		case '[':
		case '{':
			values++;
			break;
		case ']':
		case '}':
		case ',':
		case ':':
			break;
		default:
			if (before_value(prev))
				values++;
			break;
		}
		prev = c;
	}
	return values;
}
