/*
 * Small text helpers shared by the layers that read the kernel's files.
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
 * Parse the decimal digits at s as a number in [0, max]; *ret_end is set
 * to the first byte after them.  0, or -EINVAL when s starts with no digit
 * or the number is above max.
 */
int text_parse_dec(const char *s, long max, long *ret_value, const char **ret_end);

#endif
