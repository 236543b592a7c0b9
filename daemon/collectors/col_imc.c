/*
 * The iMC collector: per socket (and die, on packages of several: a die
 * label) and memory channel, the memory
 * controller's throttle cycles, critical-throttle cycles and the
 * channel's own DCLK clockticks (hardware-linux.md §4.3), through the perf
 * engine on the kernel's uncore_imc_N PMUs (the iMC counters are in PCI
 * configuration space or MMIO, out of the msr driver's reach).  A channel
 * has 4 counters: each group holds the clock and up to 3 events, and
 * generations with more events (one per DIMM slot from Ice Lake-SP on: a
 * slot label) have a second group, each with its own clock.
 *
 * Throttle cycles become seconds at the channel's DCLK *rate*, never by its
 * count: the iMC has no clock while the package is in C3/C6
 * (hardware-linux.md §6), so an interval's DCLK count says how long the
 * channel was awake, not how long the interval was.  The rate is the
 * highest seen on the channel (clockticks over time running, per group and
 * interval), kept across samples; DCLK runs at a constant rate (§4.4), so
 * an interval the package slept through part of shows a lower one.
 * Seconds = throttle cycles / rate, at most the interval.  The cause label
 * says only what the event can tell (before Granite Rapids:
 * thermal_or_power, §4.5 item 3).  Raw counts stay available per event.
 *
 * A channel whose clock has never advanced (current kernels register 12
 * channels on Ice Lake-SP, where older ones had 8, and an unused channel
 * reads 0, §6) is left
 * out, with the reason in the status, until it clocks; one that has
 * clocked once keeps its series while it sleeps.  A group read that fails,
 * or whose group perf keeps off its counters for half an interval
 * (another user holds them, §4.5 item 6; col_engine_read), is an error
 * (uncored_sample_errors_total) and adds nothing: never a 0.  Under perf
 * each channel's smallest time running over time enabled is exported
 * (uncored_pmu_multiplexing_ratio).
 *
 * A machine without iMC PMUs (a virtual machine, a BIOS that hides the
 * iMC PMON devices, §4.5 item 4) is said so, not exported as zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "col_engine.h"
#include "collector.h"
#include "engine.h"
#include "throttle_signal.h"
#include "throttle_families.h"
#include "uncore_unit.h"
#include "xeon_uncore.h"

#define MAX_CHANNELS 64
#define MAX_EVENTS 8        /* the clock and the generation's throttle events */
#define GROUP_SIZE 4        /* the channel's counters: the clock and 3 events */
#define MAX_GROUPS 4

/* The [imc] section. */
struct imc_settings {
	bool enabled;
};

static const struct conf_key imc_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct imc_settings, enabled), .def = "yes" },
};

static const struct conf_section imc_conf_section = {
	.name = "imc", .keys = imc_keys, .n_keys = sizeof(imc_keys) / sizeof(imc_keys[0]),
	.settings_size = sizeof(struct imc_settings),
};

/* Raw counts: uncored_imc_events_total{socket,channel,event}. */
static const struct metric_family imc_events = {
	.name = "uncored_imc_events_total",
	.help = "Memory controller events counted per channel (cycles of the channel's clock; "
		"clockticks is the clock itself).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "channel,event",
};

/* The same on packages of several dies: {socket,die,channel,event}. */
static const struct metric_family imc_die_events = {
	.name = "uncored_imc_events_total",
	.help = "Memory controller events counted per channel (cycles of the channel's clock; "
		"clockticks is the clock itself).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "die,channel,event",
};

static const struct metric_family *const imc_families[] = {
	&throttle_dram_channel_seconds,
	&throttle_dram_slot_seconds,
	&throttle_dram_bw_slot_seconds,
	&throttle_dram_die_channel_seconds,
	&throttle_dram_critical_seconds,
	&throttle_dram_slot_critical_seconds,
	&throttle_dram_die_critical_seconds,
	&imc_events,
	&imc_die_events,
	&collector_pmu_multiplexing,
};

struct imc_channel {
	int index;                        /* the N of uncore_imc_N */
	int die;                          /* its die of the package */
	struct engine_group *g[MAX_GROUPS];
	uint64_t waiting_ns[MAX_GROUPS];  /* perf has not put the group on counters for this long */
	uint64_t raw[MAX_EVENTS];         /* totals; [0] is the clock */
	double seconds[MAX_EVENTS];
	bool has;
	bool judged;                      /* read over an interval at least once */
	double dclk_hz;                   /* the highest DCLK rate seen; 0: never clocked */
	double ratio;                     /* the last interval's smallest running/enabled; <0 none */
	char unread[COLLECTOR_TEXT_MAX];  /* why a group was not read this interval; "" when read */
	char raw_label[MAX_EVENTS][64];   /* ["DIE" SEP] "N" SEP "event" */
	char seconds_label[MAX_EVENTS][64];
};

/* The channels of a socket, or of a die of a package of several. */
struct imc_socket {
	struct uncore_unit unit;
	int n_channels;
	struct imc_channel channels[MAX_CHANNELS];
};

struct imc_state {
	const struct xeon_uncore *xu;
	struct engine engine;
	size_t n_events;                  /* clock + the generation's throttle events */
	struct engine_event ev[MAX_EVENTS];
	/*
	 * Groups: each the clock and up to 3 events (the channel's 4 counters),
	 * so each ratio is over its own window when the kernel rotates them.
	 */
	int n_groups;
	size_t grp_first[MAX_GROUPS], grp_n[MAX_GROUPS];   /* over ev[1..] */
	struct engine_event gev[MAX_GROUPS][GROUP_SIZE];
	bool multi_die;                   /* die labels: a package has several dies */
	int n_sockets;                    /* one per die of each socket */
	struct imc_socket *sockets;
	size_t n_opened;                  /* groups the kernel accepted at start */
	char first_err[COLLECTOR_TEXT_MAX];   /* the first open's error at start */
};

static void imc_free(struct imc_state *st)
{
	if (!st)
		return;
	for (int i = 0; st->sockets && i < st->n_sockets; i++)
		for (int k = 0; k < st->sockets[i].n_channels; k++)
			for (int j = 0; j < st->n_groups; j++)
				if (st->sockets[i].channels[k].g[j])
					engine_close(&st->engine, st->sockets[i].channels[k].g[j],
						     NULL);
	engine_destroy(&st->engine);
	free(st->sockets);
	free(st);
}

static void plan_events(struct imc_state *st)
{
	const struct xeon_uncore *xu = st->xu;

	st->ev[0] = (struct engine_event){ .name = "clockticks", .code = xu->imc_clock_code,
					   .umask = xu->imc_clock_umask };
	st->n_events = 1;
	for (size_t i = 0; i < xu->n_imc_events && st->n_events < MAX_EVENTS; i++)
		st->ev[st->n_events++] = (struct engine_event){
			.name = xu->imc_events[i].name, .code = xu->imc_events[i].code,
			.umask = xu->imc_events[i].umask,
		};
	for (size_t e = 1; e < st->n_events && st->n_groups < MAX_GROUPS;) {
		int k = st->n_groups++;

		st->grp_first[k] = e;
		st->grp_n[k] = st->n_events - e < GROUP_SIZE - 1 ? st->n_events - e : GROUP_SIZE - 1;
		st->gev[k][0] = st->ev[0];
		for (size_t i = 0; i < st->grp_n[k]; i++)
			st->gev[k][1 + i] = st->ev[e + i];
		e += st->grp_n[k];
	}
}

/*
 * Whether the generation has per-slot throttle events beside per-channel
 * ones (Granite Rapids' BW_SLOT0/1 beside RAPLBLK and MR4BLKEN): then the
 * per-slot ones are throttle_dram_bw_slot_seconds, the same Prometheus
 * family in a JSON field of their own.
 */
static bool mixed_slots(const struct xeon_uncore *xu)
{
	bool slot = false, channel = false;

	for (size_t i = 0; i < xu->n_imc_events; i++)
		if (!xu->imc_events[i].critical) {
			slot |= xu->imc_events[i].per_slot;
			channel |= !xu->imc_events[i].per_slot;
		}
	return slot && channel;
}

static void label_channel(const struct imc_state *st, const struct imc_socket *is,
			  struct imc_channel *ch)
{
	char die[16] = "";

	if (st->multi_die)
		snprintf(die, sizeof(die), "%d" METRIC_LABEL_SEP, is->unit.die);
	for (size_t e = 0; e < st->n_events; e++) {
		snprintf(ch->raw_label[e], sizeof(ch->raw_label[e]), "%s%d" METRIC_LABEL_SEP "%s",
			 die, ch->index, st->ev[e].name);
		if (e > 0 && st->xu->imc_events[e - 1].per_slot)
			snprintf(ch->seconds_label[e], sizeof(ch->seconds_label[e]),
				 "%s%d" METRIC_LABEL_SEP "%d" METRIC_LABEL_SEP "%s", die, ch->index,
				 st->xu->imc_events[e - 1].slot,
				 xeon_dram_cause_name(st->xu->imc_events[e - 1].cause));
		else if (e > 0)
			snprintf(ch->seconds_label[e], sizeof(ch->seconds_label[e]),
				 "%s%d" METRIC_LABEL_SEP "%s", die, ch->index,
				 xeon_dram_cause_name(st->xu->imc_events[e - 1].cause));
	}
}

/* Open a group on every channel of socket is; the channels are the kernel's uncore_imc_N. */
static void open_socket(struct collector *c, struct imc_state *st, struct imc_socket *is)
{
	int cpu = uncore_unit_first_online(c->hw, c->topo, &is->unit);

	if (cpu < 0) {
		collector_degrade(c, "offline", "socket %d die %d: no online CPU", is->unit.socket,
				  is->unit.die);
		return;
	}
	for (int n = 0; n < MAX_CHANNELS; n++) {
		struct imc_channel *ch = &is->channels[is->n_channels];
		char err[256];
		int r = 0;

		for (int k = 0; k < st->n_groups && r != -ENODEV; k++) {
			r = engine_open(&st->engine, ENGINE_PMU_IMC, ENGINE_BOX_TARGET(n, cpu),
					st->gev[k], 1 + st->grp_n[k], &ch->g[k], err, sizeof(err));
			if (r == 0)
				st->n_opened++;
			if (r < 0 && r != -ENODEV) {
				ch->g[k] = NULL;
				collector_degrade(c, "open", "socket %d die %d channel %d: %s",
						  is->unit.socket, is->unit.die, n, err);
				if (!st->first_err[0])
					snprintf(st->first_err, sizeof(st->first_err),
						 "socket %d die %d channel %d: %.140s", is->unit.socket,
						 is->unit.die, n, err);
			}
		}
		if (r == -ENODEV)
			continue;   /* no uncore_imc_N (discovery ids need not be contiguous) */
		ch->index = n;
		ch->die = is->unit.die;
		label_channel(st, is, ch);
		is->n_channels++;
	}
}

static int imc_start(struct collector *c)
{
	const struct xeon_uncore *xu = xeon_uncore_find(c->info->family, c->info->model);
	struct imc_state *st;
	int r;

	if (collector_refuse_disabled(c))
		return -ENOTSUP;
	if (!xu) {
		collector_refuse(c, "%s has no server uncore memory controller", c->info->microarch ?
				 c->info->microarch : "this CPU");
		return -ENOTSUP;
	}
	if (!xu->n_imc_events) {
		collector_refuse(c, "uncored counts no memory controller events on %s",
				 xu->generation);
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->xu = xu;
	plan_events(st);
	/*
	 * Perf only (no msr path): a kernel without uncore_imc_N PMUs (a
	 * virtual machine, a BIOS that hides the iMC PMON devices) is a
	 * missing facility.  No [imc] engine key: there is nothing to choose.
	 */
	r = col_engine_open(c, CONF_ENGINE_AUTO, ENGINE_PMU_IMC, imc_conf_section.name,
			    CONF_CONFLICT_YIELD, &st->engine);
	if (r < 0) {
		free(st);
		return r;
	}
	st->sockets = uncore_unit_array(c->topo, sizeof(*st->sockets), offsetof(struct imc_socket, unit),
				       &st->n_sockets, &st->multi_die);
	if (!st->sockets) {
		imc_free(st);
		return -ENOMEM;
	}
	for (int i = 0; i < st->n_sockets; i++) {
		open_socket(c, st, &st->sockets[i]);
	}
	/*
	 * sysfs lists uncore_imc_N but the kernel refused every event (sysfs
	 * and kernel disagree, as in a container with another host's /sys):
	 * nothing would ever count, so down with the kernel's first reason
	 * rather than up with no samples.
	 */
	if (st->n_opened == 0 && st->first_err[0]) {
		collector_recover(c, "open");
		collector_refuse(c, "the kernel refused every uncore_imc event (%.140s)", st->first_err);
		imc_free(st);
		return -ENODEV;
	}
	c->state = st;
	return 0;
}

/* The family of the seconds of event e (1..) of the generation. */
static const struct metric_family *seconds_family(const struct imc_state *st, size_t e)
{
	const struct xeon_imc_event *x = &st->xu->imc_events[e - 1];

	if (x->critical)
		return x->per_slot ? &throttle_dram_slot_critical_seconds :
		       st->multi_die ? &throttle_dram_die_critical_seconds :
				       &throttle_dram_critical_seconds;
	if (x->per_slot && mixed_slots(st->xu))
		return &throttle_dram_bw_slot_seconds;
	return x->per_slot ? &throttle_dram_slot_seconds :
	       st->multi_die ? &throttle_dram_die_channel_seconds : &throttle_dram_channel_seconds;
}

/*
 * Whether every member of a group of n was on a counter for some of the
 * interval: a group the kernel never scheduled reads 0 but counted nothing.
 */
static bool group_ran(const struct engine_reading *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].state != ENGINE_COUNTING || !r[i].running_ns)
			return false;
	return true;
}

/* Learn the channel's DCLK rate from a group's clock reading (the highest seen). */
static void note_rate(struct imc_channel *ch, const struct engine_reading *clock)
{
	double hz = (double)clock->raw_delta * 1e9 / (double)clock->running_ns;

	if (hz > ch->dclk_hz)
		ch->dclk_hz = hz;
	ch->judged = true;
}

/* Seconds of events (scaled to the interval) at the rate hz, at most the interval. */
static double seconds_at_rate(uint64_t events, double hz, uint64_t enabled_ns)
{
	double sec = hz > 0 ? (double)events / hz : 0.0;

	return sec < (double)enabled_ns / 1e9 ? sec : (double)enabled_ns / 1e9;
}

/* Sample one channel into s.  Returns whether every group it has was read. */
static bool sample_channel(struct collector *c, struct imc_state *st, int socket,
			   struct imc_channel *ch, struct snapshot *s)
{
	int groups = 0, read = 0;

	ch->ratio = -1;
	ch->unread[0] = '\0';
	for (int k = 0; k < st->n_groups; k++) {
		struct engine_reading r[GROUP_SIZE];

		if (!ch->g[k])
			continue;
		groups++;
		switch (col_engine_read(c, &st->engine, ch->g[k], r, &ch->waiting_ns[k], ch->unread,
					sizeof(ch->unread))) {
		case COL_ENGINE_COUNTED:
			break;
		case COL_ENGINE_WAITS:
			read++;
			continue;
		case COL_ENGINE_LOST:
			continue;
		}
		if (!group_ran(r, 1 + st->grp_n[k])) {
			col_engine_lost(c, ch->unread, sizeof(ch->unread),
					"a member of the group was not on a counter");
			continue;
		}
		read++;
		note_rate(ch, &r[0]);
		if (ch->ratio < 0 || engine_reading_ratio(&r[0]) < ch->ratio)
			ch->ratio = engine_reading_ratio(&r[0]);
		/* The clock is in every group: its raw total comes from the first. */
		if (k == 0)
			ch->raw[0] += r[0].delta;
		for (size_t i = 0; i < st->grp_n[k]; i++) {
			size_t e = st->grp_first[k] + i;

			ch->raw[e] += r[1 + i].delta;
			ch->seconds[e] += seconds_at_rate(r[1 + i].delta, ch->dclk_hz,
							  r[0].enabled_ns);
		}
		ch->has = true;
	}
	/* A channel that has never clocked is no channel (yet): no series. */
	if (!ch->has || ch->dclk_hz <= 0)
		return false;
	if (c->engine == ENGINE_PERF && ch->ratio >= 0)
		collector_add_multiplexing(c, s, socket, st->multi_die ? ch->die : -1, ch->index,
					   ch->ratio);
	for (size_t e = 0; e < st->n_events; e++) {
		snapshot_add_sample(s, st->multi_die ? &imc_die_events : &imc_events, socket,
				    ch->raw_label[e], ch->raw[e], 0);
		if (e > 0)
			snapshot_add_sample(s, seconds_family(st, e), socket, ch->seconds_label[e], 0,
					    ch->seconds[e]);
	}
	return groups > 0 && read == groups;
}

/*
 * Say which channels of is have never clocked (left out), or clear it.
 * One degradation per socket (and die), keyed by it.
 */
static void note_clockless(struct collector *c, const struct imc_state *st,
			   const struct imc_socket *is)
{
	char key[64], where[32], list[COLLECTOR_TEXT_MAX] = "";
	size_t used = 0;

	snprintf(key, sizeof(key), "clockless socket %d die %d", is->unit.socket, is->unit.die);
	for (int k = 0; k < is->n_channels; k++) {
		const struct imc_channel *ch = &is->channels[k];

		if (ch->judged && ch->dclk_hz <= 0 && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d",
						 used ? ", " : "", ch->index);
	}
	if (!used) {
		collector_recover(c, key);
		return;
	}
	if (st->multi_die)
		snprintf(where, sizeof(where), "socket %d die %d", is->unit.socket, is->unit.die);
	else
		snprintf(where, sizeof(where), "socket %d", is->unit.socket);
	collector_degrade(c, key, "%s: memory channel %.100s left out: its clock never advanced "
			  "(the kernel registers it, no memory is behind it)", where, list);
}

static void imc_sample(struct collector *c, struct snapshot *s)
{
	struct imc_state *st = c->state;
	unsigned n = 0, counting = 0, n_unread = 0;
	const char *unread = NULL;

	/* The units: every memory channel of every socket (and die) but the clockless. */
	for (int i = 0; st && i < st->n_sockets; i++) {
		for (int k = 0; k < st->sockets[i].n_channels; k++) {
			struct imc_channel *ch = &st->sockets[i].channels[k];
			bool here = sample_channel(c, st, st->sockets[i].unit.socket, ch, s);

			n += !(ch->judged && ch->dclk_hz <= 0);
			counting += here;
			if (ch->unread[0]) {
				n_unread++;
				unread = unread ? unread : ch->unread;
			}
		}
		note_clockless(c, st, &st->sockets[i]);
	}
	if (!st)
		return;
	col_engine_note_unread(c, n_unread, n, "memory channels", unread);
	collector_units(c, n, counting);
}

static void imc_stop(struct collector *c)
{
	imc_free(c->state);
	c->state = NULL;
}

static void imc_list_events(const struct cpu_info *info, struct strbuf *out)
{
	const struct xeon_uncore *xu = xeon_uncore_find(info->family, info->model);

	if (!xu || !xu->n_imc_events) {
		strbuf_append(out, "imc: not available (uncored counts no memory controller "
			      "throttling on this model)\n");
		return;
	}
	strbuf_append(out, "imc (per socket and memory channel, the uncore_imc_N perf PMUs):\n");
	strbuf_printf(out, "    %-34s event=0x%02x umask=0x%02x\n", "clockticks", xu->imc_clock_code,
		      xu->imc_clock_umask);
	for (size_t i = 0; i < xu->n_imc_events; i++)
		strbuf_printf(out, "    %-34s event=0x%02x umask=0x%02x (cause %s%s)\n",
			      xu->imc_events[i].name, xu->imc_events[i].code,
			      xu->imc_events[i].umask, xeon_dram_cause_name(xu->imc_events[i].cause),
			      xu->imc_events[i].critical ? ", critical" : "");
}

/* DRAM throttled, by each cause the generation's throttle events tell. */
static unsigned imc_throttle_signals(const struct cpu_info *info, const struct conf *conf)
{
	const struct xeon_uncore *xu = xeon_uncore_find(info->family, info->model);
	static const enum throttle_signal sig[] = {
		[XEON_CAUSE_THERMAL] = THROTTLE_DRAM_THERMAL,
		[XEON_CAUSE_POWER] = THROTTLE_DRAM_POWER,
		[XEON_CAUSE_THERMAL_OR_POWER] = THROTTLE_DRAM_THERMAL_OR_POWER,
	};
	unsigned mask = 0;

	(void)conf;
	for (size_t e = 0; xu && e < xu->n_imc_events; e++)
		if (!xu->imc_events[e].critical)
			mask |= THROTTLE_BIT(sig[xu->imc_events[e].cause]);
	return mask;
}

/* Whether it counts through perf (now or once a reload enables it): where the kernel has uncore_imc_N. */
static bool imc_uses_perf(const struct conf *conf, struct perf_sys *ps)
{
	struct col_engine_choice ch;

	(void)conf;
	return col_engine_choose(CONF_ENGINE_PERF, ENGINE_PMU_IMC, imc_conf_section.name, ps,
				 &ch) == 0;
}

_Static_assert(sizeof(struct imc_settings) <= CONF_SETTINGS_BYTES,
	       "the [imc] settings fit the collector's block of struct conf");

const struct collector_ops imc_collector_ops = {
	.name = "imc",
	.start = imc_start,
	.sample = imc_sample,
	.stop = imc_stop,
	.families = imc_families,
	.n_families = sizeof(imc_families) / sizeof(imc_families[0]),
	.conf_section = &imc_conf_section,
	.list_events = imc_list_events,
	.throttle_signals = imc_throttle_signals,
	.uses_perf = imc_uses_perf,
};
