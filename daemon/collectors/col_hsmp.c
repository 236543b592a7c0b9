/*
 * The hsmp collector: PROCHOT and the frequency-limit reasons of AMD EPYC
 * through HSMP (/dev/hsmp, read-only; hardware-amd.md §1), one message at
 * a time per socket.  At start it asks each socket's protocol version
 * (GET_PROTO_VER, §1.7); then at each sample GET_PROC_HOT (0x0B, Zen 3
 * on) and, on Genoa and later, GET_SOCKET_FREQ_LIMIT (0x19) with its
 * source bitmap (§1.4).
 *
 * HSMP gives states, not times: the seconds are sampled, not counted.
 * PROCHOT and the reasons are read on a fast tick of their own ([hsmp]
 * tick, 0.1 s by default), by a thread of the collector between samples
 * and once more at each sample.  The thread starts at the first sample,
 * not at start: the daemon starts its collectors as root and then drops
 * to its user, which it refuses to do while another thread runs (a
 * thread keeps the capabilities it had).  Each reading adds the time
 * since the previous one to PROCHOT, and to each reason whose bit is set,
 * so a total is off by up to one tick per episode.  The longest gap
 * between two readings in the last interval is exported as
 * uncored_sample_resolution_seconds{collector="hsmp"}.  On the simulator's
 * stepped clock no time passes between samples, so the thread's readings
 * add nothing and the resolution is the sampling interval: tests step the
 * clock instead of sleeping.  A message the
 * firmware does not support (-ENOMSG) leaves its series absent, never 0.
 *
 * DIMMs (Genoa on, §1.5): HSMP has no list of DIMMs, so each address is
 * probed once at start (16 channels x 2 DIMMs x 2 sensors); those that
 * answer are read at every sample, no faster than their data ages (the
 * sampling interval is at least 0.1 s and usually 1 s; readings age up to
 * 511 ms): each sensor's temperature, and per DIMM the refresh multiplier
 * (1 or 2, the MR4 state) with the seconds it was 2, sampled.  AMD has no
 * DRAM throttle counter in band: this is the closest signal, named as what
 * it is.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd_hsmp.h"
#include "collector.h"
#include "throttle_families.h"
#include "throttle_signal.h"

#define NS_PER_S 1e9
#define MAX_REASONS 16
#define DIMM_CHANNELS 16
#define MAX_DIMMS (DIMM_CHANNELS * 2)

struct hsmp_settings {
	bool enabled;
	double tick_s;
};

static const struct conf_key hsmp_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct hsmp_settings, enabled), .def = "yes" },
	{ "tick", CONF_KIND_SECONDS, CONF_SETTING(struct hsmp_settings, tick_s), 0, 60, "seconds",
	  .def = "0.1" },
};

static const struct conf_section hsmp_conf_section = {
	.name = "hsmp", .keys = hsmp_keys, .n_keys = sizeof(hsmp_keys) / sizeof(hsmp_keys[0]),
	.settings_size = sizeof(struct hsmp_settings),
};

static const struct metric_family sample_resolution = {
	.name = "uncored_sample_resolution_seconds",
	.help = "The longest gap between two readings of a collector whose seconds are sampled "
		"states, not counted cycles: each episode's time is off by up to this much.",
	.type = METRIC_GAUGE, .unit = "seconds", .scope = METRIC_SCOPE_DAEMON, .kind = METRIC_DOUBLE,
	.label = "collector",
};

static const struct metric_family dimm_temperature = {
	.name = "uncored_dimm_temperature_celsius",
	.help = "A DIMM's temperature sensor as the SMU reports it (AMD HSMP).",
	.type = METRIC_GAUGE, .unit = "celsius", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_DOUBLE,
	.label = "channel,slot,sensor", .signal = METRIC_SIGNAL_DIMM_TEMPERATURE,
	.json_key = "dimm_temperature_celsius", .json_order = METRIC_JSON_SOCKET_FIXED + 440,
};

static const struct metric_family dimm_refresh = {
	.name = "uncored_dimm_refresh_multiplier",
	.help = "A DIMM's refresh rate multiplier, 1 or 2 (2: hot, extended refresh; AMD HSMP).",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "channel,slot", .signal = METRIC_SIGNAL_DIMM_REFRESH,
	.json_key = "dimm_refresh_multiplier", .json_order = METRIC_JSON_SOCKET_FIXED + 441,
};

static const struct metric_family dimm_extended_refresh = {
	.name = "uncored_dimm_extended_refresh_seconds_total",
	.help = "Seconds a DIMM ran at twice the refresh rate because it was hot (sampled; AMD HSMP).",
	.type = METRIC_COUNTER, .unit = "seconds", .scope = METRIC_SCOPE_SOCKET,
	.kind = METRIC_DOUBLE, .label = "channel,slot",
	.json_key = "dimm_extended_refresh_seconds", .json_order = METRIC_JSON_SOCKET_FIXED + 442,
};

static const struct metric_family *const hsmp_families[] = {
	&throttle_prochot_seconds, &throttle_frequency_limited_seconds, &sample_resolution,
	&dimm_temperature, &dimm_refresh, &dimm_extended_refresh,
};

struct hsmp_dimm {
	unsigned channel, slot;
	bool sensor[2];                       /* which sensors answered at start */
	double extended_s;
};

struct hsmp_socket {
	int socket;
	bool has_prochot, has_freq_limit;     /* the firmware answered the message at start */
	double prochot_s;
	double reason_s[MAX_REASONS];         /* by amd_hsmp_reasons() index */
	int n_dimms;
	struct hsmp_dimm dimms[MAX_DIMMS];
};

struct hsmp_state {
	int n_sockets;
	/* The fast tick: what the ticker thread and the sampler share, under lock. */
	pthread_mutex_t lock;
	bool has_last;                        /* a reading was taken before */
	int64_t last_ns;                      /* when */
	double max_gap_s;                     /* the longest gap between readings this interval */
	double resolution_s;                  /* what the last sample exported */
	uint64_t tick_errors;                 /* failed messages, for c->errors at the next sample */
	unsigned counting;                    /* sockets read at the last reading */
	/* The ticker thread. */
	pthread_cond_t wake;
	bool tried_thread, has_thread, stopping;
	pthread_t thread;
	double tick_s;
	/* DIMMs are read by the sampler alone. */
	bool has_dimm_last;
	int64_t dimm_last_ns;
	struct hsmp_socket sockets[];         /* as c->topo->sockets */
};

/* Index of reason in amd_hsmp_reasons(). */
static int reason_index(const char *reason)
{
	const char *const *r = amd_hsmp_reasons();

	for (int i = 0; r[i]; i++)
		if (strcmp(r[i], reason) == 0)
			return i;
	return -1;
}

/* The DIMM sensors of hs that answer GET_DIMM_THERMAL. */
static void probe_dimms(struct collector *c, struct hsmp_socket *hs)
{
	uint32_t v;

	for (unsigned ch = 0; ch < DIMM_CHANNELS; ch++)
		for (unsigned slot = 0; slot < 2; slot++) {
			struct hsmp_dimm *d = &hs->dimms[hs->n_dimms];

			for (unsigned sensor = 0; sensor < 2; sensor++)
				d->sensor[sensor] = amd_hsmp_get_arg(c->hw, hs->socket,
					HSMP_GET_DIMM_THERMAL, amd_hsmp_dimm_addr(ch, slot, sensor), &v) == 0;
			if (!d->sensor[0] && !d->sensor[1])
				continue;
			d->channel = ch;
			d->slot = slot;
			hs->n_dimms++;
		}
}

/* Read and export one DIMM: its sensors' temperatures, its refresh multiplier, integrated over dt_s. */
static void sample_dimm(struct collector *c, struct snapshot *s, int socket, struct hsmp_dimm *d,
			double dt_s)
{
	char labels[48];
	uint32_t v;

	for (unsigned sensor = 0; sensor < 2; sensor++) {
		if (!d->sensor[sensor])
			continue;
		if (amd_hsmp_get_arg(c->hw, socket, HSMP_GET_DIMM_THERMAL,
				     amd_hsmp_dimm_addr(d->channel, d->slot, sensor), &v) < 0) {
			c->errors++;
			continue;
		}
		snprintf(labels, sizeof(labels), "%u" METRIC_LABEL_SEP "%u" METRIC_LABEL_SEP "%u",
			 d->channel, d->slot, sensor);
		snapshot_add_sample(s, &dimm_temperature, socket, labels, 0,
				    amd_hsmp_dimm_celsius(v));
	}
	snprintf(labels, sizeof(labels), "%u" METRIC_LABEL_SEP "%u", d->channel, d->slot);
	if (amd_hsmp_get_arg(c->hw, socket, HSMP_GET_DIMM_TEMP_RANGE,
			     amd_hsmp_dimm_addr(d->channel, d->slot, 0), &v) < 0) {
		c->errors++;
	} else {
		d->extended_s += (v & HSMP_DIMM_REFRESH_2X) ? dt_s : 0;
		snapshot_add_sample(s, &dimm_refresh, socket, labels,
				    (v & HSMP_DIMM_REFRESH_2X) ? 2 : 1, 0);
	}
	snapshot_add_sample(s, &dimm_extended_refresh, socket, labels, 0, d->extended_s);
}

/*
 * Check one socket at start: its protocol, and which messages its
 * firmware answers.  0, or -ENOTSUP / the errno with the refusal said.
 */
static int probe_socket(struct collector *c, struct hsmp_socket *hs)
{
	uint32_t v;
	int r = amd_hsmp_get(c->hw, hs->socket, HSMP_GET_PROTO_VER, &v);

	if (r == -ENOENT) {
		collector_refuse(c, "no /dev/hsmp: enable \"HSMP Support\" in the BIOS and load the "
				 "driver ('modprobe amd_hsmp')");
		return -ENOTSUP;
	}
	if (r == -EOPNOTSUPP) {
		collector_refuse(c, "HSMP is an ioctl on /dev/hsmp, which a device-file tree cannot "
				 "carry");
		return -ENOTSUP;
	}
	if (r < 0) {
		collector_refuse(c, "socket %d: HSMP GET_PROTO_VER: %s", hs->socket, strerror(-r));
		return r;
	}
	if (v != c->info->fac.hsmp_proto)
		collector_note(c, "socket %d: HSMP protocol %u where %s has %u", hs->socket, v,
			       c->info->microarch, c->info->fac.hsmp_proto);
	hs->has_prochot = c->info->fac.has_hsmp_prochot &&
			  amd_hsmp_get(c->hw, hs->socket, HSMP_GET_PROC_HOT, &v) == 0;
	hs->has_freq_limit = c->info->fac.has_hsmp_freq_limit &&
			     amd_hsmp_get(c->hw, hs->socket, HSMP_GET_SOCKET_FREQ_LIMIT, &v) == 0;
	if (c->info->fac.has_hsmp_dimm)
		probe_dimms(c, hs);
	return 0;
}

/*
 * The signals the part's HSMP messages give: PROCHOT of any source, and
 * the thermal and power frequency limits of the source bitmap (Genoa on).
 */
static unsigned hsmp_throttle_signals(const struct cpu_info *info, const struct conf *conf)
{
	unsigned mask = 0;

	(void)conf;
	if (info->fac.hsmp_proto && info->fac.has_hsmp_prochot)
		mask |= THROTTLE_BIT(THROTTLE_PROCHOT_ANY);
	if (info->fac.hsmp_proto && info->fac.has_hsmp_freq_limit)
		mask |= THROTTLE_BIT(THROTTLE_FREQ_THERMAL) | THROTTLE_BIT(THROTTLE_FREQ_POWER);
	return mask;
}

static int hsmp_start(struct collector *c)
{
	struct hsmp_state *st;
	int r = 0;

	if (collector_refuse_disabled(c))
		return -ENOTSUP;
	if (!c->info->fac.hsmp_proto) {
		collector_refuse(c, "%s has no HSMP mailbox the kernel drives (AMD EPYC from Zen 3 on)",
				 c->info->microarch ? c->info->microarch : "this CPU");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st) + (size_t)c->topo->n_sockets * sizeof(st->sockets[0]));
	if (!st)
		return -ENOMEM;
	st->n_sockets = c->topo->n_sockets;
	pthread_mutex_init(&st->lock, NULL);
	c->state = st;
	for (int i = 0; i < st->n_sockets && r == 0; i++) {
		st->sockets[i].socket = c->topo->sockets[i].socket;
		r = probe_socket(c, &st->sockets[i]);
	}
	return r;
}

/* Which reasons (amd_hsmp_reasons() index) the source bitmap of v sets; bit 4 accrues none. */
static void limited_reasons(uint32_t v, bool set[MAX_REASONS])
{
	memset(set, 0, MAX_REASONS * sizeof(*set));
	for (unsigned bit = 0; bit < 16; bit++) {
		const char *reason = amd_hsmp_limit_reason(bit);
		int k = reason ? reason_index(reason) : -1;

		if (k >= 0 && k < MAX_REASONS && (v & HSMP_FREQ_LIMIT_SOURCE_MASK & (1u << bit)))
			set[k] = true;
	}
}

/*
 * One socket's reading, integrated over dt_s (the time since the previous
 * reading); false when nothing could be read.  Failures count in *errors.
 */
static bool read_socket(struct hw *hw, struct hsmp_socket *hs, double dt_s, uint64_t *errors)
{
	bool set[MAX_REASONS];
	uint32_t v;
	bool any = false;

	if (hs->has_prochot) {
		if (amd_hsmp_get(hw, hs->socket, HSMP_GET_PROC_HOT, &v) == 0) {
			hs->prochot_s += v ? dt_s : 0;
			any = true;
		} else {
			(*errors)++;
		}
	}
	if (!hs->has_freq_limit)
		return any;
	if (amd_hsmp_get(hw, hs->socket, HSMP_GET_SOCKET_FREQ_LIMIT, &v) < 0) {
		(*errors)++;
		return any;
	}
	limited_reasons(v, set);
	for (int k = 0; k < MAX_REASONS; k++)
		hs->reason_s[k] += set[k] ? dt_s : 0;
	return true;
}

static void export_socket(struct snapshot *s, const struct hsmp_socket *hs)
{
	const char *const *reasons = amd_hsmp_reasons();

	if (hs->has_prochot)
		snapshot_add_sample(s, &throttle_prochot_seconds, hs->socket, "any", 0, hs->prochot_s);
	for (int k = 0; hs->has_freq_limit && reasons[k]; k++)
		snapshot_add_sample(s, &throttle_frequency_limited_seconds, hs->socket, reasons[k], 0,
				    hs->reason_s[k]);
}

/* One reading of every socket, when time has passed since the previous one (or it is the first). */
static void tick(struct hw *hw, struct hsmp_state *st)
{
	int64_t now;
	double gap_s;
	unsigned counting = 0;

	pthread_mutex_lock(&st->lock);
	now = hw_now_ns(hw);
	gap_s = st->has_last ? (double)(now - st->last_ns) / NS_PER_S : 0;
	if (!st->has_last || gap_s > 0) {
		for (int i = 0; i < st->n_sockets; i++)
			counting += read_socket(hw, &st->sockets[i], gap_s, &st->tick_errors);
		st->counting = counting;
		st->max_gap_s = gap_s > st->max_gap_s ? gap_s : st->max_gap_s;
		st->has_last = true;
		st->last_ns = now;
	}
	pthread_mutex_unlock(&st->lock);
}

struct ticker_arg {
	struct hw *hw;
	struct hsmp_state *st;
};

/* The ticker thread: a reading every tick_s of real time until stop. */
static void *ticker(void *arg)
{
	struct ticker_arg a = *(struct ticker_arg *)arg;
	struct timespec until;

	free(arg);
	clock_gettime(CLOCK_MONOTONIC, &until);
	for (;;) {
		until.tv_sec += (time_t)a.st->tick_s;
		until.tv_nsec += (long)((a.st->tick_s - (double)(time_t)a.st->tick_s) * NS_PER_S);
		if (until.tv_nsec >= (long)NS_PER_S) {
			until.tv_sec++;
			until.tv_nsec -= (long)NS_PER_S;
		}
		pthread_mutex_lock(&a.st->lock);
		while (!a.st->stopping &&
		       pthread_cond_timedwait(&a.st->wake, &a.st->lock, &until) != ETIMEDOUT)
			;
		if (a.st->stopping) {
			pthread_mutex_unlock(&a.st->lock);
			return NULL;
		}
		pthread_mutex_unlock(&a.st->lock);
		tick(a.hw, a.st);
	}
}

/*
 * Start the ticker where [hsmp] tick asks for one, once, at the first
 * sample (see the top); without it, readings happen at samples only.
 */
static void start_ticker(struct collector *c, struct hsmp_state *st)
{
	const struct hsmp_settings *set = collector_settings(c->conf, c->ops);
	struct ticker_arg *arg;
	pthread_condattr_t attr;

	if (st->tried_thread)
		return;
	st->tried_thread = true;
	st->tick_s = set->tick_s;
	if (st->tick_s <= 0)
		return;
	arg = malloc(sizeof(*arg));
	if (!arg || pthread_condattr_init(&attr) != 0) {
		free(arg);
		collector_note(c, "no memory for the fast tick: PROCHOT is read at each sample only");
		return;
	}
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&st->wake, &attr);
	pthread_condattr_destroy(&attr);
	*arg = (struct ticker_arg){ .hw = c->hw, .st = st };
	st->has_thread = pthread_create(&st->thread, NULL, ticker, arg) == 0;
	if (!st->has_thread) {
		free(arg);
		pthread_cond_destroy(&st->wake);
		collector_note(c, "cannot start the fast tick: PROCHOT is read at each sample only");
	}
}

/*
 * The DIMMs of every socket, integrated over the time since the previous
 * sample; under the tick's lock, so that a socket gets one message at a time.
 */
static void sample_dimms(struct collector *c, struct hsmp_state *st, struct snapshot *s)
{
	int64_t now = hw_now_ns(c->hw);
	double dt_s = st->has_dimm_last ? (double)(now - st->dimm_last_ns) / NS_PER_S : 0;

	st->has_dimm_last = true;
	st->dimm_last_ns = now;
	pthread_mutex_lock(&st->lock);
	for (int i = 0; i < st->n_sockets; i++)
		for (int k = 0; k < st->sockets[i].n_dimms; k++)
			sample_dimm(c, s, st->sockets[i].socket, &st->sockets[i].dimms[k],
				    dt_s > 0 ? dt_s : 0);
	pthread_mutex_unlock(&st->lock);
}

static void hsmp_sample(struct collector *c, struct snapshot *s)
{
	struct hsmp_state *st = c->state;
	unsigned counting;

	if (!st)
		return;
	start_ticker(c, st);
	tick(c->hw, st);
	pthread_mutex_lock(&st->lock);
	for (int i = 0; i < st->n_sockets; i++)
		export_socket(s, &st->sockets[i]);
	if (st->max_gap_s > 0)
		st->resolution_s = st->max_gap_s;
	st->max_gap_s = 0;
	c->errors += st->tick_errors;
	st->tick_errors = 0;
	counting = st->counting;
	pthread_mutex_unlock(&st->lock);
	if (st->resolution_s > 0)
		snapshot_add_sample(s, &sample_resolution, 0, "hsmp", 0, st->resolution_s);
	sample_dimms(c, st, s);
	collector_units(c, (unsigned)st->n_sockets, counting);
}

static void hsmp_stop(struct collector *c)
{
	struct hsmp_state *st = c->state;

	if (st && st->has_thread) {
		pthread_mutex_lock(&st->lock);
		st->stopping = true;
		pthread_cond_signal(&st->wake);
		pthread_mutex_unlock(&st->lock);
		pthread_join(st->thread, NULL);
		pthread_cond_destroy(&st->wake);
	}
	if (st)
		pthread_mutex_destroy(&st->lock);
	free(st);
	c->state = NULL;
}

const struct collector_ops hsmp_collector_ops = {
	.name = "hsmp",
	.start = hsmp_start,
	.sample = hsmp_sample,
	.stop = hsmp_stop,
	.families = hsmp_families,
	.n_families = sizeof(hsmp_families) / sizeof(hsmp_families[0]),
	.conf_section = &hsmp_conf_section,
	.throttle_signals = hsmp_throttle_signals,
};
