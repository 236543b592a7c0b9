/*
 * The generic side of a collector: setting up its shared context, running
 * start/sample/stop in the right states, and copying its status into each
 * snapshot.  What a collector reads and how it claims hardware is the
 * collector's own business (col_*.c); this file knows nothing of it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "place_labels.h"

/*
 * SPEC §5 calls this uncored_counter_conflicts_total, but promtool's lint
 * refuses any name containing "_counter_", and the exposition must pass it
 * with no complaint; "pmu" names the same thing.
 */
const struct metric_family collector_pmu_conflicts = {
	.name = "uncored_pmu_conflicts_total",
	.help = "Times a PMU counter of uncored was found reprogrammed by someone else.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "collector,socket,core,cpu",
};

const struct metric_family collector_pmu_resets = {
	.name = "uncored_pmu_resets_total",
	.help = "Intervals a PMU counter of uncored lost: its counter was found cleared or "
		"disabled by someone else, or the kernel detached its group when its CPU went "
		"offline and back; the counter was taken again.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_UINT,
	.label = "collector,socket,core,cpu",
};

/* Add n of c at the place (socket, core, cpu; -1: no label) to family (its labels as above). */
static int add_placed(struct collector *c, struct snapshot *s, const struct metric_family *family,
		      int socket, int core, int cpu, uint64_t n)
{
	char buf[96];
	const char *labels = place_label(&c->place_labels, c->ops->name,
					 (const int[3]){ socket, core, cpu }, buf, sizeof(buf));

	return snapshot_add_sample(s, family, cpu >= 0 ? cpu : socket, labels, n, 0);
}

int collector_add_conflicts(struct collector *c, struct snapshot *s, int socket, int core, int cpu,
			    uint64_t n)
{
	return add_placed(c, s, &collector_pmu_conflicts, socket, core, cpu, n);
}

int collector_add_resets(struct collector *c, struct snapshot *s, int socket, int core, int cpu,
			 uint64_t n)
{
	return add_placed(c, s, &collector_pmu_resets, socket, core, cpu, n);
}

const struct metric_family collector_pmu_multiplexing = {
	.name = "uncored_pmu_multiplexing_ratio",
	.help = "Perf engine: the smallest fraction of the last interval that one of the box's "
		"uncore groups was on its counters (time running over time enabled); below 1 the "
		"kernel took turns with another user and the counts are scaled by its inverse.",
	.type = METRIC_GAUGE, .unit = "ratio", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_DOUBLE,
	.label = "collector,socket,die,box",
};

int collector_add_multiplexing(struct collector *c, struct snapshot *s, int socket, int die,
			       int box, double ratio)
{
	char buf[96];
	const char *labels = place_label(&c->place_labels, c->ops->name,
					 (const int[3]){ socket, die, box }, buf, sizeof(buf));

	return snapshot_add_sample(s, &collector_pmu_multiplexing, socket, labels, 0, ratio);
}

int collector_source(const struct collector_ops *ops)
{
	for (size_t i = 0; i < collector_registry_n; i++)
		if (collector_registry[i] == ops)
			return (int)i + 1;
	return 0;
}

static bool is_enabled(const struct collector *c)
{
	return c->conf && collector_ops_enabled(c->ops, c->conf);
}

/* Why start failed, when the collector did not say. */
static void explain_failure(struct collector *c, int err)
{
	struct collector_status *st = &c->status;

	if (st->why_not[0])
		return;
	if (st->n_degradations > 0)
		collector_reason(c, st->why_not, sizeof(st->why_not));
	else
		snprintf(st->why_not, sizeof(st->why_not), "%s collector failed to start: %s",
			 c->ops->name, strerror(-err));
}

int collector_start(struct collector *c, const struct collector_ops *ops, struct hw *hw,
		    const struct cpu_info *info, const struct cpu_topology *topo,
		    const struct conf *conf)
{
	int err;

	*c = (struct collector){ .ops = ops, .hw = hw, .info = info, .topo = topo, .conf = conf };
	if (ops->throttle_signals && info && conf)
		c->throttle_signals = ops->throttle_signals(info, conf);
	err = ops->start(c);
	c->up = err == 0;
	c->started = err == 0;
	/* A disabled collector also says -ENOTSUP; only an enabled one can lack the facility. */
	c->not_applicable = err == -ENOTSUP && is_enabled(c);
	if (err) {
		/* A collector that does not run has nothing degraded, only a reason. */
		explain_failure(c, err);
		c->status.n_degradations = 0;
		c->status.n_unlisted = 0;
	}
	return err;
}

void collector_sample(struct collector *c, struct snapshot *s)
{
	struct snapshot_collector *sc;
	char reason[COLLECTOR_TEXT_MAX * (COLLECTOR_MAX_DEGRADATIONS + 1)];

	if (!c->ops)
		return;
	if (c->started) {
		s->source = collector_source(c->ops);
		c->ops->sample(c, s);
		s->source = 0;
	}
	sc = snapshot_add_collector(s, c->ops->name);
	if (!sc)
		return;
	sc->enabled = is_enabled(c);
	sc->up = c->up;
	sc->units = c->units;
	sc->units_counting = c->units_counting;
	sc->not_applicable = c->not_applicable;
	sc->throttle_signals = c->throttle_signals;
	sc->reason = snapshot_intern(s, collector_reason(c, reason, sizeof(reason)));
	if (!sc->reason)
		sc->reason = "";
	sc->errors = c->errors;
	sc->engine = engine_kind_name(c->engine);
	sc->engine_why = sc->engine ? snapshot_intern(s, c->engine_why) : NULL;
	if (sc->engine && !sc->engine_why)
		sc->engine_why = "";
}

void collector_units(struct collector *c, unsigned n, unsigned counting)
{
	c->units = n;
	c->units_counting = counting < n ? counting : n;
	c->up = n > 0 && counting >= n;
}

void collector_stop(struct collector *c)
{
	if (!c->ops)
		return;
	c->ops->stop(c);
	place_labels_free(c->place_labels);
	c->place_labels = NULL;
	c->started = false;
	c->up = false;
	c->ops = NULL;
}

void collector_refuse(struct collector *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->status.why_not, sizeof(c->status.why_not), fmt, ap);
	va_end(ap);
}

bool collector_refuse_disabled(struct collector *c)
{
	if (is_enabled(c))
		return false;
	collector_refuse(c, "disabled in the configuration");
	return true;
}

static struct collector_degradation *find_degradation(struct collector_status *st, const char *key)
{
	for (int i = 0; i < st->n_degradations; i++)
		if (strcmp(st->degradations[i].key, key) == 0)
			return &st->degradations[i];
	return NULL;
}

static void degrade(struct collector *c, const char *key, const char *fmt, va_list ap)
{
	struct collector_status *st = &c->status;
	struct collector_degradation *d = find_degradation(st, key);

	if (!d) {
		if (st->n_degradations == COLLECTOR_MAX_DEGRADATIONS) {
			st->n_unlisted++;
			return;
		}
		d = &st->degradations[st->n_degradations++];
		snprintf(d->key, sizeof(d->key), "%s", key);
	}
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
}

void collector_degrade(struct collector *c, const char *key, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	degrade(c, key, fmt, ap);
	va_end(ap);
}

void collector_recover(struct collector *c, const char *key)
{
	struct collector_status *st = &c->status;
	struct collector_degradation *d = find_degradation(st, key);

	if (!d)
		return;
	memmove(d, d + 1, (size_t)(st->degradations + st->n_degradations - (d + 1)) * sizeof(*d));
	st->n_degradations--;
}

void collector_note(struct collector *c, const char *fmt, ...)
{
	char text[COLLECTOR_TEXT_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	collector_degrade(c, text, "%s", text);
}

/* Append part to buf (used bytes *used), "; "-separated; truncated at len. */
static void append_part(char *buf, size_t len, size_t *used, const char *part)
{
	int n;

	if (*used >= len)
		return;
	n = snprintf(buf + *used, len - *used, "%s%s", *used ? "; " : "", part);
	if (n > 0)
		*used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

const char *collector_reason(const struct collector *c, char *buf, size_t len)
{
	const struct collector_status *st = &c->status;
	size_t used = 0;
	char more[48];

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (st->why_not[0])
		append_part(buf, len, &used, st->why_not);
	for (int i = 0; i < st->n_degradations; i++)
		append_part(buf, len, &used, st->degradations[i].text);
	if (st->n_unlisted) {
		snprintf(more, sizeof(more), "%u more", st->n_unlisted);
		append_part(buf, len, &used, more);
	}
	return buf;
}
