/*
 * The PCU collector: per socket (per die on packages of several dies, with
 * a die label), the server uncore's power control unit
 * counts cycles of its own clock (pclk) and cycles of external and
 * internal PROCHOT and of a thermally or power-limited maximum frequency
 * (hardware-linux.md §4.2).  Each becomes seconds as its cycles over the
 * same box's clockticks of the same group, times the interval's wall time
 * (§4.4, throttle_families.h), and the raw counts stay available per event.
 *
 * The box has 4 counters: one group holds clockticks, PROCHOT external,
 * PROCHOT internal and the thermal frequency limit; the power frequency
 * limit is a second group with its own clockticks, so each ratio is taken
 * over one window even while the kernel rotates the two (§4.2).  The msr
 * engine does not rotate, so through MSRs only the first group is counted.
 *
 * Counting goes through the perf engine on the kernel's PCU PMU when the
 * machine offers perf and has the PMU: uncore_pcu, or on Granite Rapids one
 * instance per compute die, uncore_pcu_N (uncore_type_4_N without the
 * platform's table), every one of which is counted, the unit's series
 * being per interval the highest of its instances' (struct pcu_socket); otherwise (or with engine =
 * msr) through the msr engine at the PCU's fixed MSR addresses (0xC24… on
 * SNB-EP/IVT, 0x710… on HSX…ICX), under the same ownership and restore
 * rules as every other register.  From Sapphire Rapids on the PCU has no
 * fixed addresses (§4.1): perf only.
 *
 * A frozen box (BOX_CTL.FRZ, left set by perf's disable_box or another
 * agent, hardware-linux.md §6) counts nothing: its interval is "waiting",
 * said in the status, and adds nothing, never 0 seconds.  Under perf a box
 * is taken as frozen when its clock did not advance (pclk never stops),
 * and the status says only that, since perf shows no BOX_CTL; through
 * MSRs when, besides, BOX_CTL has FRZ set.  Each box (each instance on
 * Granite Rapids) stands alone: one frozen, or one whose PMU the kernel's
 * sysfs files do not describe readably, leaves the others counting.  A group read that fails, or whose
 * group perf does not put on the counters for half an interval (another
 * user holds them, §4.5 item 6), is an error (uncored_sample_errors_total)
 * and adds nothing.
 * Under perf each box's smallest time running over time enabled is
 * exported (uncored_pmu_multiplexing_ratio).
 */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "col_engine.h"
#include "collector.h"
#include "engine.h"
#include "msr.h"
#include "throttle_signal.h"
#include "throttle_families.h"
#include "uncore_unit.h"
#include "xeon_uncore.h"

/* The [pcu] section. */
struct pcu_settings {
	bool enabled;
	enum conf_engine engine;         /* chosen by col_engine.h */
};

static const struct conf_key pcu_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct pcu_settings, enabled), .def = "yes" },
	{ "engine", CONF_KIND_ENUM, CONF_SETTING(struct pcu_settings, engine),
	  .names = conf_engine_names, .def = "auto" },
};

static const struct conf_section pcu_conf_section = {
	.name = "pcu", .keys = pcu_keys, .n_keys = sizeof(pcu_keys) / sizeof(pcu_keys[0]),
	.settings_size = sizeof(struct pcu_settings),
};

extern const struct collector_ops pcu_collector_ops;

static const struct pcu_settings *settings(const struct conf *conf)
{
	return collector_settings(conf, &pcu_collector_ops);
}

/* Raw counts: uncored_pcu_events_total{socket,event}. */
static const struct metric_family pcu_events = {
	.name = "uncored_pcu_events_total",
	.help = "PCU events counted (cycles of the PCU clock; clockticks is the clock itself).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "event",
};

/* The same on packages of several dies: uncored_pcu_events_total{socket,die,event}. */
static const struct metric_family pcu_die_events = {
	.name = "uncored_pcu_events_total",
	.help = "PCU events counted (cycles of the PCU clock; clockticks is the clock itself).",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.label = "die,event",
};

static const struct metric_family *const pcu_families[] = {
	&throttle_prochot_seconds,
	&throttle_prochot_die_seconds,
	&throttle_frequency_limited_seconds,
	&throttle_frequency_limited_die_seconds,
	&pcu_events,
	&pcu_die_events,
	&collector_pmu_multiplexing,
};

/* The label of each event: its raw event name and, for seconds, the family and label. */
static const struct {
	const char *name;
	const struct metric_family *family;   /* NULL: clockticks */
	const struct metric_family *die_family;
	const char *label;
} pcu_event_info[XEON_PCU_N_EVENTS] = {
	[XEON_PCU_CLOCKTICKS] = { "clockticks", NULL, NULL, NULL },
	[XEON_PCU_PROCHOT_EXTERNAL] = { "prochot_external_cycles", &throttle_prochot_seconds,
					&throttle_prochot_die_seconds, "external" },
	[XEON_PCU_PROCHOT_INTERNAL] = { "prochot_internal_cycles", &throttle_prochot_seconds,
					&throttle_prochot_die_seconds, "internal" },
	[XEON_PCU_FREQ_THERMAL] = { "freq_max_limit_thermal_cycles",
				    &throttle_frequency_limited_seconds,
				    &throttle_frequency_limited_die_seconds, "thermal" },
	[XEON_PCU_FREQ_POWER] = { "freq_max_power_cycles", &throttle_frequency_limited_seconds,
				  &throttle_frequency_limited_die_seconds, "power" },
};

#define MAX_GROUPS 2
#define MAX_PER_GROUP 4
#define MAX_INSTANCES 8

/* One group: clockticks first, then events of enum xeon_pcu_event. */
struct pcu_group {
	struct engine_group *g;
	uint64_t waiting_ns;             /* perf has not put it on counters for this long */
	size_t n;
	enum xeon_pcu_event which[MAX_PER_GROUP];
	struct engine_event ev[MAX_PER_GROUP];
};

/* One PCU box: an instance of the kernel's PCU PMU (uncore_pcu_N) in a unit. */
struct pcu_box {
	struct pcu_group groups[MAX_GROUPS];
	size_t n_groups;
	double ratio;                    /* the last interval's smallest running/enabled; <0 none */
	bool frozen;                     /* the last interval's clock did not advance */
	char unread[COLLECTOR_TEXT_MAX]; /* why a group was not read this interval; "" when read */
};

/* One interval's counts and seconds of a unit, or of one of its boxes. */
struct pcu_interval {
	uint64_t raw[XEON_PCU_N_EVENTS];
	double seconds[XEON_PCU_N_EVENTS];
	bool has[XEON_PCU_N_EVENTS];
};

/*
 * The PCU of a socket, or of a die of a package of several: one box, or
 * several on Granite Rapids (one per compute die, uncore_pcu_N), whose
 * series are one: per interval, each event's count and seconds are the
 * highest of any box's (the conditions are the package's; which box counts
 * them is not known, and a sum would count one condition once per box).
 */
struct pcu_socket {
	struct uncore_unit unit;
	char raw_label[XEON_PCU_N_EVENTS][64];     /* ["DIE" SEP] "event" */
	char sec_label[XEON_PCU_N_EVENTS][32];     /* ["DIE" SEP] "source" or "reason" */
	struct pcu_box box[MAX_INSTANCES];
	int n_boxes;
	uint64_t raw[XEON_PCU_N_EVENTS];          /* totals of the raw counts */
	double seconds[XEON_PCU_N_EVENTS];        /* totals of the seconds */
	bool has[XEON_PCU_N_EVENTS];
};

struct pcu_state {
	const struct xeon_uncore *xu;
	struct engine engine;
	bool multi_die;                   /* die labels: a package has several dies */
	int n_sockets;                    /* boxes: one per die of each socket */
	struct pcu_socket *sockets;
};

static void pcu_free(struct pcu_state *st)
{
	if (!st)
		return;
	for (int i = 0; st->sockets && i < st->n_sockets; i++)
		for (int b = 0; b < st->sockets[i].n_boxes; b++)
			for (size_t k = 0; k < st->sockets[i].box[b].n_groups; k++)
				if (st->sockets[i].box[b].groups[k].g)
					engine_close(&st->engine, st->sockets[i].box[b].groups[k].g,
						     NULL);
	engine_destroy(&st->engine);
	free(st->sockets);
	free(st);
}

/* The label values of ps's samples, with the die first on packages of several. */
static void label_box(const struct pcu_state *st, struct pcu_socket *ps)
{
	for (int w = 0; w < XEON_PCU_N_EVENTS; w++) {
		const char *sec = pcu_event_info[w].label ? pcu_event_info[w].label : "";

		if (st->multi_die) {
			snprintf(ps->raw_label[w], sizeof(ps->raw_label[w]), "%d" METRIC_LABEL_SEP "%s",
				 ps->unit.die, pcu_event_info[w].name);
			snprintf(ps->sec_label[w], sizeof(ps->sec_label[w]), "%d" METRIC_LABEL_SEP "%s",
				 ps->unit.die, sec);
		} else {
			snprintf(ps->raw_label[w], sizeof(ps->raw_label[w]), "%s",
				 pcu_event_info[w].name);
			snprintf(ps->sec_label[w], sizeof(ps->sec_label[w]), "%s", sec);
		}
	}
}

/* Add event which to group k of ps when the generation has it. */
static void plan(const struct xeon_uncore *xu, struct pcu_group *pg, enum xeon_pcu_event which)
{
	if (xu->pcu_code[which] == XEON_NO_EVENT || pg->n == MAX_PER_GROUP)
		return;
	pg->which[pg->n] = which;
	pg->ev[pg->n] = (struct engine_event){
		.name = pcu_event_info[which].name, .code = (uint8_t)xu->pcu_code[which],
	};
	pg->n++;
}

static void plan_box(const struct xeon_uncore *xu, struct pcu_box *ps)
{
	static const enum xeon_pcu_event first[] = {
		XEON_PCU_CLOCKTICKS, XEON_PCU_PROCHOT_EXTERNAL, XEON_PCU_PROCHOT_INTERNAL,
		XEON_PCU_FREQ_THERMAL,
	};

	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		plan(xu, &ps->groups[0], first[i]);
	plan(xu, &ps->groups[1], XEON_PCU_CLOCKTICKS);
	plan(xu, &ps->groups[1], XEON_PCU_FREQ_POWER);
	ps->n_groups = ps->groups[1].n > 1 ? 2 : 1;
}

/*
 * The engine [pcu] engine and the machine allow (col_engine.h): perf on
 * uncore_pcu, or the PCU box at its fixed MSR addresses under the msr
 * engine's ownership rule where the generation has them.
 */
static int choose_engine(struct collector *c, struct pcu_state *st)
{
	return col_engine_open(c, settings(c->conf)->engine, ENGINE_PMU_PCU, pcu_conf_section.name,
			       CONF_CONFLICT_YIELD, &st->engine);
}

/*
 * Plan and open every box's groups with st->engine, noting a box that
 * cannot be opened or has no online CPU (collector_degrade).  Returns how
 * many groups opened; *ret_tried says whether any open was attempted, and
 * first_err holds the first open's error.
 */
/*
 * Plan and open the groups of box b of ps on cpu (its unit's CPU), noting
 * a group that cannot be opened (collector_degrade, and first_err).
 * Returns how many opened.
 */
static size_t open_box(struct collector *c, struct pcu_state *st, struct pcu_socket *ps, int b,
		       int cpu, bool *ret_tried, char *first_err, size_t errlen)
{
	struct pcu_box *box = &ps->box[b];
	size_t opened = 0;
	char where[48] = "";
	int r;

	plan_box(st->xu, box);
	if (ps->n_boxes > 1)
		snprintf(where, sizeof(where), " PCU %d", b);
	/*
	 * The msr engine does not rotate groups: the box's 4 counters hold
	 * the first group, and FREQ_MAX_POWER would need a fifth.  RAPL's
	 * package throttled time (the thermal collector) covers power limits.
	 */
	if (c->engine == ENGINE_MSR && box->n_groups > 1) {
		box->n_groups = 1;
		collector_note(c, "FREQ_MAX_POWER is not counted through MSRs (the PCU box "
			       "has 4 counters); perf's uncore_pcu PMU counts it");
	}
	for (size_t k = 0; k < box->n_groups; k++) {
		struct pcu_group *pg = &box->groups[k];
		char err[256];

		r = engine_open(&st->engine, ENGINE_PMU_PCU, ENGINE_BOX_TARGET(b, cpu), pg->ev,
				pg->n, &pg->g, err, sizeof(err));
		*ret_tried = true;
		if (r == 0) {
			opened++;
			continue;
		}
		collector_degrade(c, "open", "socket %d die %d%s: %s", ps->unit.socket,
				  ps->unit.die, where, err);
		if (!first_err[0])
			snprintf(first_err, errlen, "socket %d die %d%s: %.150s", ps->unit.socket,
				 ps->unit.die, where, err);
	}
	return opened;
}

/*
 * Plan and open every unit's boxes with st->engine (as many as the engine
 * has PCU instances), noting a box that cannot be opened or a unit with no
 * online CPU (collector_degrade).  Returns how many groups opened;
 * *ret_tried says whether any open was attempted, and first_err holds the
 * first open's error.
 */
static size_t open_boxes(struct collector *c, struct pcu_state *st, bool *ret_tried,
			 char *first_err, size_t errlen)
{
	int n_boxes = engine_n_boxes(&st->engine, ENGINE_PMU_PCU);
	size_t opened = 0;

	*ret_tried = false;
	first_err[0] = '\0';
	for (int i = 0; i < st->n_sockets; i++) {
		struct pcu_socket *ps = &st->sockets[i];
		int cpu = uncore_unit_first_online(c->hw, c->topo, &ps->unit);

		label_box(st, ps);
		ps->n_boxes = n_boxes < 1 ? 1 : n_boxes > MAX_INSTANCES ? MAX_INSTANCES : n_boxes;
		for (int b = 0; cpu >= 0 && b < ps->n_boxes; b++)
			opened += open_box(c, st, ps, b, cpu, ret_tried, first_err, errlen);
		if (cpu < 0)
			collector_degrade(c, "offline", "socket %d die %d: no online CPU",
					  ps->unit.socket, ps->unit.die);
	}
	return opened;
}

/*
 * engine = auto chose perf because the sysfs tree lists uncore_pcu, but
 * the kernel refused every event (sysfs and kernel disagree, as in a
 * container with another host's /sys): count through the PCU box's MSRs
 * instead, where the generation has them.  0 when nothing changed or the
 * msr engine now holds every box it could open; else a negative errno.
 */
static int fall_back_to_msr(struct collector *c, struct pcu_state *st, const char *perf_err)
{
	char err[COLLECTOR_TEXT_MAX];
	bool tried;
	int r;

	engine_destroy(&st->engine);
	r = col_engine_new(c, ENGINE_MSR, CONF_CONFLICT_YIELD, &st->engine, err, sizeof(err));
	if (r < 0)
		return r;
	snprintf(c->engine_why, sizeof(c->engine_why), "engine = auto falls back to msr: the "
		 "kernel refused every uncore_pcu event (%.110s)", perf_err);
	collector_recover(c, "open");
	for (int i = 0; i < st->n_sockets; i++)
		memset(st->sockets[i].box, 0, sizeof(st->sockets[i].box));
	open_boxes(c, st, &tried, err, sizeof(err));
	return 0;
}

static int pcu_start(struct collector *c)
{
	const struct xeon_uncore *xu = xeon_uncore_find(c->info->family, c->info->model);
	struct pcu_state *st;
	int r;

	if (collector_refuse_disabled(c))
		return -ENOTSUP;
	if (!xu) {
		collector_refuse(c, "%s has no server uncore PCU", c->info->microarch ?
				 c->info->microarch : "this CPU");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->xu = xu;
	r = choose_engine(c, st);
	if (r < 0) {
		free(st);
		return r;
	}
	st->sockets = uncore_unit_array(c->topo, sizeof(*st->sockets), offsetof(struct pcu_socket, unit),
				       &st->n_sockets, &st->multi_die);
	if (!st->sockets) {
		pcu_free(st);
		return -ENOMEM;
	}
	{
		bool tried;
		char err[COLLECTOR_TEXT_MAX];

		if (open_boxes(c, st, &tried, err, sizeof(err)) == 0 && tried &&
		    c->engine == ENGINE_PERF && st->xu->pcu_msr &&
		    settings(c->conf)->engine == CONF_ENGINE_AUTO &&
		    (r = fall_back_to_msr(c, st, err)) < 0) {
			pcu_free(st);
			return r;
		}
	}
	c->state = st;
	return 0;
}

/*
 * Whether the box of ps whose clock reading r0 did not advance is frozen:
 * under perf, yes; through MSRs when its BOX_CTL (read on the unit's CPU)
 * has FRZ set.
 */
static bool box_frozen(struct collector *c, const struct pcu_state *st,
		       const struct pcu_socket *ps, const struct engine_reading *r0)
{
	uint64_t ctl;
	int cpu;

	if (r0->state != ENGINE_COUNTING || !r0->running_ns || r0->raw_delta)
		return false;
	if (c->engine != ENGINE_MSR)
		return true;
	cpu = uncore_unit_first_online(c->hw, c->topo, &ps->unit);
	return st->xu->pcu_msr && cpu >= 0 &&
	       hw_read_msr(c->hw, cpu, st->xu->pcu_msr->box_ctl, &ctl) == 0 &&
	       (ctl & PMON_BOX_CTL_FRZ);
}

/*
 * Read group pg of a box into one interval of that box.  Returns whether
 * it was read: a group that waits its turn on the counters is, with
 * nothing to add.
 */
static bool sample_group(struct collector *c, struct pcu_state *st, const struct pcu_socket *ps,
			 struct pcu_box *box, struct pcu_group *pg, struct pcu_interval *iv)
{
	struct engine_reading r[MAX_PER_GROUP];
	double ratio;

	if (!pg->g)
		return false;
	switch (col_engine_read(c, &st->engine, pg->g, r, &pg->waiting_ns, box->unread,
				sizeof(box->unread))) {
	case COL_ENGINE_COUNTED:
		break;
	case COL_ENGINE_WAITS:
		return true;
	case COL_ENGINE_LOST:
		return false;
	}
	if (box_frozen(c, st, ps, &r[0])) {
		box->frozen = true;
		return false;
	}
	ratio = engine_reading_ratio(&r[0]);
	if (r[0].state == ENGINE_COUNTING && (box->ratio < 0 || ratio < box->ratio))
		box->ratio = ratio;
	for (size_t i = 0; i < pg->n; i++) {
		enum xeon_pcu_event w = pg->which[i];

		/* An event without a counter (another agent holds the box's) is left out. */
		if (r[i].state != ENGINE_COUNTING || (i > 0 && r[0].state != ENGINE_COUNTING))
			continue;
		/* clockticks is in both groups: its raw count comes from the first. */
		if (w != XEON_PCU_CLOCKTICKS || pg == &box->groups[0])
			iv->raw[w] += r[i].delta;
		iv->has[w] = true;
		if (w != XEON_PCU_CLOCKTICKS)
			iv->seconds[w] += throttle_seconds(r[i].raw_delta, r[0].raw_delta,
							   r[0].enabled_ns);
	}
	return true;
}

/*
 * Say that box b of ps is frozen ("waiting"), or clear it, with what was
 * seen: through MSRs BOX_CTL.FRZ itself; under perf, which shows no box
 * control, only that the clock did not advance.
 */
static void note_frozen(struct collector *c, const struct pcu_socket *ps, int b)
{
	char key[64];

	snprintf(key, sizeof(key), "frozen socket %d die %d PCU %d", ps->unit.socket,
		 ps->unit.die, b);
	if (!ps->box[b].frozen) {
		collector_recover(c, key);
		return;
	}
	if (c->engine == ENGINE_MSR)
		collector_degrade(c, key, "socket %d die %d PCU %d: waiting: the box is frozen (its "
				  "clock did not advance: BOX_CTL.FRZ is set), nothing counted this "
				  "interval", ps->unit.socket, ps->unit.die, b);
	else
		collector_degrade(c, key, "socket %d die %d PCU %d: waiting: its clock did not "
				  "advance (clockticks counted 0 while running), nothing counted this "
				  "interval", ps->unit.socket, ps->unit.die, b);
}

/*
 * Sample every box of ps and add the interval, each event the highest of
 * any box's.  Adds to *counting the boxes whose every group was read.
 */
static void sample_socket(struct collector *c, struct pcu_state *st, struct pcu_socket *ps,
			  unsigned *counting)
{
	struct pcu_interval unit = { 0 };

	for (int b = 0; b < ps->n_boxes; b++) {
		struct pcu_interval iv = { 0 };
		size_t read = 0;

		ps->box[b].ratio = -1;
		ps->box[b].frozen = false;
		ps->box[b].unread[0] = '\0';
		for (size_t k = 0; k < ps->box[b].n_groups; k++)
			read += sample_group(c, st, ps, &ps->box[b], &ps->box[b].groups[k], &iv);
		*counting += read > 0 && read == ps->box[b].n_groups;
		note_frozen(c, ps, b);
		for (int w = 0; w < XEON_PCU_N_EVENTS; w++) {
			if (!iv.has[w])
				continue;
			if (!unit.has[w] || iv.raw[w] > unit.raw[w])
				unit.raw[w] = iv.raw[w];
			if (!unit.has[w] || iv.seconds[w] > unit.seconds[w])
				unit.seconds[w] = iv.seconds[w];
			unit.has[w] = true;
		}
	}
	for (int w = 0; w < XEON_PCU_N_EVENTS; w++) {
		if (!unit.has[w])
			continue;
		ps->raw[w] += unit.raw[w];
		ps->seconds[w] += unit.seconds[w];
		ps->has[w] = true;
	}
}

static void pcu_sample(struct collector *c, struct snapshot *s)
{
	struct pcu_state *st = c->state;
	unsigned n = 0, counting = 0, n_unread = 0;
	const char *unread = NULL;

	for (int i = 0; st && i < st->n_sockets; i++) {
		struct pcu_socket *ps = &st->sockets[i];
		int socket = ps->unit.socket;

		/* The units: every PCU box (perf PMU instance, or MSR box) of every socket. */
		n += (unsigned)ps->n_boxes;
		sample_socket(c, st, ps, &counting);
		for (int b = 0; b < ps->n_boxes; b++) {
			if (!ps->box[b].unread[0])
				continue;
			n_unread++;
			unread = unread ? unread : ps->box[b].unread;
		}
		for (int b = 0; c->engine == ENGINE_PERF && b < ps->n_boxes; b++)
			if (ps->box[b].ratio >= 0)
				collector_add_multiplexing(c, s, socket,
							   st->multi_die ? ps->unit.die : -1, b,
							   ps->box[b].ratio);
		for (int w = 0; w < XEON_PCU_N_EVENTS; w++) {
			if (!ps->has[w])
				continue;
			snapshot_add_sample(s, st->multi_die ? &pcu_die_events : &pcu_events, socket,
					    ps->raw_label[w], ps->raw[w], 0);
			if (pcu_event_info[w].family)
				snapshot_add_sample(s, st->multi_die ? pcu_event_info[w].die_family :
						    pcu_event_info[w].family, socket,
						    ps->sec_label[w], 0, ps->seconds[w]);
		}
	}
	if (!st)
		return;
	col_engine_note_unread(c, n_unread, n, "PCU boxes", unread);
	collector_units(c, n, counting);
}

static void pcu_stop(struct collector *c)
{
	pcu_free(c->state);
	c->state = NULL;
}

static void pcu_list_events(const struct cpu_info *info, struct strbuf *out)
{
	const struct xeon_uncore *xu = xeon_uncore_find(info->family, info->model);

	if (!xu) {
		strbuf_append(out, "pcu: not available (no server uncore PCU on this model)\n");
		return;
	}
	strbuf_printf(out, "pcu (per socket, the uncore_pcu perf PMU%s; %d counters):\n",
		      xu->pcu_msr ? ", or the PCU's MSRs" : "", PCU_N_COUNTERS);
	for (int w = 0; w < XEON_PCU_N_EVENTS; w++)
		if (xu->pcu_code[w] != XEON_NO_EVENT)
			strbuf_printf(out, "    %-34s event=0x%02x\n", pcu_event_info[w].name,
				      xu->pcu_code[w]);
}

/* The signals the generation's PCU events give (its PCU, through either engine). */
static unsigned pcu_throttle_signals(const struct cpu_info *info, const struct conf *conf)
{
	const struct xeon_uncore *xu = xeon_uncore_find(info->family, info->model);
	static const enum throttle_signal sig[XEON_PCU_N_EVENTS] = {
		[XEON_PCU_CLOCKTICKS] = THROTTLE_N_SIGNALS,
		[XEON_PCU_PROCHOT_EXTERNAL] = THROTTLE_PROCHOT_EXTERNAL,
		[XEON_PCU_PROCHOT_INTERNAL] = THROTTLE_PROCHOT_INTERNAL,
		[XEON_PCU_FREQ_THERMAL] = THROTTLE_FREQ_THERMAL,
		[XEON_PCU_FREQ_POWER] = THROTTLE_FREQ_POWER,
	};
	unsigned mask = 0;

	if (!xu)
		return 0;
	for (int w = 0; w < XEON_PCU_N_EVENTS; w++) {
		if (sig[w] == THROTTLE_N_SIGNALS || xu->pcu_code[w] == XEON_NO_EVENT)
			continue;
		/* Through MSRs the power limit does not fit the box's counters (pcu_start). */
		if (w == XEON_PCU_FREQ_POWER && settings(conf)->engine == CONF_ENGINE_MSR)
			continue;
		mask |= THROTTLE_BIT(sig[w]);
	}
	return mask;
}

/*
 * Whether it counts through perf with conf: where the kernel has uncore_pcu
 * and [pcu] engine is not msr.  Asked before the CPU is known, so a kernel
 * with the PMU is enough (only a server uncore has it).
 */
static bool pcu_uses_perf(const struct conf *conf, struct perf_sys *ps)
{
	struct col_engine_choice ch;

	return col_engine_choose(settings(conf)->engine, ENGINE_PMU_PCU, pcu_conf_section.name, ps,
				 &ch) == 0 && ch.kind == ENGINE_PERF;
}

_Static_assert(sizeof(struct pcu_settings) <= CONF_SETTINGS_BYTES,
	       "the [pcu] settings fit the collector's block of struct conf");

const struct collector_ops pcu_collector_ops = {
	.name = "pcu",
	.start = pcu_start,
	.sample = pcu_sample,
	.stop = pcu_stop,
	.families = pcu_families,
	.n_families = sizeof(pcu_families) / sizeof(pcu_families[0]),
	.conf_section = &pcu_conf_section,
	.list_events = pcu_list_events,
	.throttle_signals = pcu_throttle_signals,
	.uses_perf = pcu_uses_perf,
};
