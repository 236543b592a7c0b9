/*
 * The error sentence: see err.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

const char *err_hint_find(const struct err_hint *rows, size_t n, int err, unsigned op)
{
	int e = err < 0 ? -err : err;

	for (size_t i = 0; i < n; i++)
		if (rows[i].err == e && (rows[i].ops & ERR_OP(op)))
			return rows[i].hint;
	return strerror(e);
}
