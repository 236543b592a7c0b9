/*
 * Small text helpers shared by the layers: what the kernel's files hold,
 * and text others chose, made safe to show in the log.
 */
#ifndef UNCORED_TEXT_H
#define UNCORED_TEXT_H

#include <stddef.h>

/*
 * Copy text into out (outlen bytes, always terminated) for an error
 * message: cut at outlen, trailing whitespace dropped, unprintable bytes
 * shown as '?'.
 */
void text_quote(const char *text, char *out, size_t outlen);

/*
 * Write the len bytes at in (NUL bytes included) to out (outlen bytes,
 * always terminated) for a line of the log or of the terminal: each
 * control character (below 0x20, and 0x7f), each byte outside ASCII and
 * the backslash as \xNN, so that text another party chose can neither
 * end the line, nor start one of its own, nor send a terminal an escape
 * sequence, and a "\x" it wrote reads as "\x5cx".  Stops before the first
 * byte whose form does not fit (4 * len + 1 bytes always hold all).
 * Returns the number of bytes of in written.
 */
size_t text_escape(const char *in, size_t len, char *out, size_t outlen);

/*
 * Parse the decimal digits at s as a number in [0, max]; *ret_end is set
 * to the first byte after them.  0, or -EINVAL when s starts with no digit
 * or the number is above max.
 */
int text_parse_dec(const char *s, long max, long *ret_value, const char **ret_end);

#endif
