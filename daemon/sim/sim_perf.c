/*
 * The simulated kernel's perf_event subsystem: see sim_perf.h.  Each PMU
 * instance (the core PMU of a CPU, the uncore box of a package) is a
 * context with an ordered list of groups.  Any change re-schedules the
 * whole context: every event is taken off its counter (its count folded
 * in), then the groups are placed again in list order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_box.h"
#include "sim_perf_int.h"
#include "sim_scenario.h"

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

/*
 * PERF_TYPE_HARDWARE's events on m: intel_perfmon_event_map
 * (hardware-linux.md §3.1), or AMD's zen2/zen4 map (hardware-amd.md §3.3),
 * whose Zen 4+ form (PerfMonV2 models here) alone maps ref-cycles.
 * Unmapped events are ENOENT.
 */
static int generic_config(const struct sim_model *m, uint64_t config, uint64_t *ret)
{
	static const uint64_t intel[PERF_COUNT_HW_MAX] = {
		[PERF_COUNT_HW_CPU_CYCLES] = 0x003c,
		[PERF_COUNT_HW_INSTRUCTIONS] = 0x00c0,
		[PERF_COUNT_HW_CACHE_REFERENCES] = 0x4f2e,
		[PERF_COUNT_HW_CACHE_MISSES] = 0x412e,
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = 0x00c4,
		[PERF_COUNT_HW_BRANCH_MISSES] = 0x00c5,
		[PERF_COUNT_HW_REF_CPU_CYCLES] = REF_PSEUDO,
	};
	static const uint64_t amd[PERF_COUNT_HW_MAX] = {
		[PERF_COUNT_HW_CPU_CYCLES] = AMD_EV_CYCLES,
		[PERF_COUNT_HW_INSTRUCTIONS] = AMD_EV_INSTRUCTIONS,
		[PERF_COUNT_HW_CACHE_REFERENCES] = AMD_EV_CACHE_REFERENCES,
		[PERF_COUNT_HW_CACHE_MISSES] = AMD_EV_CACHE_MISSES,
		[PERF_COUNT_HW_BRANCH_INSTRUCTIONS] = AMD_EV_BRANCHES,
		[PERF_COUNT_HW_BRANCH_MISSES] = AMD_EV_BRANCH_MISSES,
		[PERF_COUNT_HW_REF_CPU_CYCLES] = AMD_EV_REF_CYCLES,
	};
	bool is_amd = m->flags & SIM_F_AMD_PMU;
	const uint64_t *map = is_amd ? amd : intel;

	if (config >= PERF_COUNT_HW_MAX || !map[config])
		return -ENOENT;
	if (is_amd && config == PERF_COUNT_HW_REF_CPU_CYCLES && !(m->flags & SIM_F_PERFMON_V2))
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
	int unit = sim_model_unit(p->m, cpu), pcu = -1, imc = -1;

	if (!p->n_imc)
		return -ENOENT;
	if (attr->type == SIM_PERF_PCU_TYPE)
		pcu = 0;
	else if (attr->type > SIM_PERF_PCU_TYPE_N && attr->type < SIM_PERF_PCU_TYPE_N + (uint32_t)p->n_pcu)
		pcu = (int)(attr->type - SIM_PERF_PCU_TYPE_N);
	else if (attr->type >= SIM_PERF_IMC_TYPE0 && attr->type < SIM_PERF_IMC_TYPE0 + (uint32_t)p->n_imc)
		imc = (int)(attr->type - SIM_PERF_IMC_TYPE0);
	else
		return -ENOENT;
	if (attr->sample_period || any_exclude)
		return -EINVAL;
	if (imc >= 0) {
		*ret_ctx = p->imc0 + unit * p->n_imc + imc;
		*ret_config = attr->config == UNC_CLOCK ? UNC_CLOCK : attr->config & IMC_RAW_MASK;
	} else {
		*ret_ctx = p->pcu0 + unit * p->n_pcu + pcu;
		*ret_config = attr->config & PCU_RAW_MASK;
	}
	return 0;
}

/*
 * The msr PMU's event_init (arch/x86/events/msr.c): no sampling, no
 * exclude bits, config one of the events it lists (tsc, aperf, mperf,
 * irperf on AMD).  *ret_ctx is cpu's msr context.  -ENOENT when type is
 * not the msr PMU.
 */
static int check_msr_attr(const struct sim_perf *p, const struct perf_event_attr *attr, int cpu,
			  int *ret_ctx, uint64_t *ret_config)
{
	bool any_exclude = attr->exclude_user || attr->exclude_kernel || attr->exclude_hv ||
			   attr->exclude_idle;

	if (!p->msr0 || attr->type != SIM_PERF_MSR_TYPE)
		return -ENOENT;
	if (attr->sample_period || any_exclude ||
	    (attr->config != PERF_MSR_TSC && attr->config != PERF_MSR_APERF &&
	     attr->config != PERF_MSR_MPERF && attr->config != PERF_MSR_IRPERF))
		return -EINVAL;
	*ret_ctx = p->msr0 + cpu;
	*ret_config = attr->config;
	return 0;
}

/* What the attr asks for, checked as the PMU's event_init would. */
static int check_attr(const struct sim_perf *p, const struct perf_event_attr *attr, bool *ret_uncore,
		      uint64_t *ret_config)
{
	bool intel = p->m->flags & SIM_F_INTEL, amd = p->m->flags & SIM_F_AMD_PMU;
	bool any_exclude = attr->exclude_user || attr->exclude_kernel || attr->exclude_hv ||
			   attr->exclude_idle;

	if (attr->size < PERF_ATTR_SIZE_VER0 || (attr->read_format & ~(uint64_t)READ_FORMATS))
		return -EINVAL;
	if (attr->type == PERF_TYPE_HARDWARE && (intel || amd)) {
		*ret_uncore = false;
		return generic_config(p->m, attr->config, ret_config);
	}
	if (attr->type == SIM_PERF_CPU_TYPE && (intel || amd)) {
		if (attr->config & ~(intel ? CORE_RAW_MASK : AMD64_RAW_EVENT_MASK))
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
		r = check_msr_attr(p, attr, cpu, &box_ctx, &config);
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
	sim_perf_check_online(p, c, t);
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
		.pinned = group_fd == -1 && attr->pinned,
		.usr_os = (attr->exclude_user ? 0 : ARCH_PERFMON_EVENTSEL_USR) |
			  (attr->exclude_kernel ? 0 : ARCH_PERFMON_EVENTSEL_OS),
	};
	if (group_fd != -1) {
		int last = group_fd - FD_BASE, slots[MAX_SLOTS];
		uint32_t all = sim_perf_all_slots(p, c);

		while (p->ev[last].next >= 0)
			last = p->ev[last].next;
		p->ev[last].next = i;
		/* validate_group: the group must fit an empty PMU. */
		if (!sim_perf_assign_group(p, c, group_fd - FD_BASE, &all, slots)) {
			p->ev[last].next = -1;
			p->ev[i].used = false;
			return -EINVAL;
		}
	} else {
		uint32_t all = sim_perf_all_slots(p, c);
		int slots[MAX_SLOTS];

		if (!sim_perf_assign_group(p, c, i, &all, slots) || add_group(c, i) < 0) {
			p->ev[i].used = false;
			return -EINVAL;
		}
	}
	sim_perf_resched(p, c, t);
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
	sim_perf_check_online(p, &p->ctxs[e->ctx], t);
	sim_perf_update_times(p, e->leader, t);
	if (!(e->read_format & PERF_FORMAT_GROUP)) {
		out[n++] = sim_perf_ev_value(p, e, t);
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
			out[n++] = sim_perf_ev_value(p, &p->ev[i], t);
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
	sim_perf_check_online(p, c, t);
	sim_perf_ctx_sched_out(p, c, t);
	first = (arg & PERF_IOC_FLAG_GROUP) ? e->leader : idx;
	for (int i = first; i >= 0; i = (arg & PERF_IOC_FLAG_GROUP) ? p->ev[i].next : -1) {
		if (request == PERF_EVENT_IOC_RESET)
			p->ev[i].count = 0;
		else
			p->ev[i].enabled = request == PERF_EVENT_IOC_ENABLE;
	}
	sim_perf_ctx_sched_in(p, c, t);
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
	sim_perf_ctx_sched_out(p, c, t);
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
	sim_perf_ctx_sched_in(p, c, t);
	return 0;
}

bool sim_perf_is_box_event(struct sim_perf *p, int fd)
{
	const struct pev *e = lookup(p, fd);

	return e && p->ctxs[e->ctx].box && p->ctxs[e->ctx].box != BOX_MSR;
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
	p->watchdog = watchdog && (m->flags & (SIM_F_INTEL | SIM_F_AMD_PMU));
	p->io = *io;
	p->io_ctx = ctx;
	p->next_rotate = SIM_FOREVER;
	p->n_cpus = sim_model_n_cpus(m);
	p->n_imc = sim_uncore_gen_find(m->family, m->model) && (m->flags & SIM_F_INTEL) ? m->n_imc : 0;
	p->n_pcu = sim_model_n_pcu(m);
	p->pcu0 = p->n_cpus + m->n_sockets;
	p->imc0 = p->pcu0 + (p->n_imc ? m->n_sockets * sim_model_n_dies(m) * p->n_pcu : 0);
	p->n_ctxs = p->imc0 + m->n_sockets * sim_model_n_dies(m) * p->n_imc;
	if (m->flags & SIM_F_AMD_PMU) {
		p->msr0 = p->n_ctxs;
		p->n_ctxs += p->n_cpus;
	}
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
		if (p->msr0 && i >= p->msr0) {
			c->box = BOX_MSR;
			c->cpu = i - p->msr0;
			continue;
		}
		if (i >= p->imc0) {
			c->box = BOX_IMC;
			c->socket = (i - p->imc0) / p->n_imc;
			c->index = (i - p->imc0) % p->n_imc;
		} else if (i >= p->pcu0) {
			c->box = BOX_PCU;
			c->socket = (i - p->pcu0) / p->n_pcu;
			c->index = (i - p->pcu0) % p->n_pcu;
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

