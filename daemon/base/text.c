/*
 * Small text helpers (text.h).
 */
#include <ctype.h>
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
