/*
 * One value of the sample API as Prometheus or JSON writes it: the number,
 * the boolean, or (JSON only) the text.  Shared by prom.c and json.c so
 * that both say the same value the same way.
 */
#include <inttypes.h>

#include "sample_value.h"

void sample_value_append(struct strbuf *out, const struct metric_sample *v, bool json)
{
	switch (v->family->kind) {
	case METRIC_UINT:
		strbuf_printf(out, "%" PRIu64, v->value.u);
		break;
	case METRIC_INT:
		strbuf_printf(out, "%" PRId64, metric_sample_int(v));
		break;
	case METRIC_BOOL:
		strbuf_append(out, json ? (v->value.u ? "true" : "false") : (v->value.u ? "1" : "0"));
		break;
	case METRIC_DOUBLE:
		if (json)
			strbuf_append_json_double(out, v->value.d);
		else
			strbuf_append_prom_double(out, v->value.d);
		break;
	case METRIC_TEXT:
		strbuf_append_json_string(out, v->value.text ? v->value.text : "");
		break;
	}
}
