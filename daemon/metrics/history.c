/*
 * The per-socket history ring and its JSON document; see history.h.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "strbuf.h"

/* One closed step of one socket; NAN where the socket had no reading. */
struct history_point {
	double hottest_core_celsius;
	double package_celsius;
	double margin_celsius;
	double dram_throttled_fraction;
	double prochot_fraction;
	double frequency_limited_fraction;
	double ipc;
};

/*
 * A memory place's packed values per step: shares in 1/PLACE_SHARE_ONE
 * (PLACE_NONE: no reading), temperatures in 1/16 °C (PLACE_NO_CELSIUS).
 * Each array is allocated, [capacity], when the place first has that kind
 * of reading, so a channel of throttle counters holds no temperatures.
 */
#define PLACE_SHARE_ONE 65534
#define PLACE_NONE UINT16_MAX
#define PLACE_NO_CELSIUS INT16_MIN
#define PLACE_CELSIUS_UNIT 16.0

struct history_place {
	int die, channel, slot;
	uint16_t *dram_share;
	int16_t *celsius;
	uint16_t *refresh_doubled;
	/* The open step: sums over the samples that had each reading. */
	double dram_share_sum, celsius_max;   /* celsius_max NAN: none yet */
	int n_dram_share, n_refresh, n_refresh_doubled;
};

/* What the open step has seen so far, per socket. */
struct history_step {
	int n_samples;
	double hottest_core_celsius, package_celsius, margin_celsius;  /* NAN: none yet */
	bool has_dram_base;
	uint64_t dram_base, clock_base, dram_last, clock_last;
	int n_prochot_known, n_prochot_active;
	/* The families' shares summed over the samples that had them, and how many did. */
	double dram_share, prochot_share, freq_share;
	int n_dram_share, n_prochot_share, n_freq_share;
	bool has_ipc_base;
	uint64_t instr_base, cycles_base, instr_last, cycles_last;
	double hottest_dimm_celsius;  /* NAN: none yet */
};

struct history {
	atomic_int refs;              /* the owner's, and one per live document */
	int n_sockets;
	int *socket_ids;
	double step_s;
	int capacity;
	uint64_t n_closed;            /* steps closed so far; point j is at slot j % capacity */
	double *times;                /* [capacity]: wall time at the end of each step */
	struct history_point *points; /* [capacity][n_sockets] */
	struct history_step *steps;   /* [n_sockets] */
	const char **package_sensor;  /* [n_sockets]: the last history_reading's, under lock */
	double step_start_mono;       /* NAN until the first sample */
	/* [n_sockets]: each socket's memory places, n_places[s] of them; grown under lock. */
	struct history_place **places;
	int *n_places;
	/* [n_sockets]: the hottest DIMM per step, packed as a place's; NULL until a socket has one. */
	int16_t **hottest_dimm;

	pthread_mutex_t lock;         /* guards doc, the ring's closed points, each doc's text */
	struct history_doc *doc;      /* the current step's */
};

/* The ring as it stood after n_closed steps, formatted on first read. */
struct history_doc {
	atomic_int refs;
	struct history *h;            /* holds a reference */
	uint64_t n_closed;
	char *text;                   /* NULL until read; under h->lock */
	size_t len;
};

static double max_known(double a, double b)
{
	return isnan(a) || b > a ? b : a;
}

static double min_known(double a, double b)
{
	return isnan(a) || b < a ? b : a;
}

static void step_reset(struct history_step *st)
{
	memset(st, 0, sizeof(*st));
	st->hottest_core_celsius = st->package_celsius = st->margin_celsius = NAN;
	st->hottest_dimm_celsius = NAN;
}

/* Start the next step where the last one ended, so no cycle falls between. */
static void step_rebase(struct history_step *st)
{
	struct history_step next;

	step_reset(&next);
	if (st->has_dram_base) {
		next.has_dram_base = true;
		next.dram_base = next.dram_last = st->dram_last;
		next.clock_base = next.clock_last = st->clock_last;
	}
	if (st->has_ipc_base) {
		next.has_ipc_base = true;
		next.instr_base = next.instr_last = st->instr_last;
		next.cycles_base = next.cycles_last = st->cycles_last;
	}
	*st = next;
}

static void step_fold(struct history_step *st, const struct history_reading *r)
{
	double hottest = NAN;

	st->n_samples++;
	if (r->has_hottest_core) {
		st->hottest_core_celsius = max_known(st->hottest_core_celsius, r->hottest_core_celsius);
		hottest = r->hottest_core_celsius;
	}
	if (r->has_package) {
		st->package_celsius = max_known(st->package_celsius, r->package_celsius);
		hottest = max_known(hottest, r->package_celsius);
	}
	if (r->has_tjmax && !isnan(hottest))
		st->margin_celsius = min_known(st->margin_celsius, r->tjmax_celsius - hottest);
	if (r->has_dram) {
		/* A total that went backwards is a new counter: measure from it. */
		if (!st->has_dram_base || r->dram_throttled_cycles < st->dram_last ||
		    r->clockticks < st->clock_last) {
			st->has_dram_base = true;
			st->dram_base = r->dram_throttled_cycles;
			st->clock_base = r->clockticks;
		}
		st->dram_last = r->dram_throttled_cycles;
		st->clock_last = r->clockticks;
	}
	if (r->has_prochot) {
		st->n_prochot_known++;
		st->n_prochot_active += r->prochot_active;
	}
	if (r->has_dram_share) {
		st->n_dram_share++;
		st->dram_share += r->dram_share;
	}
	if (r->has_prochot_share) {
		st->n_prochot_share++;
		st->prochot_share += r->prochot_share;
	}
	if (r->has_frequency_limited_share) {
		st->n_freq_share++;
		st->freq_share += r->frequency_limited_share;
	}
	if (r->has_ipc) {
		if (!st->has_ipc_base || r->instructions < st->instr_last || r->cycles < st->cycles_last) {
			st->has_ipc_base = true;
			st->instr_base = r->instructions;
			st->cycles_base = r->cycles;
		}
		st->instr_last = r->instructions;
		st->cycles_last = r->cycles;
	}
}

static struct history_point step_close(const struct history_step *st)
{
	struct history_point p = {
		.hottest_core_celsius = st->hottest_core_celsius,
		.package_celsius = st->package_celsius,
		.margin_celsius = st->margin_celsius,
		.dram_throttled_fraction = NAN,
		.prochot_fraction = NAN,
		.frequency_limited_fraction = NAN,
		.ipc = NAN,
	};

	if (st->has_dram_base && st->clock_last > st->clock_base) {
		double f = (double)(st->dram_last - st->dram_base) /
			   (double)(st->clock_last - st->clock_base);

		p.dram_throttled_fraction = f > 1.0 ? 1.0 : f;
	}
	if (st->n_prochot_known > 0)
		p.prochot_fraction = (double)st->n_prochot_active / st->n_prochot_known;
	/* Where a throttle family is measured, it is what the chart draws. */
	if (st->n_dram_share > 0)
		p.dram_throttled_fraction = st->dram_share / st->n_dram_share;
	if (st->n_prochot_share > 0)
		p.prochot_fraction = st->prochot_share / st->n_prochot_share;
	if (st->n_freq_share > 0)
		p.frequency_limited_fraction = st->freq_share / st->n_freq_share;
	if (st->has_ipc_base && st->cycles_last > st->cycles_base)
		p.ipc = (double)(st->instr_last - st->instr_base) / (double)(st->cycles_last - st->cycles_base);
	return p;
}

static void history_unref(struct history *h)
{
	if (!h || atomic_fetch_sub_explicit(&h->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_destroy(&h->lock);
	free(h->socket_ids);
	free(h->times);
	free(h->points);
	free(h->steps);
	free(h->package_sensor);
	for (int sock = 0; h->places && h->n_places && sock < h->n_sockets; sock++) {
		for (int k = 0; k < h->n_places[sock]; k++) {
			free(h->places[sock][k].dram_share);
			free(h->places[sock][k].celsius);
			free(h->places[sock][k].refresh_doubled);
		}
		free(h->places[sock]);
	}
	for (int sock = 0; h->hottest_dimm && sock < h->n_sockets; sock++)
		free(h->hottest_dimm[sock]);
	free(h->hottest_dimm);
	free(h->places);
	free(h->n_places);
	free(h);
}

static void doc_release(struct history_doc *d)
{
	if (!d || atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1)
		return;
	history_unref(d->h);
	free(d->text);
	free(d);
}

/* Points of a document of n_closed steps still in the ring, the oldest first: [*first, n_closed). */
static uint64_t first_point(const struct history *h, uint64_t n_closed)
{
	uint64_t cap = (uint64_t)h->capacity;
	uint64_t first = n_closed > cap ? n_closed - cap : 0;

	/* Points the ring has overwritten since (a new step reuses the oldest slot). */
	if (h->n_closed > cap && h->n_closed - cap > first)
		first = h->n_closed - cap;
	return first;
}

static void append_series(struct strbuf *sb, const struct history *h, uint64_t first,
			  uint64_t end, int sock, const char *name, size_t offset)
{
	strbuf_printf(sb, ", \"%s\": [", name);
	for (uint64_t j = first; j < end; j++) {
		size_t at = (size_t)(j % (uint64_t)h->capacity);
		const struct history_point *p = &h->points[at * (size_t)h->n_sockets + (size_t)sock];
		double v;

		memcpy(&v, (const char *)p + offset, sizeof(v));
		if (j > first)
			strbuf_append(sb, ", ");
		strbuf_append_json_double(sb, v);
	}
	strbuf_append(sb, "]");
}

static const struct {
	const char *name;
	size_t offset;
} series[] = {
	{ "hottest_core_celsius", offsetof(struct history_point, hottest_core_celsius) },
	{ "package_celsius", offsetof(struct history_point, package_celsius) },
	{ "margin_celsius", offsetof(struct history_point, margin_celsius) },
	{ "dram_throttled_fraction", offsetof(struct history_point, dram_throttled_fraction) },
	{ "prochot_fraction", offsetof(struct history_point, prochot_fraction) },
	{ "frequency_limited_fraction", offsetof(struct history_point, frequency_limited_fraction) },
	{ "ipc", offsetof(struct history_point, ipc) },
};

static double share_value(uint16_t q)
{
	return (double)q / PLACE_SHARE_ONE;
}

/*
 * One packed share series over points [first, end) of the ring: its mean
 * over the points that had a reading into "NAME_fraction" and the end time
 * of the last point above zero into "NAME_last" (null: none).
 */
static void append_place_share(struct strbuf *sb, const struct history *h, uint64_t first,
			       uint64_t end, const uint16_t *q, const char *name)
{
	double sum = 0, last = NAN;
	int n = 0;

	for (uint64_t j = first; j < end; j++) {
		size_t at = (size_t)(j % (uint64_t)h->capacity);

		if (q[at] == PLACE_NONE)
			continue;
		n++;
		sum += share_value(q[at]);
		if (q[at] > 0)
			last = h->times[at];
	}
	strbuf_printf(sb, ", \"%s_fraction\": ", name);
	/* Rounded to what the packing keeps (1/65534), so the text does not pretend more. */
	strbuf_append_json_double(sb, n ? round(sum / n * 1e5) / 1e5 : NAN);
	strbuf_printf(sb, ", \"%s_last\": ", name);
	strbuf_append_json_double(sb, last);
}

/* A place's temperatures over [first, end): the highest and the last reading. */
static void append_place_celsius(struct strbuf *sb, const struct history *h, uint64_t first,
				 uint64_t end, const int16_t *c)
{
	double max = NAN, last = NAN;

	for (uint64_t j = first; j < end; j++) {
		int16_t v = c[j % (uint64_t)h->capacity];

		if (v == PLACE_NO_CELSIUS)
			continue;
		last = v / PLACE_CELSIUS_UNIT;
		max = max_known(max, last);
	}
	strbuf_append(sb, ", \"celsius_max\": ");
	strbuf_append_json_double(sb, max);
	strbuf_append(sb, ", \"celsius_last\": ");
	strbuf_append_json_double(sb, last);
}

/* Socket sock's memory places over [first, end), as ", \"places\": [...]". */
static void append_places(struct strbuf *sb, const struct history *h, uint64_t first,
			  uint64_t end, int sock)
{
	strbuf_append(sb, ", \"places\": [");
	for (int k = 0; k < h->n_places[sock]; k++) {
		const struct history_place *p = &h->places[sock][k];
		const char *sep = "";

		strbuf_append(sb, k ? ", {" : "{");
		if (p->die >= 0) {
			strbuf_printf(sb, "\"die\": %d", p->die);
			sep = ", ";
		}
		if (p->channel >= 0) {
			strbuf_printf(sb, "%s\"channel\": %d", sep, p->channel);
			sep = ", ";
		}
		if (p->slot >= 0)
			strbuf_printf(sb, "%s\"slot\": %d", sep, p->slot);
		if (p->dram_share)
			append_place_share(sb, h, first, end, p->dram_share, "dram_throttled");
		if (p->celsius)
			append_place_celsius(sb, h, first, end, p->celsius);
		if (p->refresh_doubled)
			append_place_share(sb, h, first, end, p->refresh_doubled, "refresh_doubled");
		strbuf_append(sb, "}");
	}
	strbuf_append(sb, "]");
}

/* Format d's points into sb; h->lock held. */
static void format_doc(const struct history *h, const struct history_doc *d, struct strbuf *sb)
{
	uint64_t first = first_point(h, d->n_closed);

	strbuf_append(sb, "{\"step_seconds\": ");
	strbuf_append_json_double(sb, h->step_s);
	strbuf_printf(sb, ", \"capacity\": %d, \"sockets\": [", h->capacity);
	for (int s = 0; s < h->n_sockets; s++) {
		strbuf_printf(sb, "%s{\"socket\": %d, ", s ? ", " : "", h->socket_ids[s]);
		/* What package_celsius is where it is no package sensor (AMD: k10temp's Tctl). */
		if (h->package_sensor[s])
			strbuf_printf(sb, "\"package_sensor\": \"%s\", ", h->package_sensor[s]);
		strbuf_append(sb, "\"time\": [");
		for (uint64_t j = first; j < d->n_closed; j++) {
			if (j > first)
				strbuf_append(sb, ", ");
			strbuf_append_json_double(sb, h->times[j % (uint64_t)h->capacity]);
		}
		strbuf_append(sb, "]");
		for (size_t k = 0; k < sizeof(series) / sizeof(series[0]); k++)
			append_series(sb, h, first, d->n_closed, s, series[k].name, series[k].offset);
		if (h->hottest_dimm[s]) {
			/* Only where the socket has DIMM sensors: an Intel socket's would be all null. */
			strbuf_append(sb, ", \"hottest_dimm_celsius\": [");
			for (uint64_t j = first; j < d->n_closed; j++) {
				int16_t v = h->hottest_dimm[s][j % (uint64_t)h->capacity];

				strbuf_append(sb, j > first ? ", " : "");
				strbuf_append_json_double(sb, v == PLACE_NO_CELSIUS ? NAN : v / PLACE_CELSIUS_UNIT);
			}
			strbuf_append(sb, "]");
		}
		append_places(sb, h, first, d->n_closed, s);
		strbuf_append(sb, "}");
	}
	strbuf_append(sb, "]}\n");
}

/* Make a handle for the ring as it stands the current document; keeps the old one on ENOMEM. */
static void publish(struct history *h)
{
	struct history_doc *d = calloc(1, sizeof(*d)), *old;

	if (!d)
		return;
	atomic_init(&d->refs, 1);
	atomic_fetch_add_explicit(&h->refs, 1, memory_order_relaxed);
	d->h = h;
	d->n_closed = h->n_closed;

	pthread_mutex_lock(&h->lock);
	old = h->doc;
	h->doc = d;
	pthread_mutex_unlock(&h->lock);
	doc_release(old);
}

static void place_reset_step(struct history_place *p)
{
	p->dram_share_sum = 0;
	p->celsius_max = NAN;
	p->n_dram_share = p->n_refresh = p->n_refresh_doubled = 0;
}

/* A packed array of capacity values, all "no reading"; NULL on ENOMEM. */
static uint16_t *new_shares(int capacity)
{
	uint16_t *q = malloc((size_t)capacity * sizeof(*q));

	for (int i = 0; q && i < capacity; i++)
		q[i] = PLACE_NONE;
	return q;
}

static int16_t *new_temperatures(int capacity)
{
	int16_t *c = malloc((size_t)capacity * sizeof(*c));

	for (int i = 0; c && i < capacity; i++)
		c[i] = PLACE_NO_CELSIUS;
	return c;
}

/*
 * Socket sock's place of r, made on its first reading, with the arrays
 * for r's kinds of reading; NULL when the socket has HISTORY_MAX_PLACES
 * already or on ENOMEM (that reading is then not kept).  Growth is under
 * the lock, since a reader walks the places.
 */
static struct history_place *place_of(struct history *h, int sock,
				      const struct history_place_reading *r)
{
	struct history_place *p = NULL;

	for (int k = 0; k < h->n_places[sock] && !p; k++) {
		struct history_place *q = &h->places[sock][k];

		if (q->die == r->die && q->channel == r->channel && q->slot == r->slot)
			p = q;
	}
	if (!p) {
		struct history_place *grown;
		int n = h->n_places[sock];

		if (n >= HISTORY_MAX_PLACES)
			return NULL;
		pthread_mutex_lock(&h->lock);
		grown = realloc(h->places[sock], (size_t)(n + 1) * sizeof(*grown));
		if (grown) {
			h->places[sock] = grown;
			p = &grown[n];
			memset(p, 0, sizeof(*p));
			p->die = r->die;
			p->channel = r->channel;
			p->slot = r->slot;
			place_reset_step(p);
			h->n_places[sock] = n + 1;
		}
		pthread_mutex_unlock(&h->lock);
		if (!p)
			return NULL;
	}
	if ((r->has_dram_share && !p->dram_share) || (r->has_celsius && !p->celsius) ||
	    (r->has_refresh && !p->refresh_doubled)) {
		pthread_mutex_lock(&h->lock);
		if (r->has_dram_share && !p->dram_share)
			p->dram_share = new_shares(h->capacity);
		if (r->has_celsius && !p->celsius)
			p->celsius = new_temperatures(h->capacity);
		if (r->has_refresh && !p->refresh_doubled)
			p->refresh_doubled = new_shares(h->capacity);
		pthread_mutex_unlock(&h->lock);
	}
	return p;
}

/* Fold one sample's place readings of socket sock into its places and its step. */
static void fold_places(struct history *h, int sock, const struct history_reading *r)
{
	struct history_step *st = &h->steps[sock];

	for (int i = 0; i < r->n_places; i++) {
		const struct history_place_reading *pr = &r->places[i];
		struct history_place *p = place_of(h, sock, pr);

		if (pr->has_celsius) {
			st->hottest_dimm_celsius = max_known(st->hottest_dimm_celsius, pr->celsius);
			if (!h->hottest_dimm[sock]) {
				int16_t *c = new_temperatures(h->capacity);

				pthread_mutex_lock(&h->lock);
				h->hottest_dimm[sock] = c;
				pthread_mutex_unlock(&h->lock);
			}
		}
		if (!p)
			continue;
		if (pr->has_dram_share && p->dram_share) {
			p->n_dram_share++;
			p->dram_share_sum += pr->dram_share < 0 ? 0 : pr->dram_share > 1 ? 1 : pr->dram_share;
		}
		if (pr->has_celsius && p->celsius)
			p->celsius_max = max_known(p->celsius_max, pr->celsius);
		if (pr->has_refresh && p->refresh_doubled) {
			p->n_refresh++;
			p->n_refresh_doubled += pr->refresh_doubled;
		}
	}
}

static uint16_t pack_share(double sum, int n)
{
	return n ? (uint16_t)lround(sum / n * PLACE_SHARE_ONE) : PLACE_NONE;
}

static int16_t pack_celsius(double c)
{
	double v = round(c * PLACE_CELSIUS_UNIT);

	if (isnan(v))
		return PLACE_NO_CELSIUS;
	return v <= INT16_MIN ? INT16_MIN + 1 : v > INT16_MAX ? INT16_MAX : (int16_t)v;
}

/* Close the step of socket sock's places into ring slot at; h->lock held. */
static void close_places(struct history *h, int sock, size_t at)
{
	for (int k = 0; k < h->n_places[sock]; k++) {
		struct history_place *p = &h->places[sock][k];

		if (p->dram_share)
			p->dram_share[at] = pack_share(p->dram_share_sum, p->n_dram_share);
		if (p->celsius)
			p->celsius[at] = pack_celsius(p->celsius_max);
		if (p->refresh_doubled)
			p->refresh_doubled[at] = pack_share(p->n_refresh_doubled, p->n_refresh);
		place_reset_step(p);
	}
}

struct history *history_new(int n_sockets, const int *socket_ids, double step_s, double span_s)
{
	struct history *h;

	if (n_sockets < 0 || !(step_s > 0) || !(span_s >= step_s))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	atomic_init(&h->refs, 1);
	h->n_sockets = n_sockets;
	h->step_s = step_s;
	h->capacity = (int)ceil(span_s / step_s);
	h->step_start_mono = NAN;
	/* Sized to what they hold (at least one, so that none is an empty allocation). */
	h->socket_ids = calloc(n_sockets ? (size_t)n_sockets : 1, sizeof(*h->socket_ids));
	h->times = calloc((size_t)h->capacity, sizeof(*h->times));
	h->points = calloc((size_t)h->capacity * (n_sockets ? (size_t)n_sockets : 1), sizeof(*h->points));
	h->steps = calloc(n_sockets ? (size_t)n_sockets : 1, sizeof(*h->steps));
	h->package_sensor = calloc(n_sockets ? (size_t)n_sockets : 1, sizeof(*h->package_sensor));
	h->places = calloc(n_sockets ? (size_t)n_sockets : 1, sizeof(*h->places));
	h->n_places = calloc(n_sockets ? (size_t)n_sockets : 1, sizeof(*h->n_places));
	h->hottest_dimm = calloc(n_sockets ? (size_t)n_sockets : 1, sizeof(*h->hottest_dimm));
	pthread_mutex_init(&h->lock, NULL);
	if (!h->socket_ids || !h->times || !h->points || !h->steps || !h->package_sensor ||
	    !h->places || !h->n_places || !h->hottest_dimm) {
		history_free(h);
		return NULL;
	}
	if (n_sockets)
		memcpy(h->socket_ids, socket_ids, (size_t)n_sockets * sizeof(*socket_ids));
	for (int s = 0; s < n_sockets; s++)
		step_reset(&h->steps[s]);
	publish(h);
	if (!h->doc) {
		history_free(h);
		return NULL;
	}
	return h;
}

void history_free(struct history *h)
{
	struct history_doc *d;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	d = h->doc;
	h->doc = NULL;
	pthread_mutex_unlock(&h->lock);
	doc_release(d);
	history_unref(h);
}

bool history_add(struct history *h, double mono_s, double wall_s,
		 const struct history_reading *readings)
{
	size_t at;

	if (isnan(h->step_start_mono))
		h->step_start_mono = mono_s;
	for (int s = 0; s < h->n_sockets; s++) {
		step_fold(&h->steps[s], &readings[s]);
		fold_places(h, s, &readings[s]);
	}
	for (int s = 0; s < h->n_sockets; s++) {
		/* Only this thread writes it: a read without the lock sees its own writes. */
		if (readings[s].has_package && h->package_sensor[s] != readings[s].package_sensor) {
			pthread_mutex_lock(&h->lock);
			h->package_sensor[s] = readings[s].package_sensor;
			pthread_mutex_unlock(&h->lock);
		}
	}
	if (mono_s - h->step_start_mono < h->step_s)
		return false;

	at = (size_t)(h->n_closed % (uint64_t)h->capacity);
	pthread_mutex_lock(&h->lock);
	h->times[at] = wall_s;
	for (int s = 0; s < h->n_sockets; s++) {
		h->points[at * (size_t)h->n_sockets + (size_t)s] = step_close(&h->steps[s]);
		if (h->hottest_dimm[s])
			h->hottest_dimm[s][at] = pack_celsius(h->steps[s].hottest_dimm_celsius);
		step_rebase(&h->steps[s]);
		close_places(h, s, at);
	}
	h->n_closed++;
	pthread_mutex_unlock(&h->lock);
	h->step_start_mono = mono_s;
	publish(h);
	return true;
}

int history_points(const struct history *h)
{
	return h->n_closed < (uint64_t)h->capacity ? (int)h->n_closed : h->capacity;
}

size_t history_memory_bytes(const struct history *h)
{
	size_t n = (size_t)(h->n_sockets ? h->n_sockets : 1);
	size_t bytes = sizeof(*h) + n * (sizeof(*h->socket_ids) + sizeof(*h->steps) +
					 sizeof(*h->package_sensor) + sizeof(*h->places) +
					 sizeof(*h->n_places) +
					 sizeof(*h->hottest_dimm));

	bytes += (size_t)h->capacity * (sizeof(*h->times) + n * sizeof(*h->points));
	for (int s = 0; s < h->n_sockets; s++) {
		bytes += h->hottest_dimm[s] ? (size_t)h->capacity * sizeof(**h->hottest_dimm) : 0;
		for (int k = 0; k < h->n_places[s]; k++) {
			const struct history_place *p = &h->places[s][k];

			bytes += sizeof(*p);
			bytes += p->dram_share ? (size_t)h->capacity * sizeof(*p->dram_share) : 0;
			bytes += p->celsius ? (size_t)h->capacity * sizeof(*p->celsius) : 0;
			bytes += p->refresh_doubled ? (size_t)h->capacity * sizeof(*p->refresh_doubled) : 0;
		}
	}
	return bytes;
}

struct history_doc *history_acquire(struct history *h)
{
	struct history_doc *d;

	pthread_mutex_lock(&h->lock);
	d = h->doc;
	if (d)
		atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&h->lock);
	return d;
}

void history_release(struct history_doc *d)
{
	doc_release(d);
}

int history_doc_text(struct history_doc *d, const char **ret_text, size_t *ret_len)
{
	struct history *h = d->h;
	int r = 0;

	pthread_mutex_lock(&h->lock);
	if (!d->text) {
		struct strbuf sb;

		strbuf_init(&sb);
		format_doc(h, d, &sb);
		d->text = strbuf_steal(&sb, &d->len);
	}
	if (d->text) {
		*ret_text = d->text;
		*ret_len = d->len;
	} else {
		r = -ENOMEM;
	}
	pthread_mutex_unlock(&h->lock);
	return r;
}
