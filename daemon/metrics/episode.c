/*
 * Throttle episode tracking.  The tracker owns two tables: the state of
 * every place it has been told about (kind, socket, die, channel, core →
 * active since when), and a bounded list of episodes in start order,
 * ongoing ones with end = 0.  When the list is full the oldest finished
 * episode makes room, an ongoing one only when nothing has finished.  It
 * does no logging and no I/O; the caller gets the changes and decides what
 * to say.
 *
 * Each sample is three passes: every bit, event and series marks its
 * place (told its state, and whether the condition held), then each place
 * marked (or, for a family's, left without a series) starts, goes on or
 * ends its episode, then the series that counted join their episode's
 * parts, so that a start is logged with what took part in it.
 *
 * Durations are measured on the monotonic clock: a wall-clock step (NTP,
 * an operator) must not give an episode a negative or inflated length.
 * The wall-clock stamps are for display: an episode's end stamp is its
 * start stamp plus its monotonic duration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "episode.h"
#include "grow.h"
#include "event.h"
#include "metric.h"
#include "throttle_families.h"

/* How a place changed in this sample, for the log that follows. */
enum place_change { PLACE_SAME, PLACE_STARTED, PLACE_ENDED };

struct place {
	const char *kind;                         /* static */
	const struct metric_family *family;       /* the condition's family, or NULL */
	int socket, die, channel, core;
	bool active;           /* an episode is open */
	bool fed;              /* told its state in this sample */
	bool hit;              /* its condition held in this sample */
	enum place_change change;
	double sample_s;       /* the most seconds one of its series counted in this sample */
	uint64_t id;           /* the ongoing (or last) episode's */
	double start;          /* wall clock, for display */
	double mono_start;     /* monotonic clock, for the duration */
	double mono_last;      /* the newest sample that saw its condition */
};

static double monotonic_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double (*episode_monotonic_clock)(void) = monotonic_now;

struct episode_tracker {
	size_t max_episodes;
	size_t n_episodes;
	struct snapshot_episode *episodes;   /* oldest start first */
	size_t n_places, cap_places;
	struct place *places;
	uint64_t last_id;
};

static const char *const kind_names[EPISODE_KIND_COUNT] = {
	[EPISODE_DRAM_THERMAL_THROTTLING] = "dram_thermal_throttling",
	[EPISODE_PROCHOT] = "prochot",
	[EPISODE_CORE_THERMAL_THROTTLING] = "core_thermal_throttling",
	[EPISODE_PACKAGE_THERMAL_THROTTLING] = "package_thermal_throttling",
};

const char *episode_kind_name(enum episode_kind kind)
{
	if ((unsigned)kind >= EPISODE_KIND_COUNT)
		return "unknown";
	return kind_names[kind];
}

struct episode_tracker *episode_tracker_new(size_t max_episodes)
{
	struct episode_tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max_episodes = max_episodes;
	if (max_episodes > 0) {
		t->episodes = calloc(max_episodes, sizeof(*t->episodes));
		if (!t->episodes) {
			free(t);
			return NULL;
		}
	}
	return t;
}

void episode_tracker_free(struct episode_tracker *t)
{
	if (!t)
		return;
	free(t->episodes);
	free(t->places);
	free(t);
}

/* The place of key (kind, socket, die, channel, core), added inactive when new. */
static struct place *find_place(struct episode_tracker *t, const struct place *key)
{
	struct place *p;

	for (size_t i = 0; i < t->n_places; i++) {
		p = &t->places[i];
		if (p->kind == key->kind && p->socket == key->socket && p->die == key->die &&
		    p->channel == key->channel && p->core == key->core)
			return p;
	}
	p = grow_array(t->places, &t->cap_places, t->n_places + 1, sizeof(*p), 16);
	if (!p)
		return NULL;
	t->places = p;
	p = &t->places[t->n_places++];
	*p = *key;
	p->active = false;
	return p;
}

/* Append e, evicting the oldest finished episode (or the oldest) when full. */
static void list_add(struct episode_tracker *t, const struct snapshot_episode *e)
{
	size_t victim = 0;

	if (t->max_episodes == 0)
		return;
	if (t->n_episodes == t->max_episodes) {
		for (size_t i = 0; i < t->n_episodes; i++) {
			if (t->episodes[i].end != 0) {
				victim = i;
				break;
			}
		}
		memmove(&t->episodes[victim], &t->episodes[victim + 1],
			(t->n_episodes - victim - 1) * sizeof(*t->episodes));
		t->n_episodes--;
	}
	t->episodes[t->n_episodes++] = *e;
}

/* The list entry of the place's ongoing (or last) episode, or NULL when it was evicted. */
static struct snapshot_episode *list_find(struct episode_tracker *t, const struct place *p)
{
	for (size_t i = t->n_episodes; i-- > 0;) {
		if (t->episodes[i].id == p->id)
			return &t->episodes[i];
	}
	return NULL;
}

/* A new episode of place p, from its start. */
static struct snapshot_episode new_episode(const struct place *p)
{
	return (struct snapshot_episode){
		.kind = p->kind, .id = p->id, .socket = p->socket, .core = p->core,
		.die = p->die, .channel = p->channel, .start = p->start,
		.mono_start = p->mono_start, .family = p->family,
	};
}

/*
 * Place p's condition held (hit) or not in the sample at wall-clock time
 * now and monotonic time mono: an episode starts, goes on to mono, or ends
 * at the newest sample that saw it.  1 and *ret_change when one started or
 * ended, else 0.
 */
static int set_active(struct episode_tracker *t, struct place *p, bool hit, double now,
		      double mono, struct episode_change *ret_change)
{
	struct episode_change c = { 0 };
	struct snapshot_episode *e;

	if (hit && p->active) {
		p->mono_last = mono;
		e = list_find(t, p);
		if (e)
			e->running_s = mono > p->mono_start ? mono - p->mono_start : 0;
		return 0;
	}
	if (hit == p->active)
		return 0;
	if (hit) {
		p->id = ++t->last_id;
		p->start = now;
		p->mono_start = p->mono_last = mono;
		c.started = true;
		c.episode = new_episode(p);
		list_add(t, &c.episode);
	} else {
		c.duration_s = p->mono_last > p->mono_start ? p->mono_last - p->mono_start : 0;
		e = list_find(t, p);
		if (!e) {
			c.episode = new_episode(p);
			e = &c.episode;
		}
		e->end = p->start + c.duration_s;
		e->mono_end = p->mono_start + c.duration_s;
		e->running_s = c.duration_s;
		c.episode = *e;
	}
	p->active = hit;
	if (ret_change)
		*ret_change = c;
	return 1;
}

/* episode_update() with the monotonic time mono beside the wall-clock time now. */
static int update_at(struct episode_tracker *t, enum episode_kind kind, int socket, int core,
		     bool active, double now, double mono, struct episode_change *ret_change)
{
	struct place key = { .socket = socket, .die = -1, .channel = -1, .core = core };
	struct place *p;

	if ((unsigned)kind >= EPISODE_KIND_COUNT)
		return -EINVAL;
	key.kind = kind_names[kind];
	p = find_place(t, &key);
	if (!p)
		return -ENOMEM;
	return set_active(t, p, active, now, mono, ret_change);
}

int episode_update(struct episode_tracker *t, enum episode_kind kind, int socket, int core,
		   bool active, double now, struct episode_change *ret_change)
{
	return update_at(t, kind, socket, core, active, now, now, ret_change);
}

/* The count of the built-in event name on socket of s, or NULL when it is not counted. */
static const struct metric_sample *socket_event(const struct snapshot *s, int socket,
						const char *name)
{
	return s ? snapshot_find_labelled_signal(s, METRIC_SIGNAL_EVENT_COUNTS, METRIC_SCOPE_SOCKET,
						 socket, name) : NULL;
}

/* True when the event name of the socket grew between prev and cur; absent means no signal. */
static bool socket_event_grew(const struct snapshot *prev, const struct snapshot *cur, int socket,
			      const char *name)
{
	const struct metric_sample *a = socket_event(prev, socket, name);
	const struct metric_sample *b = socket_event(cur, socket, name);

	return a && b && b->value.u > a->value.u;
}

static bool any_core_prochot(const struct snapshot *s, const struct snapshot_socket *sock)
{
	for (int i = 0; i < sock->n_cores; i++) {
		const struct metric_sample *v = snapshot_find_core_signal(s, &sock->cores[i], METRIC_SIGNAL_PROCHOT);

		if (v && v->value.u)
			return true;
	}
	return false;
}

/* Tell the place of a thermal bit or event (kind at socket, core) its state in this sample. */
static int mark(struct episode_tracker *t, enum episode_kind kind, int socket, int core,
		bool active)
{
	const struct place key = { .kind = kind_names[kind], .socket = socket, .die = -1,
				   .channel = -1, .core = core };
	struct place *p = find_place(t, &key);

	if (!p)
		return -ENOMEM;
	p->fed = true;
	p->hit = p->hit || active;
	return 0;
}

static int mark_socket(struct episode_tracker *t, const struct snapshot *s,
		       const struct snapshot *prev, const struct snapshot_socket *sock)
{
	bool dram = socket_event_grew(prev, s, sock->socket, EVENT_DRAM_THERMAL_THROTTLED);
	bool prochot = any_core_prochot(s, sock) ||
		       socket_event_grew(prev, s, sock->socket, EVENT_PROCHOT_ASSERTIONS);
	const struct metric_sample *pkg = snapshot_find_signal(s, METRIC_SIGNAL_THROTTLING,
							       METRIC_SCOPE_SOCKET, sock->socket);
	int r;

	/*
	 * Where the family of the same event is measured, its series is the
	 * episode: the status bits would open a second one for the same
	 * assertion (prochot beside prochot_seconds).
	 */
	bool prochot_family = snapshot_has_value(s, &throttle_prochot_seconds, sock->socket) ||
			      snapshot_has_value(s, &throttle_prochot_die_seconds, sock->socket);

	r = snapshot_has_value(s, &throttle_dram_socket_seconds, sock->socket) ? 0 :
	    mark(t, EPISODE_DRAM_THERMAL_THROTTLING, sock->socket, -1, dram);
	if (r == 0 && !prochot_family)
		r = mark(t, EPISODE_PROCHOT, sock->socket, -1, prochot);
	if (r == 0 && pkg)
		r = mark(t, EPISODE_PACKAGE_THERMAL_THROTTLING, sock->socket, -1,
			 pkg->value.u != 0);
	for (int i = 0; r == 0 && i < sock->n_cores; i++) {
		const struct snapshot_core *c = &sock->cores[i];
		const struct metric_sample *thr = snapshot_find_core_signal(s, c, METRIC_SIGNAL_THROTTLING);

		if (thr)
			r = mark(t, EPISODE_CORE_THERMAL_THROTTLING, sock->socket, c->core,
				 thr->value.u != 0);
	}
	return r;
}

/* The hottest temperature s read on socket: its package's and its cores'. */
static bool socket_peak(const struct snapshot *s, int socket, int *ret_celsius)
{
	const struct metric_sample *v = snapshot_find_signal(s, METRIC_SIGNAL_TEMPERATURE,
							     METRIC_SCOPE_SOCKET, socket);
	bool found = v != NULL;
	int peak = v ? (int)metric_sample_int(v) : 0;

	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *sock = &s->sockets[i];

		for (int j = 0; sock->socket == socket && j < sock->n_cores; j++) {
			v = snapshot_find_core_signal(s, &sock->cores[j], METRIC_SIGNAL_TEMPERATURE);
			if (v && (!found || metric_sample_int(v) > peak))
				peak = (int)metric_sample_int(v);
			found = found || v;
		}
	}
	*ret_celsius = peak;
	return found;
}

/*
 * Add one sample's seconds (the most one series of p counted), the time
 * since the previous sample (the configured interval for the first) and
 * the temperature to the ongoing episode of p.
 */
static void account(struct episode_tracker *t, const struct place *p, const struct snapshot *prev,
		    const struct snapshot *s)
{
	double span = prev && s->mono > prev->mono ? s->mono - prev->mono : s->interval_s;

	struct snapshot_episode *e = list_find(t, p);
	int celsius;

	if (!e)
		return;
	e->throttled_s += p->sample_s;
	e->sampled_s += span;
	if (socket_peak(s, p->socket, &celsius) && (!e->has_peak || celsius > e->peak_celsius)) {
		e->peak_celsius = celsius;
		e->has_peak = true;
	}
}

/*
 * The place a throttle family's series tells of (sample v): its
 * condition's kind and family, its socket, die and channel.  False for a
 * series that is no condition of an episode.
 */
static bool series_place(const struct metric_sample *v, struct place *ret)
{
	const struct metric_family *f = v->family;
	const char *labels = v->label_value ? v->label_value : "";
	char reason[24];

	if (f->signal != METRIC_SIGNAL_THROTTLE_SECONDS || f->kind != METRIC_DOUBLE ||
	    (f->label && !v->label_value) || !f->json_key ||
	    strlen(labels) >= SNAPSHOT_EPISODE_PART_LABELS)
		return false;
	*ret = (struct place){ .socket = v->where, .core = -1,
			       .die = metric_label_number(f, labels, "die"),
			       .channel = metric_label_number(f, labels, "channel") };
	if (strncmp(f->json_key, "dram_", 5) == 0) {
		ret->kind = throttle_dram_channel_seconds.json_key;
		ret->family = &throttle_dram_channel_seconds;
	} else if (strcmp(f->json_key, "prochot_seconds") == 0 ||
		   (strcmp(f->json_key, "frequency_limited_seconds") == 0 &&
		    metric_label_value(f, labels, "reason", reason, sizeof(reason)) &&
		    strcmp(reason, "prochot") == 0)) {
		/* AMD's frequency limited by PROCHOT is the same assertion's effect. */
		ret->kind = throttle_prochot_seconds.json_key;
		ret->family = &throttle_prochot_seconds;
	} else if (strcmp(f->json_key, "frequency_limited_seconds") == 0) {
		ret->kind = throttle_frequency_limited_seconds.json_key;
		ret->family = &throttle_frequency_limited_seconds;
	} else {
		return false;
	}
	return true;
}

/* The seconds series v counted since prev (0 without prev). */
static double series_delta(const struct snapshot *prev, const struct metric_sample *v)
{
	const struct metric_sample *was =
		prev ? snapshot_find_sample(prev, v->family, v->where, v->label_value) : NULL;

	return was && v->value.d > was->value.d ? v->value.d - was->value.d : 0;
}

/* Mark the place of every throttle family series in s: fed, and hit where its seconds grew. */
static int mark_series(struct episode_tracker *t, const struct snapshot *prev,
		       const struct snapshot *s)
{
	int n;
	const struct metric_sample *v = snapshot_samples(s, &n);

	for (int i = 0; i < n; i++) {
		struct place key, *p;
		double delta;

		if (!series_place(&v[i], &key))
			continue;
		p = find_place(t, &key);
		if (!p)
			return -ENOMEM;
		delta = series_delta(prev, &v[i]);
		p->fed = true;
		if (delta > 0) {
			p->hit = true;
			if (delta > p->sample_s)
				p->sample_s = delta;
		}
	}
	return 0;
}

/* Record in e that series v took part, once. */
static void add_part(struct snapshot_episode *e, const struct metric_sample *v)
{
	const char *labels = v->label_value ? v->label_value : "";

	for (int i = 0; i < e->n_parts; i++)
		if (e->parts[i].family == v->family && strcmp(e->parts[i].labels, labels) == 0)
			return;
	if (e->n_parts == SNAPSHOT_EPISODE_PARTS) {
		e->parts_dropped = true;
		return;
	}
	e->parts[e->n_parts].family = v->family;
	snprintf(e->parts[e->n_parts].labels, sizeof(e->parts[0].labels), "%s", labels);
	e->n_parts++;
}

/* Add every series of s that counted seconds to its place's ongoing episode. */
static void add_parts(struct episode_tracker *t, const struct snapshot *prev,
		      const struct snapshot *s)
{
	int n;
	const struct metric_sample *v = snapshot_samples(s, &n);

	for (int i = 0; i < n; i++) {
		struct place key, *p;
		struct snapshot_episode *e;

		if (!series_place(&v[i], &key) || series_delta(prev, &v[i]) <= 0)
			continue;
		p = find_place(t, &key);
		e = p && p->active ? list_find(t, p) : NULL;
		if (e)
			add_part(e, &v[i]);
	}
}

/* Copy the list into s->episodes, newest first. */
static int copy_list(const struct episode_tracker *t, struct snapshot *s)
{
	struct snapshot_episode *list = NULL;

	if (t->n_episodes > 0) {
		list = calloc(t->n_episodes, sizeof(*list));
		if (!list)
			return -ENOMEM;
		for (size_t i = 0; i < t->n_episodes; i++)
			list[i] = t->episodes[t->n_episodes - 1 - i];
	}
	free(s->episodes);
	s->episodes = list;
	s->n_episodes = (int)t->n_episodes;
	return 0;
}

/* The change place p made in this sample, as the log says it. */
static void place_change(struct episode_tracker *t, const struct place *p,
			 struct episode_change *c)
{
	const struct snapshot_episode *e = list_find(t, p);

	*c = (struct episode_change){ .started = p->change == PLACE_STARTED };
	if (e) {
		c->episode = *e;
	} else {
		/* Evicted from a full list in this very sample: what the place knows. */
		c->episode = new_episode(p);
		c->episode.running_s = p->mono_last - p->mono_start;
		if (!c->started) {
			c->episode.end = p->start + c->episode.running_s;
			c->episode.mono_end = p->mono_last;
		}
	}
	if (!c->started)
		c->duration_s = c->episode.running_s;
}

int episode_update_from_snapshot(struct episode_tracker *t, const struct snapshot *previous,
				 struct snapshot *s,
				 void (*log_change)(void *arg, const struct episode_change *c),
				 void *arg)
{
	double now = s->time, mono = episode_monotonic_clock();

	for (size_t i = 0; i < t->n_places; i++) {
		struct place *p = &t->places[i];

		p->fed = p->hit = false;
		p->sample_s = 0;
		p->change = PLACE_SAME;
	}
	for (int i = 0; i < s->n_sockets; i++) {
		int r = mark_socket(t, s, previous, &s->sockets[i]);

		if (r < 0)
			return r;
	}
	if (mark_series(t, previous, s) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_places; i++) {
		struct place *p = &t->places[i];
		struct episode_change c;

		/*
		 * A bit or event not read in this sample leaves its place as
		 * it was; a family place none of whose series is left ends.
		 */
		if (!p->fed && !(p->family && p->active))
			continue;
		if (set_active(t, p, p->hit, now, mono, &c) > 0)
			p->change = c.started ? PLACE_STARTED : PLACE_ENDED;
		if (p->family && p->active)
			account(t, p, previous, s);
	}
	add_parts(t, previous, s);
	for (size_t i = 0; log_change && i < t->n_places; i++) {
		struct episode_change c;

		if (t->places[i].change == PLACE_SAME)
			continue;
		place_change(t, &t->places[i], &c);
		log_change(arg, &c);
	}
	return copy_list(t, s);
}

const struct snapshot_episode *episode_of_series(const struct snapshot *s,
						 const struct metric_sample *v)
{
	const char *labels = v->label_value ? v->label_value : "";

	for (int i = 0; i < s->n_episodes; i++) {
		const struct snapshot_episode *e = &s->episodes[i];

		if (!e->family || e->socket != v->where)
			continue;
		for (int k = 0; k < e->n_parts; k++)
			if (e->parts[k].family == v->family &&
			    strcmp(e->parts[k].labels, labels) == 0)
				return e;
	}
	return NULL;
}
