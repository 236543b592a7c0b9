/*
 * The uncore collector: counts Nehalem/Westmere uncore events (DRAM thermal
 * throttling, PROCHOT, core thermal throttling) and the uncore clock on
 * every socket, through one online CPU of the socket since the registers
 * are package scope (hardware.md §1.1).  It claims only counters nobody
 * else has enabled, changes registers only through the pmu ledger, checks
 * its event selects every sample and puts everything back on stop.  It
 * does not log; it reports through the collector status and the snapshot.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "counter.h"
#include "event.h"
#include "msr.h"
#include "pmu.h"

/*
 * A generous upper bound of the uncore clock.  Real parts run UCLK at
 * about 2-3 GHz (hardware.md §1.3); the bound only serves the check that
 * the sampling interval stays far below the counters' wrap period.
 */
#define UNCORE_MAX_CLOCK_HZ 4e9

#define UNCORE_MAX_EVENTS SNAPSHOT_MAX_EVENTS

/* All 8 generic enable bits of MSR_UNCORE_PERF_GLOBAL_CTRL, hardware.md §1.5. */
#define UNC_GLOBAL_CTRL_EN_PC_ALL ((UINT64_C(1) << UNCORE_N_COUNTERS) - 1)

struct uncore_event {
	const struct event_spec *spec;   /* into uncore_state.specs */
	bool is_counting;
	int pmc;                         /* counter index, -1 when none */
	uint64_t evtsel;                 /* what PERFEVTSELn must read back */
	struct counter ctr;
	char reason[96];                 /* why not counting */
};

struct uncore_socket {
	int socket;
	const struct cpu_socket *cs;     /* its CPUs, in the borrowed topology */
	int cpu;                         /* the CPU all access goes through */
	bool is_up;                      /* programmed at start */
	bool is_stale;                   /* no CPU of the socket could be read */
	int n_events;
	struct uncore_event events[UNCORE_MAX_EVENTS];
	bool has_fixed;
	struct counter fixed;
	uint64_t conflicts;
};

struct uncore_state {
	struct pmu_ledger *ledger;
	int n_specs;
	struct event_spec specs[UNCORE_MAX_EVENTS];
	int n_sockets;
	struct uncore_socket *sockets;
	bool has_noted_lost;
};

static uint32_t evtsel_msr(int n)
{
	return MSR_UNCORE_PERFEVTSEL0 + (uint32_t)n;
}

static uint32_t pmc_msr(int n)
{
	return MSR_UNCORE_PMC0 + (uint32_t)n;
}

/* Whether the collector is on and this model has the Nehalem/Westmere uncore PMU. */
static int check_facility(struct collector *c)
{
	const struct cpu_info *info = c->info;

	if (!c->conf->uncore_enabled) {
		collector_refuse(c, "disabled in the configuration");
		return -ENOTSUP;
	}
	if (!info->fac.has_nhm_uncore) {
		collector_refuse(c,
				 "this CPU (%s, family %u model 0x%02x) has no Nehalem/Westmere uncore PMU at "
				 "MSR 0x391/0x3c0; uncore thermal events are not available",
				 info->microarch ? info->microarch : "unknown", info->family, info->model);
		return -ENOTSUP;
	}
	return 0;
}

/* A counter that may wrap twice between two samples cannot be accumulated. */
static int check_interval(struct collector *c)
{
	double wrap_s = counter_wrap_period_s(UNCORE_COUNTER_WIDTH, UNCORE_MAX_CLOCK_HZ);

	if (c->conf->interval_s <= wrap_s / 4)
		return 0;
	collector_refuse(c,
			 "interval %.0f s is too long: the %d-bit uncore counters can wrap every %.0f s, "
			 "so the interval must be at most %.0f s", c->conf->interval_s,
			 UNCORE_COUNTER_WIDTH, wrap_s, wrap_s / 4);
	return -EINVAL;
}

static int add_spec(struct collector *c, struct uncore_state *st, const struct event_spec *spec)
{
	for (int i = 0; i < st->n_specs; i++)
		if (strcmp(st->specs[i].name, spec->name) == 0)
			return 0;
	if (st->n_specs == UNCORE_MAX_EVENTS) {
		collector_refuse(c,
				 "too many uncore events: at most %d can be reported, defaults included; "
				 "remove some or turn the default events off", UNCORE_MAX_EVENTS);
		return -EINVAL;
	}
	st->specs[st->n_specs++] = *spec;
	return 0;
}

/* The defaults when configured, then the configured events; names once. */
static int build_event_list(struct collector *c, struct uncore_state *st)
{
	const struct conf *conf = c->conf;
	int err;

	if (conf->uncore_default_events) {
		size_t n;
		const struct event_spec *const *defaults = event_defaults(EVENT_PMU_UNCORE, &n);

		for (size_t i = 0; i < n; i++) {
			err = add_spec(c, st, defaults[i]);
			if (err)
				return err;
		}
	}
	for (int i = 0; i < conf->n_uncore_events; i++) {
		err = add_spec(c, st, &conf->uncore_events[i].spec);
		if (err)
			return err;
	}
	return 0;
}

/* Make sure us->cpu is online, moving to another CPU of the socket if not. */
static int relocate(struct collector *c, struct uncore_state *st, struct uncore_socket *us)
{
	const struct cpu_socket *cs = us->cs;

	if (us->cpu >= 0 && hw_cpu_online(c->hw, us->cpu) == 1)
		return 0;
	if (!cs)
		return -ENXIO;
	for (int i = 0; i < cs->n_cpus; i++) {
		if (cs->cpus[i] == us->cpu || hw_cpu_online(c->hw, cs->cpus[i]) != 1)
			continue;
		/* Package-scope registers: the same ones, through another CPU. */
		pmu_move_cpu(st->ledger, us->cpu, cs->cpus[i]);
		us->cpu = cs->cpus[i];
		return 0;
	}
	return -ENXIO;
}

/* Read a package register, moving to a sibling CPU once if ours went offline. */
static int read_socket(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
		       uint32_t msr, uint64_t *ret_value)
{
	int err = hw_read_msr(c->hw, us->cpu, msr, ret_value);

	if (err != -ENXIO)
		return err;
	err = relocate(c, st, us);
	if (err)
		return err;
	return hw_read_msr(c->hw, us->cpu, msr, ret_value);
}

/* What uncored found in the socket's control registers (hardware.md §1.8 step 2). */
struct uncore_found {
	uint64_t global_ctrl;
	uint64_t fixed_ctrl;
	uint64_t evtsel[UNCORE_N_COUNTERS];
};

static int read_found(struct collector *c, int cpu, struct uncore_found *f)
{
	int err;

	err = hw_read_msr(c->hw, cpu, MSR_UNCORE_PERF_GLOBAL_CTRL, &f->global_ctrl);
	if (!err)
		err = hw_read_msr(c->hw, cpu, MSR_UNCORE_FIXED_CTR_CTRL, &f->fixed_ctrl);
	for (int n = 0; n < UNCORE_N_COUNTERS && !err; n++)
		err = hw_read_msr(c->hw, cpu, evtsel_msr(n), &f->evtsel[n]);
	return err;
}

/* Free counters as a bit mask: EN clear in PERFEVTSELn and in 0x391 (hardware.md §1.8 step 3). */
static unsigned free_counters(const struct uncore_found *f)
{
	unsigned mask = 0;

	for (int n = 0; n < UNCORE_N_COUNTERS; n++)
		if (!(f->evtsel[n] & UNC_EVTSEL_EN) &&
		    !(f->global_ctrl & UNC_GLOBAL_CTRL_EN_PC(n)))
			mask |= 1u << n;
	return mask;
}

static bool fixed_is_free(const struct uncore_found *f)
{
	return !(f->fixed_ctrl & UNC_FIXED_CTR_CTRL_EN) &&
	       !(f->global_ctrl & UNC_GLOBAL_CTRL_EN_FC0);
}

/* "counter 7" or "counters 0,7": the ones another agent holds. */
static void format_busy(unsigned free_mask, char *buf, size_t len)
{
	size_t off = 0;
	int n_busy = 0;

	for (int n = 0; n < UNCORE_N_COUNTERS; n++)
		n_busy += !(free_mask & (1u << n));
	if (!n_busy) {
		snprintf(buf, len, "all %d in use by other uncored events", UNCORE_N_COUNTERS);
		return;
	}
	off = (size_t)snprintf(buf, len, "%s ", n_busy == 1 ? "counter" : "counters");
	for (int n = 0; n < UNCORE_N_COUNTERS && off < len; n++)
		if (!(free_mask & (1u << n)))
			off += (size_t)snprintf(buf + off, len - off, "%s%d",
						buf[off - 1] == ' ' ? "" : ",", n);
	if (off < len)
		snprintf(buf + off, len - off, " in use by another agent");
}

/* Give each event a counter, in list order; returns the names left out. */
static void assign_counters(struct collector *c, struct uncore_state *st,
			    struct uncore_socket *us, unsigned free_mask)
{
	unsigned avail = free_mask;
	char busy[64], left_out[128] = "";
	size_t off = 0;

	format_busy(free_mask, busy, sizeof(busy));
	us->n_events = st->n_specs;
	for (int i = 0; i < st->n_specs; i++) {
		struct uncore_event *ev = &us->events[i];

		ev->spec = &st->specs[i];
		ev->pmc = -1;
		if (ev->spec->needs_uncore_thermal && !c->info->fac.has_uncore_thermal_events) {
			snprintf(ev->reason, sizeof(ev->reason), "not available on %s",
				 c->info->microarch ? c->info->microarch : "this model");
			continue;
		}
		if (!avail) {
			snprintf(ev->reason, sizeof(ev->reason), "no free uncore counter (%s)", busy);
			if (off < sizeof(left_out))
				off += (size_t)snprintf(left_out + off, sizeof(left_out) - off,
							"%s'%s'", off ? ", " : "", ev->spec->name);
			continue;
		}
		ev->pmc = __builtin_ctz(avail);
		avail &= avail - 1;
		ev->evtsel = event_uncore_evtsel(ev->spec);
	}
	if (left_out[0])
		collector_note(c, "socket %d: no free uncore counter for %s (%s)", us->socket, left_out, busy);
}

/* Program the assigned counters and the fixed counter, then enable them in 0x391. */
static int program_socket(struct collector *c, struct uncore_state *st,
			  struct uncore_socket *us, const struct uncore_found *f)
{
	uint64_t own_bits = 0;
	int err;

	for (int i = 0; i < us->n_events; i++) {
		struct uncore_event *ev = &us->events[i];

		if (ev->pmc < 0)
			continue;
		/* OCC_CTR_RST zeroes the counter (hardware.md §1.4): remember its value first. */
		err = pmu_remember(st->ledger, c->hw, us->cpu, pmc_msr(ev->pmc));
		if (!err)
			err = pmu_write(st->ledger, c->hw, us->cpu, evtsel_msr(ev->pmc),
					ev->evtsel | UNC_EVTSEL_OCC_CTR_RST);
		if (err)
			return err;
		own_bits |= UNC_GLOBAL_CTRL_EN_PC(ev->pmc);
	}
	if (fixed_is_free(f)) {
		/* hardware.md §1.7: EN in 0x395, then EN_FC0 in 0x391. */
		err = pmu_remember(st->ledger, c->hw, us->cpu, MSR_UNCORE_FIXED_CTR0);
		if (!err)
			err = pmu_write(st->ledger, c->hw, us->cpu, MSR_UNCORE_FIXED_CTR_CTRL,
					UNC_FIXED_CTR_CTRL_EN);
		if (err)
			return err;
		own_bits |= UNC_GLOBAL_CTRL_EN_FC0;
		us->has_fixed = true;
	} else {
		collector_note(c, "socket %d: the uncore fixed counter is in use by another agent, "
			       "uncore clockticks are not reported", us->socket);
	}
	if (!own_bits)
		return 0;
	return pmu_set_bits(st->ledger, c->hw, us->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL, own_bits);
}

/* First readings of the counters uncored now owns. */
static int init_counters(struct collector *c, struct uncore_socket *us)
{
	uint64_t raw;
	int err;

	for (int i = 0; i < us->n_events; i++) {
		struct uncore_event *ev = &us->events[i];

		if (ev->pmc < 0)
			continue;
		err = hw_read_msr(c->hw, us->cpu, pmc_msr(ev->pmc), &raw);
		if (err)
			return err;
		counter_init(&ev->ctr, UNCORE_COUNTER_WIDTH, raw);
		ev->is_counting = true;
	}
	if (!us->has_fixed)
		return 0;
	err = hw_read_msr(c->hw, us->cpu, MSR_UNCORE_FIXED_CTR0, &raw);
	if (err)
		return err;
	counter_init(&us->fixed, UNCORE_COUNTER_WIDTH, raw);
	return 0;
}

/*
 * Claim counters on one socket.  A failure before anything was written
 * leaves the socket out (*ret_wrote false); one after is fatal for start.
 */
static int claim_socket(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
			const struct cpu_socket *cs, bool *ret_wrote)
{
	struct uncore_found found;
	int err;

	*ret_wrote = false;
	us->socket = cs->socket;
	us->cs = cs;
	us->cpu = cpu_socket_first_online(c->hw, cs);
	if (us->cpu < 0) {
		collector_note(c, "socket %d: no online CPU, no uncore counting there", us->socket);
		return -ENXIO;
	}
	err = read_found(c, us->cpu, &found);
	if (err) {
		collector_note(c, "socket %d: cpu %d: reading the uncore PMU failed: %s", us->socket,
			       us->cpu, hw_hint(err, HW_OP_READ));
		return err;
	}
	assign_counters(c, st, us, free_counters(&found));
	*ret_wrote = true;
	err = program_socket(c, st, us, &found);
	if (!err)
		err = init_counters(c, us);
	if (!err)
		us->is_up = true;
	return err;
}

static void mark_events_down(struct uncore_socket *us, const char *why)
{
	for (int i = 0; i < us->n_events; i++) {
		us->events[i].is_counting = false;
		snprintf(us->events[i].reason, sizeof(us->events[i].reason), "%s", why);
	}
}

static void free_state(struct uncore_state *st)
{
	if (!st)
		return;
	pmu_ledger_free(st->ledger);
	free(st->sockets);
	free(st);
}

static int fail_start(struct collector *c, struct uncore_state *st, int err)
{
	if (st->ledger)
		pmu_restore(st->ledger, c->hw, NULL);
	free_state(st);
	c->state = NULL;
	return err;
}

static void note_write_failure(struct collector *c, int err)
{
	/* The write error is the reason; notes made so far go with the failed start. */
	if (err == -EPERM || err == -EACCES)
		collector_refuse(c, "uncore counting needs MSR writes: %s", hw_hint(err, HW_OP_WRITE));
	else
		collector_refuse(c, "programming the uncore PMU failed: %s", pmu_hint(err, HW_OP_WRITE));
}

static int claim_all(struct collector *c, struct uncore_state *st)
{
	int first_err = 0, n_up = 0;

	for (int i = 0; i < st->n_sockets; i++) {
		struct uncore_socket *us = &st->sockets[i];
		bool wrote;
		int err = claim_socket(c, st, us, &c->topo->sockets[i], &wrote);

		if (err && wrote) {
			note_write_failure(c, err);
			return err;
		}
		if (err) {
			c->errors++;
			mark_events_down(us, "no uncore access on this socket");
			if (!first_err)
				first_err = err;
			continue;
		}
		n_up++;
	}
	return n_up ? 0 : (first_err ? first_err : -ENODEV);
}

static int uncore_start(struct collector *c)
{
	struct uncore_state *st;
	int err;

	err = check_facility(c);
	if (!err)
		err = check_interval(c);
	if (err)
		return err;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	c->state = st;
	st->ledger = pmu_ledger_new();
	st->n_sockets = c->topo->n_sockets;
	st->sockets = calloc((size_t)(st->n_sockets ? st->n_sockets : 1), sizeof(*st->sockets));
	if (!st->ledger || !st->sockets)
		return fail_start(c, st, -ENOMEM);
	err = build_event_list(c, st);
	if (!err)
		err = claim_all(c, st);
	if (err)
		return fail_start(c, st, err);
	return 0;
}

static void note_lost_once(struct collector *c, struct uncore_state *st,
			   const struct uncore_socket *us, const char *what)
{
	if (st->has_noted_lost)
		return;
	st->has_noted_lost = true;
	collector_note(c, "socket %d: %s was reprogrammed by another agent and reclaimed; "
		       "the counts of that interval are lost", us->socket, what);
}

/* Policy reclaim: program the counter again and count from its new value. */
static void reclaim_event(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
			  struct uncore_event *ev)
{
	uint64_t raw;
	int err;

	err = pmu_write(st->ledger, c->hw, us->cpu, evtsel_msr(ev->pmc),
			ev->evtsel | UNC_EVTSEL_OCC_CTR_RST);
	if (!err)
		err = pmu_set_bits(st->ledger, c->hw, us->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL,
				   UNC_GLOBAL_CTRL_EN_PC(ev->pmc));
	if (!err)
		err = hw_read_msr(c->hw, us->cpu, pmc_msr(ev->pmc), &raw);
	if (err) {
		c->errors++;
		return;
	}
	counter_rebase(&ev->ctr, raw);
	note_lost_once(c, st, us, "an uncore counter");
}

/*
 * Policy yield: the counter is the other agent's now.  If our event select
 * is still in place (only our enable bit was cleared), put back what we
 * found; otherwise forget both registers without writing.
 */
static void yield_event(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
			struct uncore_event *ev, bool is_select_ours)
{
	if (is_select_ours) {
		if (pmu_release(st->ledger, c->hw, us->cpu, evtsel_msr(ev->pmc)) ||
		    pmu_release(st->ledger, c->hw, us->cpu, pmc_msr(ev->pmc)))
			c->errors++;
	} else {
		pmu_forget(st->ledger, us->cpu, evtsel_msr(ev->pmc));
		pmu_forget(st->ledger, us->cpu, pmc_msr(ev->pmc));
	}
	pmu_forget_bits(st->ledger, us->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL,
			UNC_GLOBAL_CTRL_EN_PC(ev->pmc));
	ev->is_counting = false;
	ev->pmc = -1;
	snprintf(ev->reason, sizeof(ev->reason), "counter taken by another agent");
}

static void sample_event(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
			 struct uncore_event *ev, uint64_t global_ctrl)
{
	uint64_t raw, sel;
	bool is_select_ours, is_enabled;

	if (read_socket(c, st, us, pmc_msr(ev->pmc), &raw) ||
	    read_socket(c, st, us, evtsel_msr(ev->pmc), &sel)) {
		c->errors++;
		return;
	}
	/* OCC_CTR_RST always reads 0 (hardware.md §1.4); compare the rest. */
	is_select_ours = (sel & ~UNC_EVTSEL_OCC_CTR_RST) == ev->evtsel;
	is_enabled = global_ctrl & UNC_GLOBAL_CTRL_EN_PC(ev->pmc);
	if (is_select_ours && is_enabled) {
		counter_add(&ev->ctr, raw);
		return;
	}
	us->conflicts++;
	if (c->conf->uncore_on_conflict == CONF_CONFLICT_RECLAIM)
		reclaim_event(c, st, us, ev);
	else
		yield_event(c, st, us, ev, is_select_ours);
}

static void reclaim_fixed(struct collector *c, struct uncore_state *st, struct uncore_socket *us)
{
	uint64_t raw;
	int err;

	err = pmu_write(st->ledger, c->hw, us->cpu, MSR_UNCORE_FIXED_CTR_CTRL,
			UNC_FIXED_CTR_CTRL_EN);
	if (!err)
		err = pmu_set_bits(st->ledger, c->hw, us->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL,
				   UNC_GLOBAL_CTRL_EN_FC0);
	if (!err)
		err = hw_read_msr(c->hw, us->cpu, MSR_UNCORE_FIXED_CTR0, &raw);
	if (err) {
		c->errors++;
		return;
	}
	counter_rebase(&us->fixed, raw);
	note_lost_once(c, st, us, "the uncore fixed counter");
}

static void yield_fixed(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
			bool is_ctrl_ours)
{
	if (is_ctrl_ours) {
		if (pmu_release(st->ledger, c->hw, us->cpu, MSR_UNCORE_FIXED_CTR_CTRL) ||
		    pmu_release(st->ledger, c->hw, us->cpu, MSR_UNCORE_FIXED_CTR0))
			c->errors++;
	} else {
		pmu_forget(st->ledger, us->cpu, MSR_UNCORE_FIXED_CTR_CTRL);
		pmu_forget(st->ledger, us->cpu, MSR_UNCORE_FIXED_CTR0);
	}
	pmu_forget_bits(st->ledger, us->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL, UNC_GLOBAL_CTRL_EN_FC0);
	us->has_fixed = false;
	collector_note(c, "socket %d: the uncore fixed counter was taken by another agent, "
		       "uncore clockticks are no longer reported", us->socket);
}

static void sample_fixed(struct collector *c, struct uncore_state *st, struct uncore_socket *us,
			 uint64_t global_ctrl)
{
	uint64_t raw, ctrl;
	bool is_ctrl_ours;

	if (read_socket(c, st, us, MSR_UNCORE_FIXED_CTR0, &raw) ||
	    read_socket(c, st, us, MSR_UNCORE_FIXED_CTR_CTRL, &ctrl)) {
		c->errors++;
		return;
	}
	is_ctrl_ours = ctrl == UNC_FIXED_CTR_CTRL_EN;
	if (is_ctrl_ours && (global_ctrl & UNC_GLOBAL_CTRL_EN_FC0)) {
		counter_add(&us->fixed, raw);
		return;
	}
	us->conflicts++;
	if (c->conf->uncore_on_conflict == CONF_CONFLICT_RECLAIM)
		reclaim_fixed(c, st, us);
	else
		yield_fixed(c, st, us, is_ctrl_ours);
}

static void sample_socket(struct collector *c, struct uncore_state *st, struct uncore_socket *us)
{
	uint64_t global_ctrl;
	char key[32];

	/* A degradation while it holds: cleared by the first good read. */
	snprintf(key, sizeof(key), "stale socket %d", us->socket);
	if (relocate(c, st, us) ||
	    read_socket(c, st, us, MSR_UNCORE_PERF_GLOBAL_CTRL, &global_ctrl)) {
		/* Totals stay as they were; the counters keep counting meanwhile. */
		us->is_stale = true;
		c->errors++;
		collector_degrade(c, key, "socket %d: no CPU of the socket can be read, "
				  "uncore totals held", us->socket);
		return;
	}
	us->is_stale = false;
	collector_recover(c, key);
	for (int i = 0; i < us->n_events; i++)
		if (us->events[i].is_counting)
			sample_event(c, st, us, &us->events[i], global_ctrl);
	if (us->has_fixed)
		sample_fixed(c, st, us, global_ctrl);
}

static void fill_snapshot(const struct uncore_socket *us, struct snapshot *s)
{
	struct snapshot_socket *ss = snapshot_socket(s, us->socket);

	if (!ss)
		return;
	ss->has_uncore = us->is_up;
	ss->has_uncore_clockticks = us->is_up && us->has_fixed;
	ss->uncore_clockticks = us->fixed.total;
	ss->uncore_conflicts = us->conflicts;
	ss->uncore_events = snapshot_alloc_events(s, (size_t)us->n_events);
	if (!ss->uncore_events)
		return;
	/* On ENOMEM the events filled so far are kept. */
	for (int i = 0; i < us->n_events; i++) {
		const struct uncore_event *ev = &us->events[i];
		bool available = us->is_up && ev->is_counting;

		if (snapshot_set_event(s, &ss->uncore_events[i], ev->spec->name, available,
				       ev->ctr.total, available ? NULL : ev->reason) < 0)
			break;
		ss->n_uncore_events = i + 1;
	}
}

static void uncore_sample(struct collector *c, struct snapshot *s)
{
	struct uncore_state *st = c->state;

	if (!st)
		return;
	for (int i = 0; i < st->n_sockets; i++) {
		struct uncore_socket *us = &st->sockets[i];

		if (us->is_up)
			sample_socket(c, st, us);
		if (s)
			fill_snapshot(us, s);
	}
}

static void uncore_stop(struct collector *c)
{
	struct uncore_state *st = c->state;
	unsigned n_failed = 0;
	int err;

	if (!st)
		return;
	/* Restore through a CPU that is online now. */
	for (int i = 0; i < st->n_sockets; i++)
		if (st->sockets[i].is_up)
			relocate(c, st, &st->sockets[i]);
	err = pmu_restore(st->ledger, c->hw, &n_failed);
	if (err)
		collector_note(c, "restoring %u uncore registers failed: %s", n_failed,
			       hw_hint(err, HW_OP_WRITE));
	free_state(st);
	c->state = NULL;
}

static const char *uncore_unavailable(const struct event_spec *ev, const void *arg)
{
	const struct cpu_info *info = arg;

	return ev->needs_uncore_thermal && !info->fac.has_uncore_thermal_events ?
	       "not on this model" : NULL;
}

static void uncore_list_events(const struct cpu_info *info, struct strbuf *out)
{
	if (!info->fac.has_nhm_uncore) {
		strbuf_append(out, "uncore: not available (no Nehalem/Westmere uncore PMU on this model)\n");
		return;
	}
	strbuf_printf(out, "uncore (per socket, %d counters of %d bits, and the uncore clock):\n",
		      UNCORE_N_COUNTERS, UNCORE_COUNTER_WIDTH);
	strbuf_append(out, "  always counted:\n");
	strbuf_printf(out, "    %-34s %s\n", "clockticks", "the uncore clock, fixed counter (MSR 0x394)");
	event_list_builtins(EVENT_PMU_UNCORE, out, uncore_unavailable, info);
	/* hardware-linux.md §2: the PCU's core numbering is documented nowhere. */
	strbuf_append(out, "  coreN in an event name is the uncore's own core number (0-3), not a Linux core\n"
		      "  id: which Linux core each one watches is documented nowhere, and a socket with\n"
		      "  more than four cores has cores no such event watches.\n");
}

static void uncore_check_conf(const struct conf *conf, struct conf_check *chk)
{
	char taken[96];
	int i = conf_check_events(chk, conf->uncore_events, conf->n_uncore_events, EVENT_PMU_UNCORE,
				  conf->uncore_default_events, UNCORE_N_COUNTERS, taken, sizeof(taken));

	if (i >= 0)
		conf_check_error(chk, conf->uncore_events[i].line, "event",
				 "event '%s' does not fit: the uncore has %d counters and %d are "
				 "already taken by %s", conf->uncore_events[i].spec.name,
				 UNCORE_N_COUNTERS, UNCORE_N_COUNTERS, taken);
}

static const struct conf_key uncore_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_FIELD(uncore_enabled), .def = "yes" },
	{ "default_events", CONF_KIND_BOOL, CONF_FIELD(uncore_default_events), .def = "yes" },
	{ "on_conflict", CONF_KIND_ENUM, CONF_FIELD(uncore_on_conflict),
	  .names = conf_conflict_names, .def = "reclaim" },
	{ "event", CONF_KIND_EVENT, CONF_FIELD(uncore_events), .pmu = EVENT_PMU_UNCORE,
	  .count_offset = offsetof(struct conf, n_uncore_events) },
};

static const struct conf_section uncore_conf_section = {
	.name = "uncore", .keys = uncore_keys, .n_keys = sizeof(uncore_keys) / sizeof(uncore_keys[0]),
	.check = uncore_check_conf,
};

static bool uncore_is_enabled(const struct conf *conf)
{
	return conf->uncore_enabled;
}

static bool uncore_conf_changed(const struct conf *old, const struct conf *new)
{
	return old->uncore_enabled != new->uncore_enabled ||
	       old->uncore_default_events != new->uncore_default_events ||
	       old->uncore_on_conflict != new->uncore_on_conflict ||
	       !conf_events_equal(old->uncore_events, old->n_uncore_events,
				  new->uncore_events, new->n_uncore_events);
}

static void uncore_add_totals(struct snapshot *dst, const struct snapshot *src, int sign)
{
	for (int i = 0; i < src->n_sockets; i++) {
		const struct snapshot_socket *b = &src->sockets[i];
		struct snapshot_socket *d = snapshot_socket(dst, b->socket);

		if (!d)
			continue;
		d->uncore_clockticks = snapshot_add_signed(d->uncore_clockticks, b->uncore_clockticks,
							   sign);
		d->uncore_conflicts = snapshot_add_signed(d->uncore_conflicts, b->uncore_conflicts, sign);
		snapshot_add_event_totals(d->uncore_events, d->n_uncore_events, b->uncore_events,
					  b->n_uncore_events, sign);
	}
}

const struct collector_ops uncore_collector_ops = {
	.name = "uncore",
	.start = uncore_start,
	.sample = uncore_sample,
	.stop = uncore_stop,
	.conf_section = &uncore_conf_section,
	.list_events = uncore_list_events,
	.is_enabled = uncore_is_enabled,
	.conf_changed = uncore_conf_changed,
	.add_totals = uncore_add_totals,
};
