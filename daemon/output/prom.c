/*
 * Snapshot to the Prometheus text exposition format (SPEC §5): the
 * daemon's own families (self_metrics.h), then every family the registered
 * collectors declare (metric.h), a family without samples left out, HELP
 * and TYPE included, so absent hardware leaves no trace.  It never touches
 * hardware and writes no state; render.c keeps the formatted text with the
 * snapshot.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "prom.h"
#include "episode.h"
#include "metric.h"
#include "sample_value.h"
#include "self_metrics.h"

static const struct snapshot_cpu *find_cpu(const struct snapshot *s, int cpu)
{
	if (cpu >= 0 && cpu < s->n_cpus && s->cpus[cpu].cpu == cpu)
		return &s->cpus[cpu];
	for (int i = 0; i < s->n_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

/*
 * The labels names (comma-separated) = values (METRIC_LABEL_SEP-separated),
 * an empty value left out, after a comma when more_than_place, else
 * opening the braces.
 */
static void prom_labels(const char *names, const char *values, bool more_than_place,
			struct strbuf *out)
{
	const char *n = names, *v = values;
	bool first = !more_than_place;

	if (first)
		strbuf_append(out, "{");
	while (*n) {
		size_t nlen = strcspn(n, ","), vlen = strcspn(v, METRIC_LABEL_SEP);
		char value[256];

		if (vlen > 0) {
			snprintf(value, sizeof(value), "%.*s", (int)vlen, v);
			strbuf_printf(out, "%s%.*s=\"", first ? "" : ",", (int)nlen, n);
			strbuf_append_prom_label(out, value);
			strbuf_append(out, "\"");
			first = false;
		}
		n += nlen + (n[nlen] == ',');
		v += vlen + (v[vlen] != '\0');
	}
}

/* " # {episode_id=\"ID\"} SECONDS": the exemplar of a throttle family's series (OpenMetrics). */
static void om_exemplar(const struct snapshot *s, const struct metric_sample *v, struct strbuf *out)
{
	const struct snapshot_episode *e;

	if (v->family->signal != METRIC_SIGNAL_THROTTLE_SECONDS)
		return;
	e = episode_of_series(s, v);
	if (e)
		strbuf_printf(out, " # {episode_id=\"%" PRIu64 "\"} %.17g", e->id, e->throttled_s);
}

static void prom_sample(const struct snapshot *s, const struct metric_sample *v, bool om,
			struct strbuf *out)
{
	const struct metric_family *f = v->family;
	const struct snapshot_cpu *c = NULL;

	if (f->scope == METRIC_SCOPE_CORE || f->scope == METRIC_SCOPE_CPU) {
		c = find_cpu(s, v->where);
		if (!c)
			return;
	}
	strbuf_append(out, f->name);
	if (f->scope == METRIC_SCOPE_SOCKET)
		strbuf_printf(out, "{socket=\"%d\"", v->where);
	else if (f->scope == METRIC_SCOPE_CORE)
		strbuf_printf(out, "{socket=\"%d\",core=\"%d\"", c->socket, c->core);
	else if (f->scope == METRIC_SCOPE_CPU)
		strbuf_printf(out, "{socket=\"%d\",core=\"%d\",cpu=\"%d\"", c->socket, c->core, c->cpu);
	if (f->label && v->label_value)
		prom_labels(f->label, v->label_value, f->scope != METRIC_SCOPE_DAEMON, out);
	if (f->scope != METRIC_SCOPE_DAEMON || (f->label && v->label_value))
		strbuf_append(out, "}");
	strbuf_append(out, " ");
	sample_value_append(out, v, false);
	if (om)
		om_exemplar(s, v, out);
	strbuf_append(out, "\n");
}

/*
 * "# TYPE": OpenMetrics names a counter's family without its "_total" (a
 * counter whose name lacks it is "unknown" there).
 */
static void prom_type(const struct metric_family *f, bool om, struct strbuf *out)
{
	size_t len = strlen(f->name);
	bool total = len > 6 && strcmp(f->name + len - 6, "_total") == 0;

	if (!om || f->type != METRIC_COUNTER)
		strbuf_printf(out, "# TYPE %s %s\n", f->name,
			      f->type == METRIC_COUNTER ? "counter" : "gauge");
	else
		strbuf_printf(out, "# TYPE %.*s %s\n", (int)(total ? len - 6 : len), f->name,
			      total ? "counter" : "unknown");
}

/* "# HELP", named as "# TYPE" names the family. */
static void prom_help(const struct metric_family *f, bool om, struct strbuf *out)
{
	size_t len = strlen(f->name);
	bool cut = om && f->type == METRIC_COUNTER && len > 6 &&
		   strcmp(f->name + len - 6, "_total") == 0;

	strbuf_printf(out, "# HELP %.*s ", (int)(cut ? len - 6 : len), f->name);
	strbuf_append_prom_help(out, f->help);
	strbuf_append(out, "\n");
}

/* Whether a family before families[k] has the name of families[k]. */
static bool same_name_before(const struct metric_family *const *families, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (families[j]->name && strcmp(families[j]->name, families[k]->name) == 0)
			return true;
	return false;
}

static void prom_families(const struct snapshot *s, const struct metric_family *const *families,
			  size_t n, bool om, struct strbuf *out)
{
	int n_values;
	const struct metric_sample *values = snapshot_samples(s, &n_values);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];
		size_t mark = out->len;
		bool any = false;

		if (!f->name || f->kind == METRIC_TEXT || same_name_before(families, k))
			continue;
		prom_help(f, om, out);
		prom_type(f, om, out);
		/*
		 * One name is one family in the exposition, even when it is
		 * declared as several (one per label set, say): the first
		 * declaration's HELP and TYPE, then every declaration's samples.
		 */
		for (size_t m = k; m < n; m++) {
			const struct metric_family *g = families[m];

			if (m != k && (!g->name || strcmp(g->name, f->name) != 0))
				continue;
			for (int i = 0; i < n_values; i++)
				if (values[i].family == g && (!g->label || values[i].label_value)) {
					prom_sample(s, &values[i], om, out);
					any = true;
				}
		}
		/* A family without samples is left out, HELP and TYPE included. */
		if (!any && !out->failed) {
			out->len = mark;
			out->buf[mark] = '\0';
		}
	}
}

/*
 * Every registered family with samples in s, in registration order, then
 * declaration order (samples in the order added).  A family two collectors
 * declare is written once; families that share a name (one per label set)
 * are one family: HELP and TYPE of the first, then the samples of each.
 */
static void write_declared(const struct snapshot *s, bool om, struct strbuf *out)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];

	prom_families(s, families, metric_families_declared(families), om, out);
}

int prom_write(const struct snapshot *s, struct strbuf *out)
{
	prom_families(s, self_metric_families, self_metric_n_families, false, out);
	write_declared(s, false, out);
	return out->failed ? -ENOMEM : 0;
}

int prom_write_openmetrics(const struct snapshot *s, struct strbuf *out)
{
	prom_families(s, self_metric_families, self_metric_n_families, true, out);
	write_declared(s, true, out);
	strbuf_append(out, "# EOF\n");
	return out->failed ? -ENOMEM : 0;
}
