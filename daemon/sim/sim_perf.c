/*
 * The simulated kernel's perf_event subsystem: see sim_perf.h.  Each PMU
 * instance (the core PMU of a CPU, the uncore box of a package) is a
 * context with an ordered list of groups.  Any change re-schedules the
 * whole context: every event is taken off its counter (its count folded
 * in), then the groups are placed again in list order.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "msr.h"
#include "sim_box.h"
#include "sim_perf.h"
#include "sim_scenario.h"

#define FD_BASE        3           /* fds look like fds; the table index is fd - FD_BASE */
#define MAX_SLOTS      16
#define FIXED_SLOT(i)  (8 + (i))   /* slots 0..7 GP counters, 8.. fixed counters */
#define NO_SLOT        (-1)
#define CORE_RAW_MASK  UINT64_C(0xffacffff)  /* event|umask|edge|pc|any|inv|cmask, X86_RAW_EVENT_MASK */
#define UNC_RAW_MASK   UINT64_C(0xff84ffff)  /* event|umask|edge|inv|cmask, NHM_UNC_RAW_EVENT_MASK */
#define REF_PSEUDO     UINT64_C(0x0300)      /* ref-cycles: fixed counter 2 only */
#define UNC_CLOCK      UINT64_C(0xff)        /* the uncore fixed counter */
/* SNBEP_PCU_MSR_PMON_RAW_EVENT_MASK, SNBEP_PMON_RAW_EVENT_MASK (uncore_snbep.c) */
#define PCU_RAW_MASK   UINT64_C(0xdf84c0ff)  /* event|occ_sel|edge|inv|thresh5|occ_invert|occ_edge */
#define IMC_RAW_MASK   UINT64_C(0xff84ffff)  /* event|umask|edge|inv|thresh8 */
#define BOX_N_COUNTERS 4
#define SEL_KERNEL_BITS (PERFEVTSEL_INT | PERFEVTSEL_EN)
#define FIXED_NIBBLE_PERF (FIXED_CTR_CTRL_PMI | FIXED_CTR_CTRL_EN_USR | FIXED_CTR_CTRL_EN_OS)
#define NHM_UNC_GLOBAL_ENABLE UINT64_C(0x1000000ff)
#define READ_FORMATS (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		      PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

struct pev {
	bool used;
	int ctx;                     /* context index */
	int leader;                  /* index of the group leader (itself for a leader) */
	int next;                    /* next member of the group, -1: last */
	uint64_t config;             /* raw config the counter is programmed with */
	uint64_t usr_os;             /* USR/OS select bits (core) */
	uint64_t read_format;
	uint64_t id;
	bool enabled;
	bool dead;                   /* detached by its CPU going offline: counts no more */
	int slot;                    /* NO_SLOT when not on a counter */
	uint64_t count;              /* counted while on earlier counters */
	uint64_t start;              /* the counter's value when placed */
	/* leader only */
	uint64_t time_enabled, time_running;
	int64_t stamp;
};

enum box {
	BOX_NONE,
	BOX_PCU,
	BOX_IMC,
};

struct ctx {
	bool uncore;                 /* any uncore PMU (NHM/WSM uncore or a server box) */
	enum box box;                /* a server box: counts from the machine model */
	int socket, index;           /* box: its package and channel */
	int cpu;                     /* the CPU its registers are reached through */
	int *groups;                 /* leader indices, in scheduling order */
	int n_groups, cap;
	int64_t next_rotate;         /* SIM_FOREVER when every group fits */
};

struct sim_perf {
	const struct sim_model *m;
	struct sim_kernel *k;
	bool watchdog;
	struct sim_perf_io io;
	void *io_ctx;
	int n_cpus;
	struct ctx *ctxs;            /* n_cpus core contexts, one uncore per socket, then the boxes */
	int n_ctxs;
	int n_imc;                   /* memory channels per socket; 0: no server boxes */
	int pcu0, imc0;              /* index of the first PCU and iMC context */
	struct pev *ev;
	int n_ev, cap_ev;
	uint64_t next_id;
};

/* ---- counters ---- */

static uint32_t ctr_msr(const struct ctx *c, int slot)
{
	if (c->uncore)
		return slot >= FIXED_SLOT(0) ? MSR_UNCORE_FIXED_CTR0 : MSR_UNCORE_PMC0 + (uint32_t)slot;
	return slot >= FIXED_SLOT(0) ? IA32_FIXED_CTR0 + (uint32_t)(slot - FIXED_SLOT(0)) :
				       IA32_PMC0 + (uint32_t)slot;
}

static uint64_t ctr_mask(const struct sim_perf *p, const struct ctx *c, int slot)
{
	int w = c->uncore ? UNCORE_COUNTER_WIDTH :
		slot >= FIXED_SLOT(0) ? p->m->fixed_width : p->m->gp_width;

	return w >= 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
}

static uint64_t ctr_read(struct sim_perf *p, const struct ctx *c, int slot, int64_t t)
{
	uint64_t v = 0;

	p->io.read(p->io_ctx, c->cpu, ctr_msr(c, slot), &v, t);
	return v;
}

/* A server box's count of config so far; 0 for an event the model lacks. */
static uint64_t box_read(struct sim_perf *p, const struct ctx *c, uint64_t config, int64_t t)
{
	uint64_t v = 0;

	if (p->io.box_count(p->io_ctx, c->box == BOX_IMC, c->socket, c->index, config, t, &v) < 0)
		return 0;
	return v;
}

/* What e has counted up to t. */
static uint64_t ev_value(struct sim_perf *p, const struct pev *e, int64_t t)
{
	const struct ctx *c = &p->ctxs[e->ctx];

	if (e->slot == NO_SLOT)
		return e->count;
	if (c->box)
		return e->count + (box_read(p, c, e->config, t) - e->start);
	return e->count + ((ctr_read(p, c, e->slot, t) - e->start) & ctr_mask(p, c, e->slot));
}

/* Which counters e may use, as a slot mask. */
static uint32_t allowed_slots(const struct sim_perf *p, const struct ctx *c, const struct pev *e)
{
	uint32_t gp;

	if (c->box == BOX_PCU)
		return (1u << BOX_N_COUNTERS) - 1;
	if (c->box == BOX_IMC)
		return e->config == UNC_CLOCK ? 1u << FIXED_SLOT(0) : (1u << BOX_N_COUNTERS) - 1;
	if (c->uncore)
		return e->config == UNC_CLOCK ? 1u << FIXED_SLOT(0) :
		       (1u << UNCORE_N_COUNTERS) - 1;
	gp = (1u << p->m->n_gp) - 1;
	if (e->config == REF_PSEUDO)
		return p->m->n_fixed > 2 ? 1u << FIXED_SLOT(2) : 0;
	if (e->config == 0xc0 && p->m->n_fixed > 0)
		return gp | 1u << FIXED_SLOT(0);
	if (e->config == 0x3c && p->m->n_fixed > 1)
		return gp | 1u << FIXED_SLOT(1);
	return gp;
}

/* Place the members of leader into free slots (fixed first); false when one does not fit. */
static bool assign_group(const struct sim_perf *p, const struct ctx *c, int leader,
			 uint32_t *free_slots, int *ret_slots)
{
	uint32_t avail = *free_slots;
	int k = 0;

	for (int i = leader; i >= 0; i = p->ev[i].next, k++) {
		uint32_t ok = allowed_slots(p, c, &p->ev[i]) & avail;
		uint32_t fixed = ok & ~((1u << FIXED_SLOT(0)) - 1);
		int slot;

		if (!ok)
			return false;
		slot = __builtin_ctz(fixed ? fixed : ok);
		avail &= ~(1u << slot);
		ret_slots[k] = slot;
	}
	*free_slots = avail;
	return true;
}

static uint32_t all_slots(const struct sim_perf *p, const struct ctx *c)
{
	if (c->box == BOX_PCU)
		return (1u << BOX_N_COUNTERS) - 1;
	if (c->box == BOX_IMC)
		return ((1u << BOX_N_COUNTERS) - 1) | 1u << FIXED_SLOT(0);
	if (c->uncore)
		return ((1u << UNCORE_N_COUNTERS) - 1) | 1u << FIXED_SLOT(0);
	return ((1u << p->m->n_gp) - 1) |
	       (((1u << p->m->n_fixed) - 1) << FIXED_SLOT(0));
}

/* ---- times ---- */

static bool group_on(const struct sim_perf *p, int leader)
{
	return p->ev[leader].slot != NO_SLOT;
}

static void update_times(struct sim_perf *p, int leader, int64_t t)
{
	struct pev *l = &p->ev[leader];
	uint64_t dt = t > l->stamp ? (uint64_t)(t - l->stamp) : 0;

	if (l->enabled && !l->dead) {
		l->time_enabled += dt;
		if (group_on(p, leader))
			l->time_running += dt;
	}
	l->stamp = t;
}

/* ---- scheduling ---- */

static void program_core(struct sim_perf *p, struct ctx *c, uint32_t gp_mask, const uint64_t *gp_sel,
			 uint32_t fixed_off, uint32_t fixed_on, int64_t t)
{
	uint64_t fixed_ctrl = SIM_KERNEL_KEEP, cur = 0;

	if (fixed_off | fixed_on) {
		p->io.read(p->io_ctx, c->cpu, IA32_FIXED_CTR_CTRL, &cur, t);
		for (int i = 0; i < p->m->n_fixed; i++) {
			uint64_t nib = UINT64_C(0xf) << (FIXED_CTR_CTRL_STRIDE * i);

			if (fixed_off & (1u << i))
				cur &= ~nib;
			if (fixed_on & (1u << i))
				cur = (cur & ~nib) | (uint64_t)FIXED_NIBBLE_PERF << (FIXED_CTR_CTRL_STRIDE * i);
		}
		fixed_ctrl = cur;
	}
	sim_kernel_core_events(p->k, c->cpu, gp_mask, gp_sel, fixed_ctrl, fixed_on, t);
}

/* nhm_uncore_msr_disable_box, disable_event / enable_event, enable_box (§1.3). */
static void program_uncore(struct sim_perf *p, struct ctx *c, uint32_t off, const uint64_t *sel,
			   uint32_t on, int64_t t)
{
	p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL, 0, t);
	for (int n = 0; n < UNCORE_N_COUNTERS; n++) {
		if (off & (1u << n))
			p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_PERFEVTSEL0 + (uint32_t)n, 0, t);
		if (on & (1u << n)) {
			p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_PMC0 + (uint32_t)n, 0, t);
			p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_PERFEVTSEL0 + (uint32_t)n, sel[n], t);
		}
	}
	if (off & (1u << FIXED_SLOT(0)))
		p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_FIXED_CTR_CTRL, 0, t);
	if (on & (1u << FIXED_SLOT(0))) {
		p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_FIXED_CTR0, 0, t);
		p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_FIXED_CTR_CTRL, UNC_FIXED_CTR_CTRL_EN, t);
	}
	p->io.write(p->io_ctx, c->cpu, MSR_UNCORE_PERF_GLOBAL_CTRL, NHM_UNC_GLOBAL_ENABLE, t);
}

static void program(struct sim_perf *p, struct ctx *c, uint32_t off, uint32_t on,
		    const uint64_t *sel, int64_t t)
{
	uint32_t gp_mask = (off | on) & ((1u << FIXED_SLOT(0)) - 1);

	if (!(off | on) || c->box)
		return;   /* the boxes count from the machine model */
	if (c->uncore)
		program_uncore(p, c, off, sel, on, t);
	else
		program_core(p, c, gp_mask, sel, off >> FIXED_SLOT(0), on >> FIXED_SLOT(0), t);
}

/*
 * The scenario's task events come after the CPU-wide groups
 * (perf_event_sched_in: CPU flexible, then task flexible): each takes its
 * own counter when free, else the lowest free GP counter, else it waits.
 */
static uint32_t place_task_events(struct sim_perf *p, struct ctx *c, uint32_t *free_slots,
				  uint64_t *sel)
{
	uint32_t on = 0;

	for (int n = 0; n < p->m->n_gp; n++) {
		uint64_t want = sim_kernel_scn_select(p->k, c->cpu, n);
		uint32_t gp = *free_slots & ((1u << p->m->n_gp) - 1);
		int slot;

		if (!want || !gp)
			continue;
		slot = (gp & (1u << n)) ? n : __builtin_ctz(gp);
		*free_slots &= ~(1u << slot);
		sel[slot] = want | PERFEVTSEL_EN;
		on |= 1u << slot;
	}
	return on;
}

static void ctx_sched_out(struct sim_perf *p, struct ctx *c, int64_t t)
{
	uint64_t sel[MAX_SLOTS] = { 0 };
	uint32_t off = 0;

	for (int g = 0; g < c->n_groups; g++) {
		int leader = c->groups[g];

		update_times(p, leader, t);
		for (int i = leader; i >= 0; i = p->ev[i].next) {
			struct pev *e = &p->ev[i];

			if (e->slot == NO_SLOT)
				continue;
			if (e->enabled)
				e->count = ev_value(p, e, t);
			off |= 1u << e->slot;
			e->slot = NO_SLOT;
		}
	}
	if (!c->uncore)
		off |= sim_kernel_gp_perf(p->k, c->cpu);   /* the scenario's task events too */
	program(p, c, off, 0, sel, t);
}

static void ctx_sched_in(struct sim_perf *p, struct ctx *c, int64_t t)
{
	uint32_t free_slots = all_slots(p, c), on = 0;
	uint64_t sel[MAX_SLOTS] = { 0 };
	bool left_out = false;

	c->next_rotate = SIM_FOREVER;
	if (!c->uncore && p->watchdog && p->m->n_fixed > 1)
		free_slots &= ~(1u << FIXED_SLOT(1));
	for (int g = 0; g < c->n_groups; g++) {
		int leader = c->groups[g], slots[MAX_SLOTS], k = 0;

		update_times(p, leader, t);
		if (!p->ev[leader].enabled)
			continue;
		/* merge_sched_in: after the first group that fails, nothing more is added. */
		if (left_out || !assign_group(p, c, leader, &free_slots, slots)) {
			left_out = true;
			continue;
		}
		for (int i = leader; i >= 0; i = p->ev[i].next, k++) {
			struct pev *e = &p->ev[i];

			e->slot = slots[k];
			on |= 1u << e->slot;
			sel[e->slot] = c->uncore ? e->config | UNC_EVTSEL_EN :
				       e->config | e->usr_os | SEL_KERNEL_BITS;
		}
	}
	if (!c->uncore)
		on |= place_task_events(p, c, &free_slots, sel);
	program(p, c, 0, on, sel, t);
	/* Counters start where the kernel left them (0, or what the workaround wrote). */
	for (int g = 0; g < c->n_groups; g++)
		for (int i = c->groups[g]; i >= 0; i = p->ev[i].next)
			if (p->ev[i].slot != NO_SLOT)
				p->ev[i].start = c->box ? box_read(p, c, p->ev[i].config, t) :
					  ctr_read(p, c, p->ev[i].slot, t);
	if (left_out)
		c->next_rotate = t + SIM_PERF_MUX_NS;
}

static void resched(struct sim_perf *p, struct ctx *c, int64_t t)
{
	ctx_sched_out(p, c, t);
	ctx_sched_in(p, c, t);
}

int64_t sim_perf_next(const struct sim_perf *p)
{
	int64_t next = SIM_FOREVER;

	for (int i = 0; i < p->n_ctxs; i++)
		if (p->ctxs[i].next_rotate < next)
			next = p->ctxs[i].next_rotate;
	return next;
}

void sim_perf_step(struct sim_perf *p)
{
	int64_t t = sim_perf_next(p);

	if (t == SIM_FOREVER)
		return;
	for (int i = 0; i < p->n_ctxs; i++) {
		struct ctx *c = &p->ctxs[i];

		if (c->next_rotate != t)
			continue;
		ctx_sched_out(p, c, t);
		/* rotate_ctx: the first group goes to the end of the list. */
		if (c->n_groups > 1) {
			int first = c->groups[0];

			memmove(c->groups, c->groups + 1, (size_t)(c->n_groups - 1) * sizeof(int));
			c->groups[c->n_groups - 1] = first;
		}
		ctx_sched_in(p, c, t);
	}
}

void sim_perf_core_sched_out(struct sim_perf *p, int64_t t)
{
	for (int i = 0; i < p->n_cpus; i++)
		if (p->ctxs[i].n_groups)
			ctx_sched_out(p, &p->ctxs[i], t);
}

void sim_perf_core_sched_in(struct sim_perf *p, int64_t t)
{
	for (int i = 0; i < p->n_cpus; i++)
		if (p->ctxs[i].n_groups)
			ctx_sched_in(p, &p->ctxs[i], t);
}

/*
 * __perf_event_exit_context: the CPU's events are detached and stop
 * counting; they stay open, out of the context, until closed.  Events
 * opened once the CPU is back start a fresh context.
 */
static void detach(struct sim_perf *p, struct ctx *c, int64_t t)
{
	ctx_sched_out(p, c, t);
	for (int g = 0; g < c->n_groups; g++)
		for (int i = c->groups[g]; i >= 0; i = p->ev[i].next)
			p->ev[i].dead = true;
	c->n_groups = 0;
	ctx_sched_in(p, c, t);   /* the scenario's task events, now alone */
}

void sim_perf_hotplug(struct sim_perf *p, int cpu, bool online, int64_t t)
{
	if (cpu < 0 || cpu >= p->n_cpus || online)
		return;
	detach(p, &p->ctxs[cpu], t);
}

/* A CPU found offline by an access (a scenario's offline window) detaches its events. */
static void check_online(struct sim_perf *p, struct ctx *c, int64_t t)
{
	if (!c->uncore && c->n_groups && !p->io.online(p->io_ctx, c->cpu, t))
		detach(p, c, t);
}

/* ---- events ---- */

static struct pev *lookup(struct sim_perf *p, int fd)
{
	int i = fd - FD_BASE;

	if (i < 0 || i >= p->n_ev || !p->ev[i].used)
		return NULL;
	return &p->ev[i];
}

static int add_group(struct ctx *c, int leader)
{
	if (c->n_groups == c->cap) {
		int cap = c->cap ? c->cap * 2 : 4;
		int *g = realloc(c->groups, (size_t)cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		c->groups = g;
		c->cap = cap;
	}
	c->groups[c->n_groups++] = leader;
	return 0;
}

static void remove_group(struct ctx *c, int leader)
{
	for (int g = 0; g < c->n_groups; g++)
		if (c->groups[g] == leader) {
			memmove(c->groups + g, c->groups + g + 1,
				(size_t)(c->n_groups - g - 1) * sizeof(int));
			c->n_groups--;
			return;
		}
}

static int new_event(struct sim_perf *p)
{
	for (int i = 0; i < p->n_ev; i++)
		if (!p->ev[i].used)
			return i;
	if (p->n_ev == p->cap_ev) {
		int cap = p->cap_ev ? p->cap_ev * 2 : 64;
		struct pev *ev = realloc(p->ev, (size_t)cap * sizeof(*ev));

		if (!ev)
			return -ENOMEM;
		p->ev = ev;
		p->cap_ev = cap;
	}
	return p->n_ev++;
}

/* intel_perfmon_event_map (hardware-linux.md §3.1). */
static int generic_config(uint64_t config, uint64_t *ret)
{
	static const uint64_t map[] = {
		[PERF_COUNT_HW_CPU_CYCLES] = 0x003c,
		[PERF_COUNT_HW_INSTRUCTIONS] = 0x00c0,
		[PERF_COUNT_HW_CACHE_REFERENCES] = 0x4f2e,
		[PERF_COUNT_HW_CACHE_MISSES] = 0x412e,
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = 0x00c4,
		[PERF_COUNT_HW_BRANCH_MISSES] = 0x00c5,
		[PERF_COUNT_HW_REF_CPU_CYCLES] = REF_PSEUDO,
	};

	if (config >= sizeof(map) / sizeof(map[0]) || !map[config])
		return -ENOENT;
	*ret = map[config];
	return 0;
}

/*
 * A server box PMU's event (uncore_pmu_event_init): no sampling, no
 * exclude bits; the config is masked with the box's event mask, and 0xff
 * selects the fixed counter where the box has one (the iMC).  *ret_ctx is
 * the box of cpu's package.  -ENOENT when type is no box PMU.
 */
static int check_box_attr(const struct sim_perf *p, const struct perf_event_attr *attr, int cpu,
			  int *ret_ctx, uint64_t *ret_config)
{
	bool any_exclude = attr->exclude_user || attr->exclude_kernel || attr->exclude_hv ||
			   attr->exclude_idle;
	struct hw_cpu topo;
	int core_index;
	bool imc;

	if (!p->n_imc || attr->type < SIM_PERF_PCU_TYPE ||
	    attr->type >= SIM_PERF_IMC_TYPE0 + (uint32_t)p->n_imc)
		return -ENOENT;
	if (attr->sample_period || any_exclude)
		return -EINVAL;
	imc = attr->type >= SIM_PERF_IMC_TYPE0;
	sim_model_topology(p->m, cpu, &topo, &core_index);
	if (imc) {
		*ret_ctx = p->imc0 + sim_model_unit(p->m, cpu) * p->n_imc +
			   (int)(attr->type - SIM_PERF_IMC_TYPE0);
		*ret_config = attr->config == UNC_CLOCK ? UNC_CLOCK : attr->config & IMC_RAW_MASK;
	} else {
		*ret_ctx = p->pcu0 + sim_model_unit(p->m, cpu);
		*ret_config = attr->config & PCU_RAW_MASK;
	}
	return 0;
}

/* What the attr asks for, checked as the PMU's event_init would. */
static int check_attr(const struct sim_perf *p, const struct perf_event_attr *attr, bool *ret_uncore,
		      uint64_t *ret_config)
{
	bool intel = p->m->flags & SIM_F_INTEL;
	bool any_exclude = attr->exclude_user || attr->exclude_kernel || attr->exclude_hv ||
			   attr->exclude_idle;

	if (attr->size < PERF_ATTR_SIZE_VER0 || (attr->read_format & ~(uint64_t)READ_FORMATS))
		return -EINVAL;
	if (attr->type == PERF_TYPE_HARDWARE && intel) {
		*ret_uncore = false;
		return generic_config(attr->config, ret_config);
	}
	if (attr->type == SIM_PERF_CPU_TYPE && intel) {
		if (attr->config & ~CORE_RAW_MASK)
			return -EINVAL;
		*ret_uncore = false;
		*ret_config = attr->config;
	} else if (attr->type == SIM_PERF_UNCORE_TYPE && (p->m->flags & SIM_F_NHM_UNCORE)) {
		/* uncore_pmu_event_init: no sampling, no exclude bits. */
		if (attr->sample_period || any_exclude || (attr->config & ~UNC_RAW_MASK))
			return -EINVAL;
		*ret_uncore = true;
		*ret_config = attr->config;
		return 0;
	} else {
		return -ENOENT;
	}
	return attr->sample_period ? -EOPNOTSUPP : 0;
}

int sim_perf_open(struct sim_perf *p, const struct perf_event_attr *attr, pid_t pid, int cpu,
		  int group_fd, unsigned long flags, int64_t t)
{
	struct pev *leader = NULL;
	struct ctx *c;
	uint64_t config;
	bool uncore = false;
	int r, i;

	int box_ctx = -1;

	if (pid != -1 || cpu < 0 || cpu >= p->n_cpus || (flags & ~PERF_FLAG_FD_CLOEXEC))
		return -EINVAL;
	if (attr->size < PERF_ATTR_SIZE_VER0 || (attr->read_format & ~(uint64_t)READ_FORMATS))
		return -EINVAL;
	r = check_box_attr(p, attr, cpu, &box_ctx, &config);
	if (r == -ENOENT)
		r = check_attr(p, attr, &uncore, &config);
	if (r < 0)
		return r;
	if (box_ctx >= 0) {
		c = &p->ctxs[box_ctx];
	} else if (uncore) {
		struct hw_cpu topo;
		int core_index;

		/* uncore_pmu_event_init: the event goes to its package's box. */
		sim_model_topology(p->m, cpu, &topo, &core_index);
		c = &p->ctxs[p->n_cpus + topo.socket];
	} else {
		c = &p->ctxs[cpu];
	}
	if (!p->io.online(p->io_ctx, cpu, t))
		return -ENODEV;
	check_online(p, c, t);
	if (group_fd != -1) {
		leader = lookup(p, group_fd);
		if (!leader)
			return -EBADF;
		if (leader->leader != group_fd - FD_BASE || &p->ctxs[leader->ctx] != c ||
		    leader->dead)
			return -EINVAL;
	}
	i = new_event(p);   /* may move p->ev: leader is not used after this */
	if (i < 0)
		return i;
	p->ev[i] = (struct pev){
		.used = true, .ctx = (int)(c - p->ctxs), .leader = group_fd != -1 ? group_fd - FD_BASE : i,
		.next = -1, .config = config, .read_format = attr->read_format,
		.id = ++p->next_id, .enabled = !attr->disabled, .slot = NO_SLOT, .stamp = t,
		.usr_os = (attr->exclude_user ? 0 : PERFEVTSEL_USR) |
			  (attr->exclude_kernel ? 0 : PERFEVTSEL_OS),
	};
	if (group_fd != -1) {
		int last = group_fd - FD_BASE, slots[MAX_SLOTS];
		uint32_t all = all_slots(p, c);

		while (p->ev[last].next >= 0)
			last = p->ev[last].next;
		p->ev[last].next = i;
		/* validate_group: the group must fit an empty PMU. */
		if (!assign_group(p, c, group_fd - FD_BASE, &all, slots)) {
			p->ev[last].next = -1;
			p->ev[i].used = false;
			return -EINVAL;
		}
	} else {
		uint32_t all = all_slots(p, c);
		int slots[MAX_SLOTS];

		if (!assign_group(p, c, i, &all, slots) || add_group(c, i) < 0) {
			p->ev[i].used = false;
			return -EINVAL;
		}
	}
	resched(p, c, t);
	return i + FD_BASE;
}

ssize_t sim_perf_read(struct sim_perf *p, int fd, void *buf, size_t len, int64_t t)
{
	struct pev *e = lookup(p, fd), *l;
	uint64_t out[3 + 2 * 64];
	size_t n = 0;
	int nr = 0;

	if (!e)
		return -EBADF;
	l = &p->ev[e->leader];
	check_online(p, &p->ctxs[e->ctx], t);
	update_times(p, e->leader, t);
	if (!(e->read_format & PERF_FORMAT_GROUP)) {
		out[n++] = ev_value(p, e, t);
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
			out[n++] = l->time_enabled;
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
			out[n++] = l->time_running;
		if (e->read_format & PERF_FORMAT_ID)
			out[n++] = e->id;
	} else {
		for (int i = e->leader; i >= 0; i = p->ev[i].next)
			nr++;
		out[n++] = (uint64_t)nr;
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
			out[n++] = l->time_enabled;
		if (e->read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
			out[n++] = l->time_running;
		for (int i = e->leader; i >= 0 && n + 2 <= sizeof(out) / sizeof(out[0]);
		     i = p->ev[i].next) {
			out[n++] = ev_value(p, &p->ev[i], t);
			if (e->read_format & PERF_FORMAT_ID)
				out[n++] = p->ev[i].id;
		}
	}
	if (len < n * sizeof(uint64_t))
		return -ENOSPC;
	memcpy(buf, out, n * sizeof(uint64_t));
	return (ssize_t)(n * sizeof(uint64_t));
}

int sim_perf_ioctl(struct sim_perf *p, int fd, unsigned long request, unsigned long arg,
		   int64_t t)
{
	struct pev *e = lookup(p, fd);
	struct ctx *c;
	int first, idx;

	if (!e)
		return -EBADF;
	c = &p->ctxs[e->ctx];
	idx = (int)(e - p->ev);
	if (request == PERF_EVENT_IOC_ID) {
		*(uint64_t *)arg = e->id;
		return 0;
	}
	if (request != PERF_EVENT_IOC_ENABLE && request != PERF_EVENT_IOC_DISABLE &&
	    request != PERF_EVENT_IOC_RESET)
		return -ENOTTY;
	check_online(p, c, t);
	ctx_sched_out(p, c, t);
	first = (arg & PERF_IOC_FLAG_GROUP) ? e->leader : idx;
	for (int i = first; i >= 0; i = (arg & PERF_IOC_FLAG_GROUP) ? p->ev[i].next : -1) {
		if (request == PERF_EVENT_IOC_RESET)
			p->ev[i].count = 0;
		else
			p->ev[i].enabled = request == PERF_EVENT_IOC_ENABLE;
	}
	ctx_sched_in(p, c, t);
	return 0;
}

int sim_perf_close(struct sim_perf *p, int fd, int64_t t)
{
	struct pev *e = lookup(p, fd);
	struct ctx *c;
	int idx;

	if (!e)
		return -EBADF;
	c = &p->ctxs[e->ctx];
	idx = (int)(e - p->ev);
	ctx_sched_out(p, c, t);
	if (e->leader == idx) {
		/* perf_group_detach: the members become groups of their own. */
		remove_group(c, idx);
		for (int i = e->next, next; i >= 0; i = next) {
			next = p->ev[i].next;
			p->ev[i].leader = i;
			p->ev[i].next = -1;
			p->ev[i].stamp = t;
			p->ev[i].time_enabled = p->ev[i].time_running = 0;
			if (!p->ev[i].dead)
				add_group(c, i);
		}
	} else {
		for (int i = e->leader; i >= 0; i = p->ev[i].next)
			if (p->ev[i].next == idx) {
				p->ev[i].next = e->next;
				break;
			}
	}
	e->used = false;
	ctx_sched_in(p, c, t);
	return 0;
}

size_t sim_perf_n_open(const struct sim_perf *p)
{
	size_t n = 0;

	for (int i = 0; i < p->n_ev; i++)
		n += p->ev[i].used;
	return n;
}

static bool manages(void *ctx, int cpu)
{
	const struct sim_perf *p = ctx;

	return p->ctxs[cpu].n_groups > 0;
}

int sim_perf_new(const struct sim_model *m, struct sim_kernel *k, bool watchdog,
		 const struct sim_perf_io *io, void *ctx, struct sim_perf **ret_perf)
{
	struct sim_perf *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->m = m;
	p->k = k;
	p->watchdog = watchdog && (m->flags & SIM_F_INTEL);
	p->io = *io;
	p->io_ctx = ctx;
	p->n_cpus = sim_model_n_cpus(m);
	p->n_imc = xeon_uncore_find(m->family, m->model) && (m->flags & SIM_F_INTEL) ? m->n_imc : 0;
	p->pcu0 = p->n_cpus + m->n_sockets;
	p->imc0 = p->pcu0 + (p->n_imc ? m->n_sockets * sim_model_n_dies(m) : 0);
	p->n_ctxs = p->imc0 + m->n_sockets * sim_model_n_dies(m) * p->n_imc;
	p->ctxs = calloc((size_t)p->n_ctxs, sizeof(*p->ctxs));
	if (!p->ctxs) {
		free(p);
		return -ENOMEM;
	}
	for (int i = 0; i < p->n_ctxs; i++) {
		struct ctx *c = &p->ctxs[i];

		c->next_rotate = SIM_FOREVER;
		c->uncore = i >= p->n_cpus;
		/* A box's socket is its unit (sim_box.h: socket * dies + die). */
		if (i >= p->imc0) {
			c->box = BOX_IMC;
			c->socket = (i - p->imc0) / p->n_imc;
			c->index = (i - p->imc0) % p->n_imc;
		} else if (i >= p->pcu0) {
			c->box = BOX_PCU;
			c->socket = i - p->pcu0;
		} else {
			c->socket = c->uncore ? i - p->n_cpus : 0;
		}
		c->cpu = c->box ? sim_model_unit_cpu(m, c->socket) :
			 c->uncore ? sim_model_cpu_of(m, c->socket, 0, 0) : i;
	}
	sim_kernel_set_manager(k, manages, p);
	*ret_perf = p;
	return 0;
}

void sim_perf_free(struct sim_perf *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->n_ctxs; i++)
		free(p->ctxs[i].groups);
	free(p->ctxs);
	free(p->ev);
	free(p);
}

/* ---- the sysfs tree ---- */

static int mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*s = '/';
			return -errno;
		}
		*s = '/';
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int put(const char *dir, const char *name, const char *text, char *err, size_t errlen)
{
	char path[2 * PATH_MAX];
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f || fprintf(f, "%s\n", text) < 0)
		r = -errno;
	if (f && fclose(f) != 0 && r == 0)
		r = -errno;
	if (r < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	return r;
}

struct sysfs_file {
	const char *name, *text;
};

static int put_pmu(const char *root, const char *pmu, const struct sysfs_file *files, size_t n,
		   char *err, size_t errlen)
{
	char dir[PATH_MAX], sub[PATH_MAX + 16];
	int r;

	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, pmu);
	for (size_t i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, i ? "events" : "format");
		if ((r = mkdirs(sub)) < 0) {
			snprintf(err, errlen, "%s: %s", sub, strerror(-r));
			return r;
		}
	}
	for (size_t i = 0; i < n; i++)
		if ((r = put(dir, files[i].name, files[i].text, err, errlen)) < 0)
			return r;
	return 0;
}

/*
 * cpumask: the first CPU of each package, or of each die for the server
 * boxes (per_die), which are per die (uncore_get_attr_cpumask).
 */
static int put_cpumask(const struct sim_model *m, const char *root, const char *pmu, bool per_die,
		       char *err, size_t errlen)
{
	int n = m->n_sockets * (per_die ? sim_model_n_dies(m) : 1);
	char cpumask[1024] = "", dir[PATH_MAX];
	size_t used = 0;

	for (int u = 0; u < n && used < sizeof(cpumask); u++)
		used += (size_t)snprintf(cpumask + used, sizeof(cpumask) - used, "%s%d", u ? "," : "",
					 per_die ? sim_model_unit_cpu(m, u) :
					 sim_model_cpu_of(m, u, 0, 0));
	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, pmu);
	return put(dir, "cpumask", cpumask, err, errlen);
}

/*
 * The server boxes: Skylake-SP's (uncore_snbep.c skx_uncore_pcu_formats_attr,
 * skx_uncore_formats_attr, hswep_uncore_imc_events; only the first of the
 * kernel's iMC aliases are written).  Types are the simulator's choice.
 */
static int write_boxes(const struct sim_model *m, const char *root, char *err, size_t errlen)
{
	static const struct sysfs_file pcu[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" }, { "format/occ_invert", "config:30" },
		{ "format/occ_edge_det", "config:31" },
		{ "format/filter_band0", "config1:0-7" }, { "format/filter_band1", "config1:8-15" },
		{ "format/filter_band2", "config1:16-23" }, { "format/filter_band3", "config1:24-31" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file imc[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "events/clockticks", "event=0x00,umask=0x00" },
		{ "events/cas_count_read", "event=0x04,umask=0x03" },
		{ "events/cas_count_read.scale", "6.103515625e-5" },
		{ "events/cas_count_read.unit", "MiB" },
		{ "events/cas_count_write", "event=0x04,umask=0x0c" },
		{ "events/cas_count_write.scale", "6.103515625e-5" },
		{ "events/cas_count_write.unit", "MiB" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	/*
	 * Sandy Bridge-EP (uncore_snbep.c snbep_uncore_pcu_formats_attr, of
	 * which the occupancy edge/invert and band filter fields are not
	 * written; snbep_uncore_formats_attr and snbep_uncore_imc_events).
	 */
	static const struct sysfs_file snbep_pcu[] = {
		{ "format/event", "config:0-7" }, { "format/occ_sel", "config:14-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-28" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file snbep_imc[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "events/clockticks", "event=0xff,umask=0x00" },
		{ "events/cas_count_read", "event=0x04,umask=0x03" },
		{ "events/cas_count_write", "event=0x04,umask=0x0c" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	/*
	 * Sapphire Rapids and later: discovery types.  The PCU has no format
	 * group of its own (spr_uncore_pcu), so the generic discovery formats
	 * (uncore_discovery.c generic_uncore_formats_attr); the iMC has
	 * spr_uncore_raw_formats_attr (umask_ext4) and spr_uncore_imc_events'
	 * clockticks.  Granite Rapids' tree is written the same way: the
	 * kernel's GNR table was not read here.
	 */
	static const struct sysfs_file spr_pcu[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file spr_imc[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15,32-55" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "events/clockticks", "event=0x01,umask=0x00" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	int n_imc = xeon_uncore_find(m->family, m->model) ? m->n_imc : 0;
	bool snbep = m->model == 0x2d, spr = m->model == 0x8f || m->model == 0xad;
	const struct sysfs_file *pcu_files = snbep ? snbep_pcu : spr ? spr_pcu : pcu;
	const struct sysfs_file *imc_files = snbep ? snbep_imc : spr ? spr_imc : imc;
	size_t n_pcu_files = snbep ? sizeof(snbep_pcu) / sizeof(snbep_pcu[0]) :
			     spr ? sizeof(spr_pcu) / sizeof(spr_pcu[0]) : sizeof(pcu) / sizeof(pcu[0]);
	size_t n_imc_files = snbep ? sizeof(snbep_imc) / sizeof(snbep_imc[0]) :
			     spr ? sizeof(spr_imc) / sizeof(spr_imc[0]) : sizeof(imc) / sizeof(imc[0]);

	/*
	 * Ice Lake-SP: skx_uncore_pcu, and icx_uncore_imc with
	 * skx_uncore_format_group; its snr_uncore_imc_events aliases are not
	 * written (their text was not read here): the formats alone.
	 */
	if (m->model == 0x6a)
		n_imc_files = 5;
	char name[64], type[16], dir[PATH_MAX];
	int r;

	if (!n_imc)
		return 0;
	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/uncore_pcu", root);
	snprintf(type, sizeof(type), "%d", SIM_PERF_PCU_TYPE);
	if ((r = put_pmu(root, "uncore_pcu", pcu_files, n_pcu_files, err, errlen)) < 0 ||
	    (r = put(dir, "type", type, err, errlen)) < 0 ||
	    (r = put_cpumask(m, root, "uncore_pcu", true, err, errlen)) < 0)
		return r;
	for (int ch = 0; ch < n_imc; ch++) {
		snprintf(name, sizeof(name), "uncore_imc_%d", ch);
		snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name);
		snprintf(type, sizeof(type), "%d", SIM_PERF_IMC_TYPE0 + ch);
		if ((r = put_pmu(root, name, imc_files, n_imc_files, err, errlen)) < 0 ||
		    (r = put(dir, "type", type, err, errlen)) < 0 ||
		    (r = put_cpumask(m, root, name, true, err, errlen)) < 0)
			return r;
	}
	return 0;
}

int sim_perf_write_sysfs(const struct sim_model *m, const char *root, char *err, size_t errlen)
{
	/* arch/x86/events/intel/core.c PMU_FORMAT_ATTR; uncore_snb.c nhm_uncore (§3.2). */
	static const struct sysfs_file cpu[] = {
		{ "type", "4" },
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/pc", "config:19" },
		{ "format/any", "config:21" }, { "format/inv", "config:23" },
		{ "format/cmask", "config:24-31" },
		{ "events/cpu-cycles", "event=0x3c" }, { "events/instructions", "event=0xc0" },
		{ "events/ref-cycles", "event=0x00,umask=0x03" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file uncore[] = {
		{ "type", "10" },
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/cmask", "config:24-31" },
		{ "events/clockticks", "event=0xff,umask=0x00" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	int r;

	if ((m->flags & SIM_F_INTEL) &&
	    (r = put_pmu(root, "cpu", cpu, sizeof(cpu) / sizeof(cpu[0]), err, errlen)) < 0)
		return r;
	if ((m->flags & SIM_F_INTEL) && (r = write_boxes(m, root, err, errlen)) < 0)
		return r;
	if (!(m->flags & SIM_F_NHM_UNCORE))
		return 0;
	r = put_pmu(root, "uncore", uncore, sizeof(uncore) / sizeof(uncore[0]), err, errlen);
	if (r < 0)
		return r;
	return put_cpumask(m, root, "uncore", false, err, errlen);
}
