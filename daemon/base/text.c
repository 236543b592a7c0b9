/*
 * Small text helpers (text.h).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "text.h"

void text_quote(const char *text, char *out, size_t outlen)
{
	size_t len = strlen(text), n;

	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	for (n = 0; n < len && n + 1 < outlen; n++)
		out[n] = isprint((unsigned char)text[n]) ? text[n] : '?';
	out[n] = '\0';
}

int text_parse_dec(const char *s, long max, long *ret_value, const char **ret_end)
{
	long v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -EINVAL;
	}
	*ret_value = v;
	*ret_end = p;
	return 0;
}
