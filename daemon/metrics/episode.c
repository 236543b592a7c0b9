/*
 * Throttle episode tracking.  The tracker owns two tables: the state of
 * every place it has been told about (kind, socket, core → active since
 * when), and a bounded list of episodes in start order, ongoing ones with
 * end = 0.  When the list is full the oldest finished episode makes room,
 * an ongoing one only when nothing has finished.  It does no logging and
 * no I/O; the caller gets the changes and decides what to say.
 *
 * Durations are measured on the monotonic clock: a wall-clock step (NTP,
 * an operator) must not give an episode a negative or inflated length.
 * The wall-clock stamps are for display: an episode's end stamp is its
 * start stamp plus its monotonic duration.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "episode.h"
#include "grow.h"
#include "event.h"
#include "metric.h"
#include "throttle_families.h"

struct place {
	enum episode_kind kind;                   /* when family is NULL */
	const struct metric_family *family;       /* a throttle family's series, or NULL */
	char labels[SNAPSHOT_EPISODE_LABELS_MAX]; /* its label value */
	int socket;
	int core;
	bool active;
	bool seen;             /* a family series: fed in this sample */
	uint64_t id;           /* the ongoing (or last) episode's */
	double start;          /* wall clock, for display */
	double mono_start;     /* monotonic clock, for the duration */
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

/* The place of key (kind or family and labels, socket, core), added inactive when new. */
static struct place *find_place(struct episode_tracker *t, const struct place *key)
{
	struct place *p;

	for (size_t i = 0; i < t->n_places; i++) {
		p = &t->places[i];
		if (p->family == key->family && p->socket == key->socket &&
		    p->core == key->core &&
		    (key->family ? strcmp(p->labels, key->labels) == 0 : p->kind == key->kind))
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

/* The name an episode of place p goes by: its kind's, or its family's JSON key. */
static const char *place_kind_name(const struct place *p)
{
	return p->family ? p->family->json_key : kind_names[p->kind];
}

/*
 * Set place p active or not at wall-clock time now and monotonic time
 * mono; 1 and *ret_change when an episode started or ended, else 0.
 */
static int set_active(struct episode_tracker *t, struct place *p, bool active, double now,
		      double mono, struct episode_change *ret_change)
{
	struct episode_change c = { 0 };
	struct snapshot_episode *e;

	if (active == p->active)
		return 0;
	if (active) {
		p->id = ++t->last_id;
		p->start = now;
		p->mono_start = mono;
		c.started = true;
		c.episode = (struct snapshot_episode){
			.kind = place_kind_name(p), .id = p->id, .socket = p->socket,
			.core = p->core, .start = now, .mono_start = mono, .family = p->family,
		};
		memcpy(c.episode.labels, p->labels, sizeof(c.episode.labels));
		list_add(t, &c.episode);
	} else {
		c.duration_s = mono > p->mono_start ? mono - p->mono_start : 0;
		e = list_find(t, p);
		if (e) {
			e->end = p->start + c.duration_s;
			e->mono_end = p->mono_start + c.duration_s;
			c.episode = *e;
		} else {
			c.episode = (struct snapshot_episode){
				.kind = place_kind_name(p), .id = p->id, .socket = p->socket,
				.core = p->core, .start = p->start,
				.end = p->start + c.duration_s, .mono_start = p->mono_start,
				.mono_end = p->mono_start + c.duration_s, .family = p->family,
			};
			memcpy(c.episode.labels, p->labels, sizeof(c.episode.labels));
		}
	}
	p->active = active;
	if (ret_change)
		*ret_change = c;
	return 1;
}

/* episode_update() with the monotonic time mono beside the wall-clock time now. */
static int update_at(struct episode_tracker *t, enum episode_kind kind, int socket, int core,
		     bool active, double now, double mono, struct episode_change *ret_change)
{
	const struct place key = { .kind = kind, .socket = socket, .core = core };
	struct place *p;

	if ((unsigned)kind >= EPISODE_KIND_COUNT)
		return -EINVAL;
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

struct feed {
	struct episode_tracker *t;
	double now, mono;
	void (*log_change)(void *arg, const struct episode_change *c);
	void *arg;
};

static int feed_place(const struct feed *f, enum episode_kind kind, int socket, int core,
		      bool active)
{
	struct episode_change c;
	int r = update_at(f->t, kind, socket, core, active, f->now, f->mono, &c);

	if (r > 0 && f->log_change)
		f->log_change(f->arg, &c);
	return r < 0 ? r : 0;
}

static int feed_socket(const struct feed *f, const struct snapshot *s,
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
	    feed_place(f, EPISODE_DRAM_THERMAL_THROTTLING, sock->socket, -1, dram);
	if (r == 0 && !prochot_family)
		r = feed_place(f, EPISODE_PROCHOT, sock->socket, -1, prochot);
	if (r == 0 && pkg)
		r = feed_place(f, EPISODE_PACKAGE_THERMAL_THROTTLING, sock->socket, -1,
			       pkg->value.u != 0);
	for (int i = 0; r == 0 && i < sock->n_cores; i++) {
		const struct snapshot_core *c = &sock->cores[i];
		const struct metric_sample *thr = snapshot_find_core_signal(s, c, METRIC_SIGNAL_THROTTLING);

		if (thr)
			r = feed_place(f, EPISODE_CORE_THERMAL_THROTTLING, sock->socket, c->core,
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
 * Add one sample's seconds, the time since the previous sample (the
 * configured interval for the first) and the temperature to the ongoing
 * episode of p.
 */
static void account(struct episode_tracker *t, const struct place *p, const struct snapshot *prev,
		    const struct snapshot *s, double seconds)
{
	double span = prev && s->mono > prev->mono ? s->mono - prev->mono : s->interval_s;

	struct snapshot_episode *e = list_find(t, p);
	int celsius;

	if (!e)
		return;
	e->throttled_s += seconds;
	e->sampled_s += span;
	if (socket_peak(s, p->socket, &celsius) && (!e->has_peak || celsius > e->peak_celsius)) {
		e->peak_celsius = celsius;
		e->has_peak = true;
	}
}

static int feed_change(const struct feed *f, struct place *p, bool active)
{
	struct episode_change c;
	int r = set_active(f->t, p, active, f->now, f->mono, &c);

	if (r > 0 && f->log_change)
		f->log_change(f->arg, &c);
	return r;
}

/*
 * Every series of a throttle family (METRIC_SIGNAL_THROTTLE_SECONDS) in s
 * is a place: active while its seconds grow from prev.  A series that is
 * gone (its collector stopped) ends its episode.
 */
static int feed_series(const struct feed *f, const struct snapshot *prev, const struct snapshot *s)
{
	int n;
	const struct metric_sample *v = snapshot_samples(s, &n);

	for (size_t i = 0; i < f->t->n_places; i++)
		f->t->places[i].seen = false;
	for (int i = 0; i < n; i++) {
		const struct metric_family *fam = v[i].family;
		const char *labels = v[i].label_value ? v[i].label_value : "";
		struct place key = { .family = fam, .socket = v[i].where, .core = -1 };
		const struct metric_sample *was;
		struct place *p;
		double delta;

		if (fam->signal != METRIC_SIGNAL_THROTTLE_SECONDS || fam->kind != METRIC_DOUBLE ||
		    (fam->label && !v[i].label_value) || strlen(labels) >= sizeof(key.labels))
			continue;
		memcpy(key.labels, labels, strlen(labels) + 1);
		p = find_place(f->t, &key);
		if (!p)
			return -ENOMEM;
		p->seen = true;
		was = prev ? snapshot_find_sample(prev, fam, v[i].where, v[i].label_value) : NULL;
		delta = was && v[i].value.d > was->value.d ? v[i].value.d - was->value.d : 0;
		feed_change(f, p, delta > 0);
		if (p->active)
			account(f->t, p, prev, s, delta);
	}
	for (size_t i = 0; i < f->t->n_places; i++) {
		struct place *p = &f->t->places[i];

		if (p->family && p->active && !p->seen)
			feed_change(f, p, false);
	}
	return 0;
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

int episode_update_from_snapshot(struct episode_tracker *t, const struct snapshot *previous,
				 struct snapshot *s,
				 void (*log_change)(void *arg, const struct episode_change *c),
				 void *arg)
{
	const struct feed f = { .t = t, .now = s->time, .mono = episode_monotonic_clock(),
				.log_change = log_change, .arg = arg };

	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *sock = &s->sockets[i];
		int r = feed_socket(&f, s, previous, sock);

		if (r < 0)
			return r;
	}
	if (feed_series(&f, previous, s) < 0)
		return -ENOMEM;
	return copy_list(t, s);
}
