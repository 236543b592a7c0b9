/*
 * What engine.h offers beside its calls: the engines' names and the
 * operator's text for a reading.  It knows no engine's implementation.
 */
#include <stdio.h>

#include "engine.h"

const char *engine_kind_name(enum engine_kind kind)
{
	switch (kind) {
	case ENGINE_MSR:
		return "msr";
	case ENGINE_PERF:
		return "perf";
	default:
		return NULL;
	}
}

const char *engine_reading_reason(const struct engine *e, const struct engine_reading *r,
				  char *buf, size_t len)
{
	const char *why = r->reason ? r->reason : "not counted";

	if (r->state != ENGINE_FAILED || !r->err)
		return why;
	snprintf(buf, len, "%s: %s", why, e->ops->hint(e->ctx, r->err, r->fault));
	return buf;
}
