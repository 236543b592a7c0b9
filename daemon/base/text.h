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

#endif
