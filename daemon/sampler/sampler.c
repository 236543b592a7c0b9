/*
 * The sampler.  It owns the registered collectors and everything they hold (the
 * PMU ledgers, the accumulated totals) and is the only code that touches
 * hardware once the daemon serves.  Each sample builds a fresh snapshot,
 * lets every collector fill its part, derives throttle episodes and
 * publishes the snapshot; readers never wait for it.
 *
 * A reloaded configuration arrives through a one-slot mailbox and is
 * applied between two samples.  A collector whose settings changed is
 * restarted, and the totals it had exported are added to what it counts
 * afterwards, so no exported counter goes backwards across a reload.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector.h"
#include "episode.h"
#include "throttle_families.h"
#include "event.h"
#include "history.h"
#include "hotplug.h"
#include "ledger.h"
#include "log.h"
#include "memory_places.h"
#include "sampler.h"
#include "self_metrics.h"

struct sampler {
	struct conf conf;
	struct hw *hw;
	const struct cpu_info *info;
	const struct cpu_topology *topo;
	struct collector collectors[SNAPSHOT_MAX_COLLECTORS];   /* as collector_registry[] */
	/* Totals a restarted collector adds to its own (the last snapshot before the restart). */
	struct snapshot *carry[SNAPSHOT_MAX_COLLECTORS];
	struct episode_tracker *episodes;
	bool quiet_episodes;           /* episodes are not logged (--once prints them) */
	struct history *history;       /* NULL when out of memory at start */
	struct history_reading *readings; /* [topo->n_sockets], for history_add */
	struct history_place_reading *places; /* [topo->n_sockets][HISTORY_MAX_PLACES], theirs */
	struct snapshot *previous;
	struct hotplug *hotplug;       /* NULL when out of memory at start */
	uint64_t n_samples;
	_Atomic uint64_t progress;

	pthread_t thread;
	bool thread_running;
	pthread_mutex_t lock;          /* guards stop and pending */
	pthread_cond_t wake;
	bool stop;
	struct conf *pending;
};

/* The registered collectors the sampler runs (all of them, up to SNAPSHOT_MAX_COLLECTORS). */
static size_t n_collectors(void)
{
	return collector_registry_n < SNAPSHOT_MAX_COLLECTORS ? collector_registry_n
							    : SNAPSHOT_MAX_COLLECTORS;
}

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Start one collector and log what became of it.  -EINVAL means a refused configuration. */
static int start_collector(struct sampler *s, size_t id)
{
	struct collector *c = &s->collectors[id];
	int r = collector_start(c, collector_registry[id], s->hw, s->info, s->topo, &s->conf);
	char reason[COLLECTOR_TEXT_MAX * 2];

	if (r == -EINVAL)
		return r;
	if (c->engine != ENGINE_NONE)
		log_info("collector %s: %s engine: %s", c->ops->name, engine_kind_name(c->engine),
			 c->engine_why);
	collector_reason(c, reason, sizeof(reason));
	/* Disabled by the configuration, or absent from this CPU: expected, so info. */
	if (c->up)
		log_info("collector %s: up%s%s", c->ops->name, reason[0] ? ", " : "", reason);
	else if (!collector_ops_enabled(c->ops, &s->conf))
		log_info("collector %s: disabled in the configuration", c->ops->name);
	else if (r == -ENOTSUP)
		log_info("collector %s: not applicable: %s", c->ops->name, reason);
	else if (reason[0])
		log_warning("collector %s: off: %s", c->ops->name, reason);
	return 0;
}

/* The history ring, one point per HISTORY_STEP_S; without memory for it the page has no charts. */
static void start_history(struct sampler *s)
{
	int n = s->topo->n_sockets;
	int *ids = calloc((size_t)n + 1, sizeof(*ids));

	s->readings = calloc((size_t)n + 1, sizeof(*s->readings));
	s->places = calloc(((size_t)n + 1) * HISTORY_MAX_PLACES, sizeof(*s->places));
	if (ids && s->readings && s->places) {
		for (int i = 0; i < n; i++)
			ids[i] = s->topo->sockets[i].socket;
		s->history = history_new(n, ids, HISTORY_STEP_S, HISTORY_SPAN_S);
	}
	free(ids);
	if (!s->history)
		log_warning("history: out of memory, the page will show no charts");
}

/* Add the instructions and cycles at where of scope, when both are counted there. */
static void add_ipc(const struct snapshot *snap, enum metric_scope scope, int where,
		    struct history_reading *r)
{
	const struct metric_sample *i = snapshot_find_signal(snap, METRIC_SIGNAL_INSTRUCTIONS, scope,
							     where);
	const struct metric_sample *c = snapshot_find_signal(snap, METRIC_SIGNAL_CYCLES, scope, where);

	if (!i || !c)
		return;
	r->has_ipc = true;
	r->instructions += i->value.u;
	r->cycles += c->value.u;
}

/* One socket's readings of this sample (prev: the one before, or NULL), for the history. */
static void history_reading_of(const struct snapshot *prev, const struct snapshot *snap,
			       const struct snapshot_socket *ss, struct history_reading *r)
{
	const struct metric_sample *v, *clock;

	bool has[THROTTLE_SHARE_COUNT];
	double share[THROTTLE_SHARE_COUNT];

	memset(r, 0, sizeof(*r));
	throttle_worst_shares(prev, snap, ss->socket, has, share);
	r->has_dram_share = has[THROTTLE_SHARE_DRAM];
	r->dram_share = share[THROTTLE_SHARE_DRAM];
	r->has_prochot_share = has[THROTTLE_SHARE_PROCHOT];
	r->prochot_share = share[THROTTLE_SHARE_PROCHOT];
	r->has_frequency_limited_share = has[THROTTLE_SHARE_FREQUENCY_LIMITED];
	r->frequency_limited_share = share[THROTTLE_SHARE_FREQUENCY_LIMITED];
	for (int k = 0; k < ss->n_cores; k++) {
		v = snapshot_find_core_signal(snap, &ss->cores[k], METRIC_SIGNAL_TEMPERATURE);
		if (v && (!r->has_hottest_core || metric_sample_int(v) > r->hottest_core_celsius)) {
			r->has_hottest_core = true;
			r->hottest_core_celsius = (double)metric_sample_int(v);
		}
	}
	v = snapshot_find_signal(snap, METRIC_SIGNAL_TEMPERATURE, METRIC_SCOPE_SOCKET, ss->socket);
	r->has_package = v != NULL;
	r->package_celsius = v ? (double)metric_sample_int(v) : 0;
	if (!v) {
		/* AMD has no package sensor: k10temp's Tctl is the socket's control temperature. */
		v = snapshot_find_labelled_signal(snap, METRIC_SIGNAL_SENSOR_TEMPERATURE,
						  METRIC_SCOPE_SOCKET, ss->socket, "Tctl");
		r->has_package = v != NULL;
		r->package_celsius = v ? v->value.d : 0;
		r->package_sensor = v ? "Tctl" : NULL;
	}
	v = snapshot_find_signal(snap, METRIC_SIGNAL_TJMAX, METRIC_SCOPE_SOCKET, ss->socket);
	r->has_tjmax = v != NULL;
	r->tjmax_celsius = v ? (double)metric_sample_int(v) : 0;
	v = snapshot_find_labelled_signal(snap, METRIC_SIGNAL_EVENT_COUNTS, METRIC_SCOPE_SOCKET,
					  ss->socket, EVENT_DRAM_THERMAL_THROTTLED);
	clock = snapshot_find_signal(snap, METRIC_SIGNAL_CLOCK, METRIC_SCOPE_SOCKET, ss->socket);
	if (v && clock) {
		r->has_dram = true;
		r->dram_throttled_cycles = v->value.u;
		r->clockticks = clock->value.u;
	}
	v = snapshot_find_signal(snap, METRIC_SIGNAL_PROCHOT, METRIC_SCOPE_SOCKET, ss->socket);
	r->has_prochot = v != NULL;
	r->prochot_active = v && v->value.u;
	for (int k = 0; k < ss->n_cores; k++) {
		v = snapshot_find_core_signal(snap, &ss->cores[k], METRIC_SIGNAL_PROCHOT);
		if (v) {
			r->has_prochot = true;
			r->prochot_active |= v->value.u != 0;
		}
	}
	for (int k = 0; k < snap->n_cpus; k++)
		if (snap->cpus[k].socket == ss->socket)
			add_ipc(snap, METRIC_SCOPE_CPU, snap->cpus[k].cpu, r);
	for (int k = 0; k < ss->n_cores && !r->has_ipc; k++)
		if (ss->cores[k].n_cpus > 0)
			add_ipc(snap, METRIC_SCOPE_CORE, ss->cores[k].cpus[0], r);
	if (!r->has_ipc)
		add_ipc(snap, METRIC_SCOPE_SOCKET, ss->socket, r);
}

/* Fold this sample into the history and attach the current document to snap. */
static void add_history(struct sampler *s, struct snapshot *snap, double mono_s)
{
	if (!s->history)
		return;
	for (int i = 0; i < snap->n_sockets && i < s->topo->n_sockets; i++) {
		struct history_place_reading *places = &s->places[(size_t)i * HISTORY_MAX_PLACES];

		history_reading_of(s->previous, snap, &snap->sockets[i], &s->readings[i]);
		s->readings[i].places = places;
		s->readings[i].n_places = memory_places_of(s->previous, snap, snap->sockets[i].socket,
							   places, HISTORY_MAX_PLACES);
	}
	history_add(s->history, mono_s, snap->time, s->readings);
	snap->history = history_acquire(s->history);
}

int sampler_new(const struct conf *conf, struct hw *hw, const struct cpu_info *info,
		const struct cpu_topology *topo, struct sampler **ret_sampler,
		char *err, size_t errlen)
{
	struct sampler *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->conf = *conf;
	s->hw = hw;
	s->info = info;
	s->topo = topo;
	s->episodes = episode_tracker_new(conf->max_episodes);
	if (!s->episodes) {
		free(s);
		return -ENOMEM;
	}
	start_history(s);
	s->hotplug = hotplug_new(hw);
	pthread_mutex_init(&s->lock, NULL);
	{
		pthread_condattr_t attr;

		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&s->wake, &attr);
		pthread_condattr_destroy(&attr);
	}
	for (size_t id = 0; id < n_collectors(); id++) {
		if (start_collector(s, id) == -EINVAL) {
			snprintf(err, errlen, "collector %s: %s", collector_registry[id]->name,
				 s->collectors[id].status.why_not);
			sampler_free(s);
			return -EINVAL;
		}
	}
	*ret_sampler = s;
	return 0;
}

/* Add the totals each restarted collector had exported before its restart. */
static void carry_totals(struct sampler *s, struct snapshot *snap)
{
	for (size_t id = 0; id < n_collectors(); id++) {
		const struct collector_ops *ops = collector_registry[id];
		struct snapshot_collector *now;
		const struct snapshot_collector *then;

		if (!s->carry[id])
			continue;
		if (snapshot_add_sample_totals(snap, s->carry[id], ops->families, ops->n_families,
					       collector_source(ops), 1) < 0)
			log_warning("sample: out of memory, a carried total is left out");
		now = snapshot_add_collector(snap, ops->name);
		then = snapshot_find_collector(s->carry[id], ops->name);
		if (now && then)
			now->errors += then->errors;
	}
}

static void log_episode(void *arg, const struct episode_change *c)
{
	char place[96], what[128];
	struct log_episode e = {
		.started = c->started, .kind = c->episode.kind, .place = place, .what = what,
		.socket = c->episode.socket, .die = c->episode.die, .channel = c->episode.channel,
		.core = c->episode.core, .start = c->episode.start, .duration_s = c->duration_s,
	};

	(void)arg;
	episode_describe(&c->episode, place, sizeof(place), what, sizeof(what));
	log_episode_change(&e);
}

void sampler_quiet_episodes(struct sampler *s)
{
	s->quiet_episodes = true;
}

/* The snapshot's journal field for the ledger's journal state. */
static int journal_of(enum ledger_journal j)
{
	if (j == LEDGER_JOURNAL_UP)
		return SNAPSHOT_JOURNAL_UP;
	return j == LEDGER_JOURNAL_UNSET ? 0 : SNAPSHOT_JOURNAL_DOWN;
}

/* Whether state (snapshot_collector_state) is one a running collector moves between. */
static bool running_state(const char *state)
{
	return !strcmp(state, "up") || !strcmp(state, "partial") || !strcmp(state, "down");
}

/*
 * Say which collectors changed state since the sample before: a warning,
 * with the reason, when one stops counting on some or all of its units
 * (partial, down: a CPU back online that cannot be opened again, a box
 * another agent froze), a notice when it counts on all of them again.
 * What a collector is at start, and after a reload restarts it, is said
 * by start_collector.
 */
static void log_state_changes(const struct snapshot *before, const struct snapshot *now)
{
	for (int i = 0; before && i < now->n_collectors && i < before->n_collectors; i++) {
		const struct snapshot_collector *c = &now->collectors[i];
		const char *was = snapshot_collector_state(&before->collectors[i]);
		const char *is = snapshot_collector_state(c);

		if (!strcmp(was, is) || !running_state(was) || !running_state(is))
			continue;
		if (c->up)
			log_notice("collector %s: up again", c->name);
		else
			log_warning("collector %s: %s: %s", c->name, is, c->reason);
	}
}

struct snapshot *sampler_sample(struct sampler *s)
{
	double t0 = monotonic_s();
	struct snapshot *snap = snapshot_new(s->topo, s->info);

	if (!snap)
		return NULL;
	/* As many values as the sample before, and a little room: no regrowth, no unused room. */
	if (s->previous)
		snapshot_reserve_values(snap, s->previous->n_values + s->previous->n_values / 16 + 16);
	snap->time = realtime_s();
	snap->mono = (double)hw_now_ns(s->hw) / 1e9;
	snap->interval_s = s->conf.interval_s;
	hotplug_check(s->hotplug);   /* first: registers it puts back are free for the collectors */
	/* Online now, where the topology says what it was at start. */
	for (int i = 0; i < snap->n_cpus; i++) {
		int online = hotplug_cpu_online(s->hotplug, snap->cpus[i].cpu);

		if (online >= 0)
			snap->cpus[i].online = online;
	}
	for (size_t id = 0; id < n_collectors(); id++)
		collector_sample(&s->collectors[id], snap);
	carry_totals(s, snap);
	snap->samples = ++s->n_samples;
	if (snap->is_short_of_memory)
		log_warning("sample %llu: out of memory, some events are left out of it",
			    (unsigned long long)snap->samples);
	snap->last_sample_duration_s = monotonic_s() - t0;
	snap->cpus_went_offline = hotplug_offline_count(s->hotplug);
	snap->cpus_came_online = hotplug_online_count(s->hotplug);
	snap->journal = journal_of(ledger_journal_state());
	self_metrics_add(snap);
	if (episode_update_from_snapshot(s->episodes, s->previous, snap,
					 s->quiet_episodes ? NULL : log_episode, s) < 0)
		log_warning("episodes: out of memory, this sample lists none");
	add_history(s, snap, snap->mono);
	log_state_changes(s->previous, snap);

	/* One reference stays with us as previous, one goes to the caller, one to publish. */
	atomic_fetch_add(&snap->refs, 2);
	snapshot_release(s->previous);
	s->previous = snap;
	snapshot_publish(snap);
	atomic_fetch_add(&s->progress, 1);
	return snap;
}

/* Whether collector id must restart to apply new. */
static bool collector_conf_changed(size_t id, const struct conf *old,
				   const struct conf *new)
{
	return old->interval_s != new->interval_s ||
	       collector_ops_conf_changed(collector_registry[id], old, new);
}

static void apply_conf(struct sampler *s, const struct conf *new)
{
	bool restart[SNAPSHOT_MAX_COLLECTORS];

	for (size_t id = 0; id < n_collectors(); id++) {
		restart[id] = collector_conf_changed(id, &s->conf, new);
		if (restart[id])
			collector_stop(&s->collectors[id]);
	}
	s->conf = *new;
	for (size_t id = 0; id < n_collectors(); id++) {
		if (!restart[id])
			continue;
		if (s->previous) {
			atomic_fetch_add(&s->previous->refs, 1);
			snapshot_release(s->carry[id]);
			s->carry[id] = s->previous;
		}
		if (start_collector(s, id) == -EINVAL)
			log_error("collector %s: new configuration refused: %s, collector off",
				  collector_registry[id]->name, s->collectors[id].status.why_not);
	}
	log_notice("configuration applied");
}

static void *sampler_thread(void *arg)
{
	struct sampler *s = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct conf *pending = s->pending;
		double interval_s;
		long ns;

		s->pending = NULL;
		pthread_mutex_unlock(&s->lock);
		if (pending) {
			apply_conf(s, pending);
			free(pending);
		}
		snapshot_release(sampler_sample(s));

		/* Absolute schedule, so the period does not drift; skip ticks already missed. */
		interval_s = s->conf.interval_s;
		ns = next.tv_nsec + (long)((interval_s - (double)(time_t)interval_s) * 1e9);
		next.tv_sec += (time_t)interval_s + ns / 1000000000L;
		next.tv_nsec = ns % 1000000000L;
		{
			struct timespec now;

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec > next.tv_sec ||
			    (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
				next = now;
		}
		pthread_mutex_lock(&s->lock);
		while (!s->stop && !s->pending &&
		       pthread_cond_timedwait(&s->wake, &s->lock, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

int sampler_start(struct sampler *s)
{
	int r = pthread_create(&s->thread, NULL, sampler_thread, s);

	if (r)
		return -r;
	s->thread_running = true;
	return 0;
}

void sampler_stop(struct sampler *s)
{
	if (!s->thread_running)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->thread_running = false;
}

bool sampler_counts_through_perf(const struct sampler *s)
{
	for (size_t id = 0; id < n_collectors(); id++)
		if (s->collectors[id].started && s->collectors[id].engine == ENGINE_PERF)
			return true;
	return false;
}

uint64_t sampler_progress(const struct sampler *s)
{
	return atomic_load(&s->progress);
}

void sampler_post_conf(struct sampler *s, const struct conf *conf)
{
	struct conf *copy = malloc(sizeof(*copy));

	if (!copy) {
		log_error("reload: out of memory, keeping the running configuration");
		return;
	}
	*copy = *conf;
	pthread_mutex_lock(&s->lock);
	free(s->pending);
	s->pending = copy;
	/* Wake the thread early only if it is not running; otherwise it applies at the next tick. */
	pthread_mutex_unlock(&s->lock);
	if (!s->thread_running) {
		s->pending = NULL;
		apply_conf(s, copy);
		free(copy);
	}
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	/* Reverse order of start, so each collector restores what it changed. */
	for (size_t id = n_collectors(); id-- > 0;)
		collector_stop(&s->collectors[id]);
	for (size_t id = 0; id < n_collectors(); id++)
		snapshot_release(s->carry[id]);
	snapshot_release(s->previous);
	episode_tracker_free(s->episodes);
	history_free(s->history);
	hotplug_free(s->hotplug);
	free(s->readings);
	free(s->places);
	free(s->pending);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
