/*
 * Growable text buffer with Prometheus and JSON escaping.  It owns one
 * malloc'd block that doubles as needed; an allocation failure marks the
 * buffer failed and every later append is a no-op, so formatters check
 * once at the end.  It knows nothing about metrics or snapshots.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

#define STRBUF_MIN_CAP 256

void strbuf_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = 0;
	sb->cap = 0;
	sb->failed = false;
}

void strbuf_free(struct strbuf *sb)
{
	free(sb->buf);
	strbuf_init(sb);
}

char *strbuf_steal(struct strbuf *sb, size_t *ret_len)
{
	char *text = NULL;

	if (!sb->failed && sb->len > 0) {
		text = sb->buf;
		if (ret_len)
			*ret_len = sb->len;
		sb->buf = NULL;
	}
	strbuf_free(sb);
	return text;
}

/* Make room for extra more bytes plus the NUL; false when failed. */
static bool reserve(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->failed)
		return false;
	if (extra > SIZE_MAX / 2 - sb->len - 1)
		goto fail;
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return true;
	cap = sb->cap ? sb->cap : STRBUF_MIN_CAP;
	while (cap < need)
		cap *= 2;
	p = realloc(sb->buf, cap);
	if (!p)
		goto fail;
	sb->buf = p;
	sb->cap = cap;
	return true;
fail:
	sb->failed = true;
	return false;
}

void strbuf_append_len(struct strbuf *sb, const char *s, size_t len)
{
	if (!reserve(sb, len))
		return;
	memcpy(sb->buf + sb->len, s, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_append(struct strbuf *sb, const char *s)
{
	strbuf_append_len(sb, s, strlen(s));
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!reserve(sb, 64))
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->buf[sb->len] = '\0';
		sb->failed = true;
		return;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		if (!reserve(sb, (size_t)n)) {
			sb->buf[sb->len] = '\0';
			return;
		}
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

/* Append s, replacing each character that has an entry in escapes. */
static void append_escaped(struct strbuf *sb, const char *s, const char *const escapes[256])
{
	const char *run = s;

	for (; *s; s++) {
		const char *e = escapes[(unsigned char)*s];

		if (!e)
			continue;
		strbuf_append_len(sb, run, (size_t)(s - run));
		strbuf_append(sb, e);
		run = s + 1;
	}
	strbuf_append_len(sb, run, (size_t)(s - run));
}

static const char *const prom_label_escapes[256] = {
	['\\'] = "\\\\", ['"'] = "\\\"", ['\n'] = "\\n",
};

static const char *const prom_help_escapes[256] = {
	['\\'] = "\\\\", ['\n'] = "\\n",
};

/* JSON: quote, backslash and every control character (RFC 8259 §7). */
static const char *const json_escapes[256] = {
	['"'] = "\\\"", ['\\'] = "\\\\",
	[0x00] = "\\u0000", [0x01] = "\\u0001", [0x02] = "\\u0002", [0x03] = "\\u0003",
	[0x04] = "\\u0004", [0x05] = "\\u0005", [0x06] = "\\u0006", [0x07] = "\\u0007",
	['\b'] = "\\b", ['\t'] = "\\t", ['\n'] = "\\n", [0x0b] = "\\u000b",
	['\f'] = "\\f", ['\r'] = "\\r", [0x0e] = "\\u000e", [0x0f] = "\\u000f",
	[0x10] = "\\u0010", [0x11] = "\\u0011", [0x12] = "\\u0012", [0x13] = "\\u0013",
	[0x14] = "\\u0014", [0x15] = "\\u0015", [0x16] = "\\u0016", [0x17] = "\\u0017",
	[0x18] = "\\u0018", [0x19] = "\\u0019", [0x1a] = "\\u001a", [0x1b] = "\\u001b",
	[0x1c] = "\\u001c", [0x1d] = "\\u001d", [0x1e] = "\\u001e", [0x1f] = "\\u001f",
	[0x7f] = "\\u007f",
};

void strbuf_append_prom_label(struct strbuf *sb, const char *s)
{
	append_escaped(sb, s, prom_label_escapes);
}

void strbuf_append_prom_help(struct strbuf *sb, const char *s)
{
	append_escaped(sb, s, prom_help_escapes);
}

void strbuf_append_json_string(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, "\"");
	append_escaped(sb, s, json_escapes);
	strbuf_append(sb, "\"");
}

/*
 * Finite v in the shortest %g form that reads back as the same double;
 * integral values below 2^53 without exponent or fraction.
 *
 * A normal double's shortest form has 15 digits or fewer exactly when
 * %.15g reads back (DBL_DIG: 15 digits survive decimal -> double ->
 * decimal, so %.15g is that form with zeros after it, which %g drops, and
 * with the same choice of exponent, since a non-integral value's form
 * has more digits than its exponent).  So 15, 16, then 17 digits are
 * tried, where trying 1 to 17 cost up to 17 conversions (a history
 * document of an hour holds thousands of such numbers).  Subnormals,
 * with fewer digits to them, are tried from 1.
 */
static void format_shortest(char *buf, size_t len, double v)
{
	if (v == trunc(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	for (int prec = fabs(v) >= DBL_MIN ? DBL_DIG : 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

void strbuf_append_json_double(struct strbuf *sb, double v)
{
	char buf[40];

	if (!isfinite(v)) {
		strbuf_append(sb, "null");
		return;
	}
	format_shortest(buf, sizeof(buf), v);
	strbuf_append(sb, buf);
}

void strbuf_append_prom_double(struct strbuf *sb, double v)
{
	char buf[40];

	if (isnan(v))
		strbuf_append(sb, "NaN");
	else if (isinf(v))
		strbuf_append(sb, v > 0 ? "+Inf" : "-Inf");
	else {
		format_shortest(buf, sizeof(buf), v);
		strbuf_append(sb, buf);
	}
}
