/*
 * The error sentence: see err.h.
 */
#include <stdarg.h>
#include <stdio.h>

#include "err.h"

void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
