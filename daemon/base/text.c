/*
 * Small text helpers (text.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
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

size_t text_escape(const char *in, size_t len, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	if (outlen == 0)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '\\';

		if (o + (plain ? 1 : 4) >= outlen)
			break;
		if (plain) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	out[o] = '\0';
	return i;
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
