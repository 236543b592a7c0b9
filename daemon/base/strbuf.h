/*
 * A growable text buffer with the escaping rules of the Prometheus text
 * format and of JSON.  Allocation failure is sticky: once an append fails,
 * the buffer is marked failed and further appends do nothing, so callers
 * check once at the end.
 */
#ifndef UNCORED_STRBUF_H
#define UNCORED_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;         /* always NUL-terminated when not NULL */
	size_t len;
	size_t cap;
	bool failed;       /* an allocation failed */
};

/* An empty buffer; no allocation until the first append. */
void strbuf_init(struct strbuf *sb);

/* Free the buffer and reset it to empty. */
void strbuf_free(struct strbuf *sb);

/* Give the caller the malloc'd text (NULL if failed or empty) and reset sb. */
char *strbuf_steal(struct strbuf *sb, size_t *ret_len);

void strbuf_append(struct strbuf *sb, const char *s);
void strbuf_append_len(struct strbuf *sb, const char *s, size_t len);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append s escaped as a Prometheus label value (\\, \", \n). */
void strbuf_append_prom_label(struct strbuf *sb, const char *s);

/* Append s escaped as a Prometheus HELP text (\\, \n). */
void strbuf_append_prom_help(struct strbuf *sb, const char *s);

/* Append s as a quoted JSON string (escapes ", \\ and control characters). */
void strbuf_append_json_string(struct strbuf *sb, const char *s);

/*
 * Append a double as JSON: finite values in the shortest form that reads
 * back as the same double (integral values below 2^53 without exponent or
 * fraction), NaN and infinities as null.
 */
void strbuf_append_json_double(struct strbuf *sb, double v);

/*
 * Append a double as a Prometheus sample value: the same shortest
 * round-trip form as strbuf_append_json_double, NaN as "NaN" and the
 * infinities as "+Inf" / "-Inf".
 */
void strbuf_append_prom_double(struct strbuf *sb, double v);

#endif
