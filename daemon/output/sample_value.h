/*
 * A value of the sample API (metric.h) as text, in the syntax of the
 * Prometheus exposition or of JSON.  Pure.
 */
#ifndef UNCORED_SAMPLE_VALUE_H
#define UNCORED_SAMPLE_VALUE_H

#include <stdbool.h>

#include "metric.h"
#include "strbuf.h"

/*
 * Append v by its family's kind: an integer as such, a boolean as 1/0
 * (Prometheus) or true/false (json), a double in the format's syntax, a
 * text as a JSON string (the Prometheus writer never asks for one).
 */
void sample_value_append(struct strbuf *out, const struct metric_sample *v, bool json);

#endif
