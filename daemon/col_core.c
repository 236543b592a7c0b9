/*
 * The core-PMC collector: per logical CPU, the three fixed counters
 * (instructions, core cycles, reference cycles) and the configured
 * programmable events.  Counter numbers and widths come from each CPU's
 * CPUID leaf 0xA.  It takes only counters nobody else has enabled
 * (hardware.md §5.5), changes registers only through the pmu ledger so
 * stop() puts everything back, never writes a counter (totals are deltas
 * at the CPUID width), and each sample reads back its own control bits to
 * notice another agent taking a counter.  It does not know which events
 * are interesting; the configuration and event.c do.
 *
 * Offline CPUs: a CPU that was offline at start is claimed when it comes
 * online; a claimed CPU whose read says it is offline (-ENXIO) is skipped
 * without counting an error, its totals kept, and re-based on its return
 * (a control register found changed on return is handled as a conflict).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "col_core.h"
#include "counter.h"
#include "decode.h"
#include "event.h"
#include "msr.h"
#include "pmu.h"

#define N_FIXED 3                 /* instructions, cycles, ref cycles */
#define MAX_GP 32                 /* IA32_PERF_GLOBAL_CTRL bits 31:0 */
#define OUR_NIBBLE (FIXED_CTR_CTRL_EN_OS | FIXED_CTR_CTRL_EN_USR) /* no PMI, no AnyThread */
#define EVTSEL_EVENT_MASK 0xffu   /* hardware.md §5.4 bits 7:0 */

enum cpu_state {
	CPU_PENDING,       /* not claimed yet (offline at start) */
	CPU_CLAIMED,
	CPU_UNUSABLE,      /* cannot be used; noted in the collector's status */
};

/* Why an event does not count on a CPU; the text is made for the snapshot. */
enum slot_why {
	SLOT_ARCH_EVENT_MISSING,   /* CPUID.0AH:EBX marks it unavailable */
	SLOT_NO_FREE_COUNTER,
	SLOT_YIELDED,              /* another agent took its counter (policy yield) */
};

/* One event on one CPU. */
struct slot {
	int counter;               /* GP counter index, -1 when not counting */
	uint64_t evtsel;
	struct counter ctr;
	bool is_fresh;             /* read this sample */
	enum slot_why why;         /* when counter < 0 */
	int yielded_counter;       /* SLOT_YIELDED: the counter it had */
};

struct core_cpu {
	int cpu;
	enum cpu_state state;
	bool is_offline;           /* claimed, did not answer this sample */
	bool was_offline;          /* ... the sample before */
	bool is_fresh;             /* controls read this sample */
	struct cpu_perfmon pm;
	bool fixed_owned[N_FIXED];
	bool fixed_fresh[N_FIXED];
	struct counter fixed[N_FIXED];
	unsigned n_gp_busy;        /* GP counters another agent held at the claim */
	struct slot *slots;        /* core_state.n_events of them */
	uint64_t conflicts;
};

struct core_state {
	struct pmu_ledger *ledger;
	int n_events;
	const struct event_spec *events[SNAPSHOT_MAX_EVENTS];
	int n_cpus;
	struct core_cpu *cpus;
	struct slot *slots;               /* every CPU's, in one block */
	unsigned fixed_busy[N_FIXED];     /* CPUs where fixed counter i was taken */
};

static const char *const fixed_names[N_FIXED] = { "instructions", "cycles", "ref cycles" };

static unsigned n_fixed_of(const struct cpu_perfmon *pm)
{
	return pm->n_fixed < N_FIXED ? pm->n_fixed : N_FIXED;
}

static unsigned n_gp_of(const struct cpu_perfmon *pm)
{
	return pm->n_gp < MAX_GP ? pm->n_gp : MAX_GP;
}

static bool find_event(const struct core_state *st, const char *name)
{
	for (int k = 0; k < st->n_events; k++)
		if (strcmp(st->events[k]->name, name) == 0)
			return true;
	return false;
}

/* The defaults (when configured) then the configured events. */
static int collect_events(struct collector *c, struct core_state *st)
{
	const struct event_spec *const *defaults = NULL;
	size_t n_defaults = 0;
	size_t total;

	if (c->conf->core_default_events)
		defaults = event_defaults(EVENT_PMU_CORE, &n_defaults);
	total = n_defaults + (size_t)c->conf->n_core_events;
	if (total > SNAPSHOT_MAX_EVENTS) {
		collector_refuse(c,
				 "%zu core events configured (defaults included), at most %d can be counted",
				 total, SNAPSHOT_MAX_EVENTS);
		return -EINVAL;
	}
	for (size_t i = 0; i < n_defaults; i++)
		st->events[st->n_events++] = defaults[i];
	for (int i = 0; i < c->conf->n_core_events; i++) {
		const struct event_spec *ev = &c->conf->core_events[i].spec;

		/* One name is one metric series: a default configured again counts once. */
		if (find_event(st, ev->name)) {
			collector_note(c, "core event '%s' listed twice, counted once", ev->name);
			continue;
		}
		st->events[st->n_events++] = ev;
	}
	return 0;
}

/*
 * Refuse an interval in which a counter of this CPU could wrap more than
 * a quarter of the way round at CORE_MAX_EVENT_RATE_HZ.
 */
static int check_wrap(struct collector *c, const struct core_state *st,
		      const struct cpu_perfmon *pm, char *why, size_t whylen)
{
	unsigned widths[2] = { 0, 0 };
	double period_s;

	if (n_fixed_of(pm) > 0)
		widths[0] = pm->fixed_width_bits;
	if (st->n_events > 0 && pm->n_gp > 0)
		widths[1] = pm->gp_width_bits;
	for (int i = 0; i < 2; i++) {
		if (widths[i] == 0)
			continue;
		period_s = counter_wrap_period_s(widths[i], CORE_MAX_EVENT_RATE_HZ);
		if (c->conf->interval_s > period_s / 4) {
			snprintf(why, whylen,
				 "interval %g s is too long for %u-bit core counters: at %.0e events/s "
				 "they wrap every %.3g s, so the interval must be at most %.3g s",
				 c->conf->interval_s, widths[i], CORE_MAX_EVENT_RATE_HZ, period_s,
				 period_s / 4);
			return -EINVAL;
		}
	}
	return 0;
}

/* The control registers as found, for the ownership check. */
struct found {
	uint64_t fixed_ctrl, global, inuse;
};

static int read_found(struct collector *c, const struct core_cpu *cc, struct found *f)
{
	int err;

	memset(f, 0, sizeof(*f));
	err = hw_read_msr(c->hw, cc->cpu, IA32_PERF_GLOBAL_CTRL, &f->global);
	if (!err && n_fixed_of(&cc->pm) > 0)
		err = hw_read_msr(c->hw, cc->cpu, IA32_FIXED_CTR_CTRL, &f->fixed_ctrl);
	if (err)
		return err;
	/* hardware.md §5.5 step 1: INUSE exists from version 4; unreadable = no information. */
	if (cc->pm.version >= 4 && hw_read_msr(c->hw, cc->cpu, IA32_PERF_GLOBAL_INUSE, &f->inuse))
		f->inuse = 0;
	return 0;
}

/* hardware.md §5.5 step 3: fixed counter i is free. */
static bool fixed_is_free(const struct found *f, unsigned i)
{
	return decode_fixed_ctrl_nibble(f->fixed_ctrl, i) == 0 &&
	       !(f->global & PERF_GLOBAL_CTRL_EN_FIXED(i)) &&
	       !(f->inuse & PERF_GLOBAL_CTRL_EN_FIXED(i));
}

/* hardware.md §5.5 step 2: GP counter n is free (a non-zero event select counts as busy). */
static int gp_is_free(struct collector *c, const struct core_cpu *cc, const struct found *f,
		      unsigned n, bool *ret_free)
{
	uint64_t evtsel;
	int err;

	err = hw_read_msr(c->hw, cc->cpu, IA32_PERFEVTSEL0 + n, &evtsel);
	if (err)
		return err;
	*ret_free = !(evtsel & (PERFEVTSEL_EN | PERFEVTSEL_INT)) &&
		    !(evtsel & EVTSEL_EVENT_MASK) &&
		    !(f->global & PERF_GLOBAL_CTRL_EN_PMC(n)) &&
		    !(f->inuse & PERF_GLOBAL_CTRL_EN_PMC(n));
	return 0;
}

static bool arch_event_missing(const struct cpu_perfmon *pm, const struct event_spec *ev)
{
	unsigned bit;

	if (ev->arch_event == 0)
		return false;
	bit = ev->arch_event - 1;
	return bit >= pm->ebx_length || bit >= 32 || (pm->unavailable & (UINT32_C(1) << bit));
}

/* Give each event the next free GP counter; say why the others get none. */
static int assign_events(struct collector *c, const struct core_state *st, struct core_cpu *cc,
			 const struct found *f)
{
	unsigned n_gp = n_gp_of(&cc->pm), n_busy = 0, next = 0;
	bool is_free[MAX_GP];
	int err;

	for (unsigned n = 0; n < n_gp; n++) {
		err = gp_is_free(c, cc, f, n, &is_free[n]);
		if (err)
			return err;
		n_busy += !is_free[n];
	}
	cc->n_gp_busy = n_busy;
	for (int k = 0; k < st->n_events; k++) {
		struct slot *sl = &cc->slots[k];

		sl->counter = -1;
		if (arch_event_missing(&cc->pm, st->events[k])) {
			sl->why = SLOT_ARCH_EVENT_MISSING;
			continue;
		}
		while (next < n_gp && !is_free[next])
			next++;
		if (next == n_gp) {
			sl->why = SLOT_NO_FREE_COUNTER;
			continue;
		}
		sl->counter = (int)next++;
		sl->evtsel = event_core_evtsel(st->events[k]);
	}
	return 0;
}

/* Undo what this CPU's claim changed (a late claim that failed half way). */
static void release_cpu(struct core_state *st, struct collector *c, struct core_cpu *cc)
{
	uint64_t global = 0, fixed_ctrl = 0;

	for (unsigned i = 0; i < N_FIXED; i++) {
		if (!cc->fixed_owned[i])
			continue;
		global |= PERF_GLOBAL_CTRL_EN_FIXED(i);
		fixed_ctrl = encode_fixed_ctrl_nibble(fixed_ctrl, i, OUR_NIBBLE);
		cc->fixed_owned[i] = false;
	}
	for (int k = 0; k < st->n_events; k++) {
		if (cc->slots[k].counter < 0)
			continue;
		global |= PERF_GLOBAL_CTRL_EN_PMC(cc->slots[k].counter);
		pmu_release(st->ledger, c->hw, cc->cpu, IA32_PERFEVTSEL0 + (uint32_t)cc->slots[k].counter);
		cc->slots[k].counter = -1;
	}
	pmu_clear_bits(st->ledger, c->hw, cc->cpu, IA32_PERF_GLOBAL_CTRL, global);
	pmu_clear_bits(st->ledger, c->hw, cc->cpu, IA32_FIXED_CTR_CTRL, fixed_ctrl);
}

/* Read every owned counter's starting value (before the global enable). */
static int read_bases(struct collector *c, struct core_state *st, struct core_cpu *cc)
{
	uint64_t raw;
	int err;

	for (unsigned i = 0; i < N_FIXED; i++) {
		if (!cc->fixed_owned[i])
			continue;
		err = hw_read_msr(c->hw, cc->cpu, IA32_FIXED_CTR0 + i, &raw);
		if (err)
			return err;
		counter_init(&cc->fixed[i], cc->pm.fixed_width_bits, raw);
	}
	for (int k = 0; k < st->n_events; k++) {
		struct slot *sl = &cc->slots[k];

		if (sl->counter < 0)
			continue;
		err = hw_read_msr(c->hw, cc->cpu, IA32_PMC0 + (uint32_t)sl->counter, &raw);
		if (err)
			return err;
		counter_init(&sl->ctr, cc->pm.gp_width_bits, raw);
	}
	return 0;
}

/* Event selects and fixed nibbles first, the global enable bits last. */
static int program_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc)
{
	uint64_t global = 0, fixed_ctrl = 0;
	int err;

	for (int k = 0; k < st->n_events; k++) {
		struct slot *sl = &cc->slots[k];

		if (sl->counter < 0)
			continue;
		err = pmu_write(st->ledger, c->hw, cc->cpu, IA32_PERFEVTSEL0 + (uint32_t)sl->counter,
				sl->evtsel);
		if (err)
			return err;
		global |= PERF_GLOBAL_CTRL_EN_PMC(sl->counter);
	}
	for (unsigned i = 0; i < N_FIXED; i++) {
		if (!cc->fixed_owned[i])
			continue;
		fixed_ctrl = encode_fixed_ctrl_nibble(fixed_ctrl, i, OUR_NIBBLE);
		global |= PERF_GLOBAL_CTRL_EN_FIXED(i);
	}
	if (fixed_ctrl) {
		err = pmu_set_bits(st->ledger, c->hw, cc->cpu, IA32_FIXED_CTR_CTRL, fixed_ctrl);
		if (err)
			return err;
	}
	err = read_bases(c, st, cc);
	if (err || !global)
		return err;
	return pmu_set_bits(st->ledger, c->hw, cc->cpu, IA32_PERF_GLOBAL_CTRL, global);
}

/*
 * Decide what this CPU can count and program it.  On error *ret_op says
 * whether reading the state found or programming failed.
 */
static int claim_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc,
		     enum hw_op *ret_op)
{
	struct found f;
	int err;

	*ret_op = HW_OP_READ;
	err = read_found(c, cc, &f);
	if (err)
		return err;
	for (unsigned i = 0; i < n_fixed_of(&cc->pm); i++) {
		cc->fixed_owned[i] = fixed_is_free(&f, i);
		st->fixed_busy[i] += !cc->fixed_owned[i];
	}
	err = assign_events(c, st, cc, &f);
	if (err)
		return err;
	*ret_op = HW_OP_WRITE;
	err = program_cpu(c, st, cc);
	if (err)
		return err;
	cc->state = CPU_CLAIMED;
	return 0;
}

/*
 * CPUID leaf 0xA of the CPU, and the checks that do not touch registers;
 * a refusal is explained in why.
 */
static int prepare_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc,
		       char *why, size_t whylen)
{
	int err;

	err = cpu_perfmon_read(c->hw, cc->cpu, &cc->pm);
	if (err)
		return err;
	if (cc->pm.version < 2) {
		cc->state = CPU_UNUSABLE;
		collector_note(c, "cpu %d: architectural perfmon version %u, version 2 or later needed",
			       cc->cpu, cc->pm.version);
		return 0;
	}
	return check_wrap(c, st, &cc->pm, why, whylen);
}

static void summarize_fixed(struct collector *c, const struct core_state *st, unsigned n_claimed)
{
	for (unsigned i = 0; i < N_FIXED; i++) {
		if (!st->fixed_busy[i])
			continue;
		collector_note(c, "fixed counter %u (%s) in use by another agent on %u of %u CPUs%s", i,
			       fixed_names[i], st->fixed_busy[i], n_claimed,
			       i == 1 ? " (the NMI watchdog usually holds it)" : "");
	}
}

static int start_cpus(struct collector *c, struct core_state *st)
{
	unsigned n_claimed = 0;
	enum hw_op op;
	int err;

	/* All checks first: a refused interval must leave every register alone. */
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];

		if (hw_cpu_online(c->hw, cc->cpu) != 1)
			continue;
		err = prepare_cpu(c, st, cc, c->status.why_not, sizeof(c->status.why_not));
		if (err == -ENXIO)
			continue;
		if (err && !c->status.why_not[0])
			collector_refuse(c, "cpu %d: CPUID leaf 0xA: %s",
					 cc->cpu, hw_hint(err, HW_OP_READ));
		if (err)
			return err;
	}
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];

		if (cc->state != CPU_PENDING || cc->pm.version < 2)
			continue;
		err = claim_cpu(c, st, cc, &op);
		if (err == -ENXIO) {
			release_cpu(st, c, cc);
			continue;
		}
		if (err) {
			collector_refuse(c, "cpu %d: cannot %s the core PMU: %s",
					 cc->cpu, op == HW_OP_WRITE ? "program" : "read", pmu_hint(err, op));
			return err;
		}
		n_claimed++;
	}
	summarize_fixed(c, st, n_claimed);
	return 0;
}

static void core_free(struct core_state *st)
{
	if (!st)
		return;
	pmu_ledger_free(st->ledger);
	free(st->slots);
	free(st->cpus);
	free(st);
}

static int core_start(struct collector *c)
{
	struct core_state *st;
	int err;

	if (!c->conf->core_enabled) {
		collector_refuse(c, "disabled in the configuration");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ledger = pmu_ledger_new();
	st->cpus = calloc((size_t)(c->topo->n_cpus ? c->topo->n_cpus : 1), sizeof(*st->cpus));
	if (!st->ledger || !st->cpus) {
		core_free(st);
		return -ENOMEM;
	}
	st->n_cpus = c->topo->n_cpus;
	for (int i = 0; i < st->n_cpus; i++)
		st->cpus[i].cpu = c->topo->cpus[i].cpu;
	c->state = st;
	err = collect_events(c, st);
	if (!err && st->n_events > 0) {
		st->slots = calloc((size_t)st->n_cpus * (size_t)st->n_events, sizeof(*st->slots));
		if (!st->slots)
			err = -ENOMEM;
		for (int i = 0; i < st->n_cpus && st->slots; i++)
			st->cpus[i].slots = &st->slots[(size_t)i * (size_t)st->n_events];
	}
	if (!err)
		err = start_cpus(c, st);
	if (err) {
		/* Whatever was programmed goes back before start reports failure. */
		pmu_restore(st->ledger, c->hw, NULL);
		core_free(st);
		c->state = NULL;
	}
	return err;
}

/*
 * Accumulate a reading.  Back from offline, a counter that went down lost
 * its counts (or was reset): re-base without adding.
 */
static void advance(struct counter *ctr, uint64_t raw, bool is_returning)
{
	if (is_returning && (raw & counter_width_mask(ctr->width_bits)) < ctr->last_raw)
		counter_rebase(ctr, raw);
	else
		counter_add(ctr, raw);
}

/* What one sample found changed and wants back (policy reclaim). */
struct reclaim {
	uint64_t global;           /* IA32_PERF_GLOBAL_CTRL bits to set again */
	bool gp[SNAPSHOT_MAX_EVENTS];  /* slots whose event select to rewrite */
	bool fixed[N_FIXED];
};

/* Forget a counter another agent took, writing nothing (policy yield). */
static void yield_fixed(struct collector *c, struct core_state *st, struct core_cpu *cc,
			unsigned i)
{
	pmu_forget_bits(st->ledger, cc->cpu, IA32_FIXED_CTR_CTRL,
			encode_fixed_ctrl_nibble(0, i, OUR_NIBBLE));
	pmu_forget_bits(st->ledger, cc->cpu, IA32_PERF_GLOBAL_CTRL, PERF_GLOBAL_CTRL_EN_FIXED(i));
	cc->fixed_owned[i] = false;
	collector_note(c, "cpu %d: fixed counter %u (%s) taken over by another agent, yielded",
		       cc->cpu, i, fixed_names[i]);
}

static void yield_gp(struct core_state *st, struct core_cpu *cc, struct slot *sl)
{
	pmu_forget(st->ledger, cc->cpu, IA32_PERFEVTSEL0 + (uint32_t)sl->counter);
	pmu_forget_bits(st->ledger, cc->cpu, IA32_PERF_GLOBAL_CTRL,
			PERF_GLOBAL_CTRL_EN_PMC(sl->counter));
	sl->why = SLOT_YIELDED;
	sl->yielded_counter = sl->counter;
	sl->counter = -1;
}

/* A read failed: offline (-ENXIO, not an error) or a counted error. */
static int read_or_note(struct collector *c, struct core_cpu *cc, uint32_t msr, uint64_t *ret_raw)
{
	int err = hw_read_msr(c->hw, cc->cpu, msr, ret_raw);

	if (err == -ENXIO)
		cc->is_offline = true;
	else if (err)
		c->errors++;
	return err;
}

static void sample_fixed(struct collector *c, struct core_state *st, struct core_cpu *cc,
			 uint64_t global, uint64_t fixed_ctrl, struct reclaim *rc)
{
	uint64_t raw;

	for (unsigned i = 0; i < N_FIXED && !cc->is_offline; i++) {
		if (!cc->fixed_owned[i])
			continue;
		if (decode_fixed_ctrl_nibble(fixed_ctrl, i) != OUR_NIBBLE ||
		    !(global & PERF_GLOBAL_CTRL_EN_FIXED(i))) {
			cc->conflicts++;
			if (c->conf->core_on_conflict == CONF_CONFLICT_YIELD) {
				yield_fixed(c, st, cc, i);
			} else {
				rc->fixed[i] = true;
				rc->global |= PERF_GLOBAL_CTRL_EN_FIXED(i);
			}
			continue;
		}
		if (read_or_note(c, cc, IA32_FIXED_CTR0 + i, &raw))
			continue;
		advance(&cc->fixed[i], raw, cc->was_offline);
		cc->fixed_fresh[i] = true;
	}
}

static void sample_gp(struct collector *c, struct core_state *st, struct core_cpu *cc,
		      uint64_t global, struct reclaim *rc)
{
	uint64_t evtsel, raw;

	for (int k = 0; k < st->n_events && !cc->is_offline; k++) {
		struct slot *sl = &cc->slots[k];

		if (sl->counter < 0)
			continue;
		if (read_or_note(c, cc, IA32_PERFEVTSEL0 + (uint32_t)sl->counter, &evtsel))
			continue;
		if (evtsel != sl->evtsel || !(global & PERF_GLOBAL_CTRL_EN_PMC(sl->counter))) {
			cc->conflicts++;
			if (c->conf->core_on_conflict == CONF_CONFLICT_YIELD) {
				yield_gp(st, cc, sl);
			} else {
				rc->gp[k] = true;
				rc->global |= PERF_GLOBAL_CTRL_EN_PMC(sl->counter);
			}
			continue;
		}
		if (read_or_note(c, cc, IA32_PMC0 + (uint32_t)sl->counter, &raw))
			continue;
		advance(&sl->ctr, raw, cc->was_offline);
		sl->is_fresh = true;
	}
}

/*
 * Our nibbles get exactly their value again.  This writes the shared
 * register directly rather than through pmu_set_bits() because another
 * agent's bits inside our nibble (a PMI bit, say) must go; the ledger
 * still holds our bits from the claim, so restore clears the nibble to the
 * 0 it had when claimed.
 */
static int rewrite_fixed_ctrl(struct collector *c, const struct core_cpu *cc,
			      const struct reclaim *rc)
{
	uint64_t value, wanted;
	int err;

	err = hw_read_msr(c->hw, cc->cpu, IA32_FIXED_CTR_CTRL, &value);
	if (err)
		return err;
	wanted = value;
	for (unsigned i = 0; i < N_FIXED; i++)
		if (rc->fixed[i])
			wanted = encode_fixed_ctrl_nibble(wanted, i, OUR_NIBBLE);
	return wanted == value ? 0 : hw_write_msr(c->hw, cc->cpu, IA32_FIXED_CTR_CTRL, wanted);
}

/* Re-base every reclaimed counter: the interval since the last sample is lost. */
static int rebase_reclaimed(struct collector *c, struct core_state *st, struct core_cpu *cc,
			    const struct reclaim *rc)
{
	uint64_t raw;
	int err;

	for (unsigned i = 0; i < N_FIXED; i++) {
		if (!rc->fixed[i])
			continue;
		err = hw_read_msr(c->hw, cc->cpu, IA32_FIXED_CTR0 + i, &raw);
		if (err)
			return err;
		counter_rebase(&cc->fixed[i], raw);
		cc->fixed_fresh[i] = true;
	}
	for (int k = 0; k < st->n_events; k++) {
		struct slot *sl = &cc->slots[k];

		if (!rc->gp[k])
			continue;
		err = hw_read_msr(c->hw, cc->cpu, IA32_PMC0 + (uint32_t)sl->counter, &raw);
		if (err)
			return err;
		counter_rebase(&sl->ctr, raw);
		sl->is_fresh = true;
	}
	return 0;
}

/* Policy reclaim: program the taken counters again and re-base them. */
static void apply_reclaim(struct collector *c, struct core_state *st, struct core_cpu *cc,
			  const struct reclaim *rc)
{
	bool any_fixed = rc->fixed[0] || rc->fixed[1] || rc->fixed[2];
	int err = 0;

	for (int k = 0; k < st->n_events && !err; k++)
		if (rc->gp[k])
			err = pmu_write(st->ledger, c->hw, cc->cpu,
					IA32_PERFEVTSEL0 + (uint32_t)cc->slots[k].counter,
					cc->slots[k].evtsel);
	if (!err && any_fixed)
		err = rewrite_fixed_ctrl(c, cc, rc);
	if (!err && rc->global)
		err = pmu_set_bits(st->ledger, c->hw, cc->cpu, IA32_PERF_GLOBAL_CTRL, rc->global);
	if (!err)
		err = rebase_reclaimed(c, st, cc, rc);
	if (err == -ENXIO)
		cc->is_offline = true;
	else if (err)
		c->errors++;
}

static bool owns_any(const struct core_state *st, const struct core_cpu *cc)
{
	for (unsigned i = 0; i < N_FIXED; i++)
		if (cc->fixed_owned[i])
			return true;
	for (int k = 0; k < st->n_events; k++)
		if (cc->slots[k].counter >= 0)
			return true;
	return false;
}

/* A CPU offline at start came online: claim it now. */
static void late_claim(struct collector *c, struct core_state *st, struct core_cpu *cc)
{
	enum hw_op op = HW_OP_READ;
	char why[160] = "";
	int err;

	if (hw_cpu_online(c->hw, cc->cpu) != 1)
		return;
	err = prepare_cpu(c, st, cc, why, sizeof(why));
	if (!err && cc->state == CPU_PENDING)
		err = claim_cpu(c, st, cc, &op);
	if (!err)
		return;
	release_cpu(st, c, cc);
	if (err == -ENXIO)
		return;
	cc->state = CPU_UNUSABLE;
	c->errors++;
	collector_note(c, "cpu %d: %s", cc->cpu, why[0] ? why : pmu_hint(err, op));
}

static void begin_sample(const struct core_state *st, struct core_cpu *cc)
{
	cc->was_offline = cc->is_offline;
	cc->is_offline = false;
	cc->is_fresh = false;
	memset(cc->fixed_fresh, 0, sizeof(cc->fixed_fresh));
	for (int k = 0; k < st->n_events; k++)
		cc->slots[k].is_fresh = false;
}

static void sample_cpu(struct collector *c, struct core_state *st, struct core_cpu *cc)
{
	bool any_fixed = cc->fixed_owned[0] || cc->fixed_owned[1] || cc->fixed_owned[2];
	uint64_t global, fixed_ctrl = 0;
	struct reclaim rc;

	begin_sample(st, cc);
	if (cc->state == CPU_PENDING)
		late_claim(c, st, cc);
	if (cc->state != CPU_CLAIMED)
		return;
	if (!owns_any(st, cc)) {
		cc->is_fresh = true;
		return;
	}
	if (read_or_note(c, cc, IA32_PERF_GLOBAL_CTRL, &global))
		return;
	if (any_fixed && read_or_note(c, cc, IA32_FIXED_CTR_CTRL, &fixed_ctrl))
		return;
	memset(&rc, 0, sizeof(rc));
	sample_fixed(c, st, cc, global, fixed_ctrl, &rc);
	sample_gp(c, st, cc, global, &rc);
	/* Every counter to reclaim has its global enable bit in rc.global. */
	if (!cc->is_offline && rc.global)
		apply_reclaim(c, st, cc, &rc);
	cc->is_fresh = !cc->is_offline;
}

/* Why slot k of cc does not count, as the snapshot says it. */
static void slot_reason(const struct core_state *st, const struct core_cpu *cc, int k,
			char *buf, size_t len)
{
	const struct slot *sl = &cc->slots[k];

	if (sl->counter >= 0) {
		snprintf(buf, len, "counter not read this sample");
		return;
	}
	switch (sl->why) {
	case SLOT_ARCH_EVENT_MISSING:
		snprintf(buf, len, "architectural event not available on this CPU (CPUID.0AH:EBX bit %u)",
			 st->events[k]->arch_event - 1);
		break;
	case SLOT_NO_FREE_COUNTER:
		snprintf(buf, len,
			 "no free general-purpose counter (%u on this CPU, %u in use by another agent)",
			 n_gp_of(&cc->pm), cc->n_gp_busy);
		break;
	case SLOT_YIELDED:
		snprintf(buf, len, "counter %d taken over by another agent (on_conflict = yield)",
			 sl->yielded_counter);
		break;
	}
}

/* events: st->n_events entries of s for this CPU (NULL when s had no memory). */
static void fill_cpu(struct snapshot *s, const struct core_state *st, const struct core_cpu *cc,
		     struct snapshot_cpu *sp, struct snapshot_event *events)
{
	sp->conflicts = cc->conflicts;
	if (!cc->is_fresh)
		return;
	sp->has_core_pmu = true;
	sp->has_instructions = cc->fixed_owned[0] && cc->fixed_fresh[0];
	sp->instructions = cc->fixed[0].total;
	sp->has_cycles = cc->fixed_owned[1] && cc->fixed_fresh[1];
	sp->cycles = cc->fixed[1].total;
	sp->has_ref_cycles = cc->fixed_owned[2] && cc->fixed_fresh[2];
	sp->ref_cycles = cc->fixed[2].total;
	sp->events = events;
	/* On ENOMEM the events filled so far are kept. */
	for (int k = 0; k < st->n_events && events; k++) {
		const struct slot *sl = &cc->slots[k];
		bool available = sl->counter >= 0 && sl->is_fresh;
		char reason[128] = "";

		if (!available)
			slot_reason(st, cc, k, reason, sizeof(reason));
		if (snapshot_set_event(s, &events[k], st->events[k]->name, available,
				       available ? sl->ctr.total : 0, reason) < 0)
			break;
		sp->n_events = k + 1;
	}
}

static void core_sample(struct collector *c, struct snapshot *s)
{
	struct core_state *st = c->state;
	struct snapshot_event *events;

	if (!st)
		return;
	events = snapshot_alloc_events(s, (size_t)st->n_cpus * (size_t)st->n_events);
	for (int i = 0; i < st->n_cpus; i++) {
		struct core_cpu *cc = &st->cpus[i];
		struct snapshot_cpu *sp;

		sample_cpu(c, st, cc);
		sp = snapshot_cpu(s, cc->cpu);
		if (sp)
			fill_cpu(s, st, cc, sp, events ? &events[(size_t)i * (size_t)st->n_events] : NULL);
	}
}

static void core_stop(struct collector *c)
{
	struct core_state *st = c->state;
	unsigned n_failed = 0;
	int err;

	if (!st)
		return;
	err = pmu_restore(st->ledger, c->hw, &n_failed);
	if (err)
		collector_note(c, "%u core PMU registers not restored: %s", n_failed, hw_hint(err, HW_OP_WRITE));
	core_free(st);
	c->state = NULL;
}

uint64_t core_collector_reads_per_sample(const struct collector *c)
{
	const struct core_state *st = c->state;
	uint64_t n = 0;

	if (!st)
		return 0;
	for (int i = 0; i < st->n_cpus; i++) {
		const struct core_cpu *cc = &st->cpus[i];
		unsigned n_fixed = 0, n_gp = 0;

		if (cc->state != CPU_CLAIMED)
			continue;
		for (unsigned f = 0; f < N_FIXED; f++)
			n_fixed += cc->fixed_owned[f];
		for (int k = 0; k < st->n_events; k++)
			n_gp += cc->slots[k].counter >= 0;
		if (n_fixed + n_gp == 0)
			continue;
		n += 1 + (n_fixed ? 1 + n_fixed : 0) + 2 * n_gp;
	}
	return n;
}

static const char *core_unavailable(const struct event_spec *ev, const void *arg)
{
	const struct cpu_perfmon *pm = arg;

	return pm->version && ev->arch_event && (pm->unavailable & (1u << (ev->arch_event - 1))) ?
	       "marked unavailable by CPUID leaf 0xA" : NULL;
}

static void core_list_events(const struct cpu_info *info, struct strbuf *out)
{
	const struct cpu_perfmon *pm = &info->perfmon;

	if (pm->version)
		strbuf_printf(out, "core (per logical CPU, %u programmable counters of %u bits, "
			      "%u fixed of %u bits):\n", pm->n_gp, pm->gp_width_bits, pm->n_fixed,
			      pm->fixed_width_bits);
	else
		strbuf_append(out, "core (per logical CPU; the number of counters is read from CPUID at start):\n");
	strbuf_append(out, "  always counted:\n");
	strbuf_printf(out, "    %-34s %s\n", "instructions", "fixed counter 0");
	strbuf_printf(out, "    %-34s %s\n", "cycles", "fixed counter 1");
	strbuf_printf(out, "    %-34s %s\n", "ref_cycles", "fixed counter 2");
	event_list_builtins(EVENT_PMU_CORE, out, core_unavailable, pm);
}

/* Programmable core events allowed in a config; the CPU may have fewer (CPUID, at start). */
#define CONF_MAX_CORE_EVENTS 8

static void core_check_conf(const struct conf *conf, struct conf_check *chk)
{
	char taken[96];
	int i = conf_check_events(chk, conf->core_events, conf->n_core_events, EVENT_PMU_CORE,
				  conf->core_default_events, CONF_MAX_CORE_EVENTS, taken,
				  sizeof(taken));

	if (i >= 0)
		conf_check_error(chk, conf->core_events[i].line, "event",
				 "event '%s' does not fit: at most %d core events, and %d are already "
				 "taken by %s (the CPU's own counter count, from CPUID, is checked at "
				 "start)", conf->core_events[i].spec.name, CONF_MAX_CORE_EVENTS,
				 CONF_MAX_CORE_EVENTS, taken);
}

static const struct conf_key core_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_FIELD(core_enabled), .def = "yes" },
	{ "default_events", CONF_KIND_BOOL, CONF_FIELD(core_default_events), .def = "yes" },
	{ "on_conflict", CONF_KIND_ENUM, CONF_FIELD(core_on_conflict),
	  .names = conf_conflict_names, .def = "reclaim" },
	{ "event", CONF_KIND_EVENT, CONF_FIELD(core_events), .pmu = EVENT_PMU_CORE,
	  .count_offset = offsetof(struct conf, n_core_events) },
};

static const struct conf_section core_conf_section = {
	.name = "core", .keys = core_keys, .n_keys = sizeof(core_keys) / sizeof(core_keys[0]),
	.check = core_check_conf,
};

static bool core_is_enabled(const struct conf *conf)
{
	return conf->core_enabled;
}

static bool core_conf_changed(const struct conf *old, const struct conf *new)
{
	return old->core_enabled != new->core_enabled ||
	       old->core_default_events != new->core_default_events ||
	       old->core_on_conflict != new->core_on_conflict ||
	       !conf_events_equal(old->core_events, old->n_core_events,
				  new->core_events, new->n_core_events);
}

static void core_add_totals(struct snapshot *dst, const struct snapshot *src, int sign)
{
	for (int i = 0; i < src->n_cpus; i++) {
		const struct snapshot_cpu *b = &src->cpus[i];
		struct snapshot_cpu *d = snapshot_cpu(dst, b->cpu);

		if (!d)
			continue;
		d->instructions = snapshot_add_signed(d->instructions, b->instructions, sign);
		d->cycles = snapshot_add_signed(d->cycles, b->cycles, sign);
		d->ref_cycles = snapshot_add_signed(d->ref_cycles, b->ref_cycles, sign);
		d->conflicts = snapshot_add_signed(d->conflicts, b->conflicts, sign);
		snapshot_add_event_totals(d->events, d->n_events, b->events, b->n_events, sign);
	}
}

const struct collector_ops core_collector_ops = {
	.name = "core",
	.start = core_start,
	.sample = core_sample,
	.stop = core_stop,
	.conf_section = &core_conf_section,
	.list_events = core_list_events,
	.is_enabled = core_is_enabled,
	.conf_changed = core_conf_changed,
	.add_totals = core_add_totals,
};
