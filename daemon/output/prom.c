/*
 * Snapshot to the Prometheus text exposition format (SPEC §5): the
 * daemon's own families (self_metrics.h), then every family the registered
 * collectors declare (metric.h), a family without samples left out, HELP
 * and TYPE included, so absent hardware leaves no trace.  It never touches
 * hardware and writes no state; render.c keeps the formatted text with the
 * snapshot.
 */
#include <errno.h>

#include "prom.h"
#include "metric.h"
#include "self_metrics.h"

int prom_write(const struct snapshot *s, struct strbuf *out)
{
	metric_write_prom_families(s, self_metric_families, self_metric_n_families, out);
	metric_write_prom(s, out);
	return out->failed ? -ENOMEM : 0;
}
