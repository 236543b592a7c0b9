/*
 * The perf engine: see engine_perf.h.  It turns engine events into
 * perf_group events through the PMUs' sysfs formats, keeps one or more
 * perf_groups per engine group (more only when the kernel refused the
 * whole as too large), and keeps the running totals across reopens.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_perf.h"
#include "err.h"
#include "hw.h"
#include "perf_group.h"
#include "perf_pmu.h"

#define CORE_PMU   "cpu"
#define UNCORE_PMU "uncore"
#define PCU_TYPE   "pcu"           /* uncore_pcu, uncore_pcu_N */
#define PCU_DISCOVERY_TYPE 4        /* uncore_type_4[_N] (hardware-linux.md §6) */
#define MAX_PCU    16
#define IMC_PREFIX "uncore_imc_"
#define IMC_DISCOVERY_PREFIX "uncore_type_6_"   /* the kernel's UNCORE_SPR_IMC, §6 */
#define MAX_IMC    64
#define REF_CYCLES_CODE  0x3c
#define REF_CYCLES_UMASK 0x01

struct engine_perf {
	struct engine_perf_config cfg;
	struct perf_pmu *core;          /* NULL when absent */
	struct perf_pmu *uncore;        /* NULL when absent */
	struct perf_pmu *pcu[MAX_PCU];  /* the PCU PMU's instances, by id; NULL: does not load */
	char pcu_why[MAX_PCU][PERF_PMU_WHY_MAX];   /* why pcu[i] is NULL */
	size_t n_pcu;
	struct perf_pmu *imc[MAX_IMC];  /* uncore_imc_N at N; NULL when absent */
	char core_reason[256];
	char uncore_reason[256];
	char pcu_reason[256];
	char imc_reason[256];
};

/* One perf group holding events[first .. first + n - 1]. */
struct part {
	struct perf_group *pg;
	size_t first, n;
};

struct engine_group {
	enum engine_pmu pmu;
	int target;
	int cpu;                        /* the CPU the groups are opened on */
	size_t n;
	struct perf_group_event *pev;
	struct perf_group_delta *deltas;
	struct engine_reading *r;
	struct part *parts;
	size_t n_parts;
	bool offline;                   /* closed because its CPU went offline */
	char refused[320];              /* the kernel's refusal to open it again (reopen) */
};

/* ---- PMUs ---- */

/*
 * Load the uncore PMU name; when the kernel has none, -ENODEV with a reason
 * that names what it is and why a host may lack it.
 */
static int load_named(const char *root, const char *name, const char *what, const char *why,
		      struct perf_pmu **ret_pmu, char *reason, size_t len)
{
	int r = perf_pmu_load(root, name, ret_pmu, reason, len);

	if (r == -ENOENT)
		set_err(reason, len, "this kernel has no %s PMU (%s%s/%s absent: %s, a virtual "
			"machine, or intel_uncore not loaded)", what, root, PERF_SYS_PMU_DIR, name, why);
	return r == -ENOENT ? -ENODEV : r;
}

static int load_uncore(const char *root, struct perf_pmu **ret_pmu, char *reason, size_t len)
{
	return load_named(root, UNCORE_PMU, "Nehalem/Westmere uncore", "another CPU model",
			  ret_pmu, reason, len);
}

/*
 * Every instance of the PCU PMU (perf_pmu_load_instances: uncore_pcu,
 * uncore_pcu_N, or uncore_type_4[_N]) into pcu[], one that does not load
 * (its sysfs files do not parse) NULL with the reason in why[], the others
 * counted all the same; the count, or -ENODEV with the reason when there
 * is none.
 */
static int load_pcu(const char *root, struct perf_pmu **pcu, char (*why)[PERF_PMU_WHY_MAX],
		    size_t *ret_n, char *reason, size_t len)
{
	int r = perf_pmu_load_instances(root, PCU_TYPE, PCU_DISCOVERY_TYPE, pcu, why, MAX_PCU,
					ret_n, reason, len);

	if (r == -ENOENT)
		set_err(reason, len, "this kernel has no PCU PMU (%s%s/uncore_pcu, uncore_pcu_N "
			"and uncore_type_%d_N absent: not a Xeon server uncore, a virtual machine, "
			"or intel_uncore not loaded)", root, PERF_SYS_PMU_DIR, PCU_DISCOVERY_TYPE);
	return r == -ENOENT ? -ENODEV : r < 0 ? r : (int)*ret_n;
}

static void free_pcu(struct perf_pmu **pcu, size_t n)
{
	for (size_t i = 0; i < n; i++)
		perf_pmu_free(pcu[i]);
}

/* prefix N (uncore_imc_N, uncore_type_6_N): N, or -1 for another name. */
static int imc_index(const char *name, const char *prefix)
{
	char *end;
	long n;

	if (strncmp(name, prefix, strlen(prefix)) != 0)
		return -1;
	name += strlen(prefix);
	n = strtol(name, &end, 10);
	return end == name || *end || n < 0 || n >= MAX_IMC ? -1 : (int)n;
}

/*
 * Every uncore_imc_N under root into imc[N] (hardware-linux.md §4.1), or
 * where there is none every uncore_type_6_N (Sapphire Rapids on, a kernel
 * with the discovery table but without the platform's, §6); the count
 * found, or -ENODEV with the reason when there is none.  Only those
 * directories are read: another PMU that does not parse is not our concern.
 */
static int load_imc(const char *root, struct perf_pmu **imc, char *reason, size_t len)
{
	static const char *const prefix[] = { IMC_PREFIX, IMC_DISCOVERY_PREFIX };
	char dir[4096];
	struct dirent *de;
	int r = 0, n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s%s", root, PERF_SYS_PMU_DIR);
	d = opendir(dir);
	for (size_t p = 0; d && p < sizeof(prefix) / sizeof(prefix[0]) && n == 0; p++) {
		rewinddir(d);
		while (r == 0 && (de = readdir(d))) {
			int k = imc_index(de->d_name, prefix[p]);

			if (k < 0 || imc[k])
				continue;
			r = perf_pmu_load(root, de->d_name, &imc[k], reason, len);
			n += r == 0;
		}
	}
	if (d)
		closedir(d);
	if ((r == 0 || r == -ENOENT) && n == 0) {
		set_err(reason, len, "this kernel has no memory controller PMU (%s%s/%s0 absent: "
			"not a Xeon server uncore, a virtual machine, the BIOS hides the iMC PMON "
			"devices, or intel_uncore not loaded)", root, PERF_SYS_PMU_DIR, IMC_PREFIX);
		return -ENODEV;
	}
	return r < 0 ? r : n;
}

/*
 * Open one event of p, as a collector would, and close it again: whether
 * the kernel lets this process count there at all (perf_event_paranoid,
 * capabilities, a seccomp filter or a security module), which sysfs does
 * not say.  0 when it may (or the trial failed for another reason, left
 * to the collector's own open to report); -EACCES or -EPERM with the
 * reason when the kernel refuses this process.
 */
static int trial_open(struct perf_sys *ps, const struct perf_pmu *p, bool core, char *reason,
		      size_t len)
{
	struct perf_group_event ev = { .name = core ? "instructions" : "clockticks",
				       .type = p->type };
	const char *terms = core ? "event=0xc0" : "event=0x00";
	char err[256], level[PERF_SYS_PARANOID_TEXT_MAX];
	struct perf_group *pg;
	int r;

	if (!core && perf_pmu_find_alias(p, "clockticks"))
		r = perf_pmu_alias_config(p, "clockticks", &ev.cfg, err, sizeof(err));
	else
		r = perf_pmu_encode(p, terms, &ev.cfg, err, sizeof(err));
	if (r < 0)
		return 0;
	/* An offline CPU says ENODEV: the core PMU is tried on the next one. */
	r = -ENODEV;
	for (int cpu = 0; r == -ENODEV && cpu < (core ? 64 : 1); cpu++)
		r = perf_group_open(ps, p->has_cpumask && p->n_cpus ? p->cpus[0] : cpu, &ev, 1,
				    &pg, err, sizeof(err));
	if (r == 0)
		perf_group_close(pg);
	if (r != -EACCES && r != -EPERM)
		return 0;
	if (r == -EACCES && perf_sys_paranoid_text(ps, level, sizeof(level)))
		set_err(reason, len, "the kernel refuses perf_event_open: perf_event_paranoid is "
			"%s, and this process lacks CAP_SYS_ADMIN (set kernel.perf_event_paranoid=2, "
			"or grant it)", level);
	else
		set_err(reason, len, "the kernel refuses perf_event_open to this process (%.150s)",
			err);
	return r;
}

int engine_perf_probe(struct perf_sys *ps, enum engine_pmu pmu, char *reason, size_t reasonlen)
{
	struct perf_pmu *p = NULL;
	const char *root = perf_sys_root(ps);
	int r;

	if (pmu == ENGINE_PMU_PCU) {
		struct perf_pmu *pcu[MAX_PCU];
		char why[MAX_PCU][PERF_PMU_WHY_MAX];
		size_t n = 0, i = 0;

		r = load_pcu(root, pcu, why, &n, reason, reasonlen);
		/* The first instance that loads: the others are each the collector's to open. */
		while (r > 0 && i < n && !pcu[i])
			i++;
		if (r > 0 && i < n) {
			r = trial_open(ps, pcu[i], false, reason, reasonlen);
		} else if (r > 0) {
			set_err(reason, reasonlen, "no instance of the kernel's PCU PMU can be read: "
				"%s", why[0]);
			r = -EINVAL;
		}
		free_pcu(pcu, n);
	} else if (pmu == ENGINE_PMU_IMC) {
		struct perf_pmu *imc[MAX_IMC] = { 0 };

		r = load_imc(root, imc, reason, reasonlen);
		for (int i = 0; r > 0 && i < MAX_IMC; i++)
			if (imc[i]) {
				r = trial_open(ps, imc[i], false, reason, reasonlen);
				break;
			}
		for (int i = 0; i < MAX_IMC; i++)
			perf_pmu_free(imc[i]);
	} else if (pmu == ENGINE_PMU_NHM_UNCORE) {
		r = load_uncore(root, &p, reason, reasonlen);
		if (r == 0)
			r = trial_open(ps, p, false, reason, reasonlen);
	} else {
		r = perf_pmu_probe_core(root, &p, reason, reasonlen);
		if (r == PERF_PMU_CORE_ABSENT)
			r = -ENODEV;
		else if (r == PERF_PMU_CORE_PRESENT)
			r = trial_open(ps, p, true, reason, reasonlen);
	}
	perf_pmu_free(p);
	return r < 0 ? r : 0;
}

/* ---- events ---- */

/*
 * A server box's event: event select, umask where given (the SNB-EP PCU
 * has no umask field), edge, inv, and cmask as the box's threshold.
 */
static int build_box_event(const struct perf_pmu *pmu, const struct engine_event *e,
			   struct perf_group_event *ret, char *err, size_t errlen)
{
	char terms[128];
	size_t len;

	ret->name = e->name;
	ret->type = pmu->type;
	if (e->occ_reset) {
		set_err(err, errlen, "event '%s': OCC_CTR_RST has no %s format", e->name,
			pmu->name);
		return -EOPNOTSUPP;
	}
	len = (size_t)snprintf(terms, sizeof(terms), "event=0x%02x", e->code);
	if (e->umask)
		len += (size_t)snprintf(terms + len, sizeof(terms) - len, ",umask=0x%02x", e->umask);
	if (e->cmask)
		len += (size_t)snprintf(terms + len, sizeof(terms) - len, ",thresh=0x%02x", e->cmask);
	snprintf(terms + len, sizeof(terms) - len, "%s%s", e->edge ? ",edge" : "",
		 e->inv ? ",inv" : "");
	return perf_pmu_encode(pmu, terms, &ret->cfg, err, errlen);
}

/* The perf event of e on pmu, built through the PMU's formats and aliases. */
static int build_event(const struct perf_pmu *pmu, bool uncore, const struct engine_event *e,
		       struct perf_group_event *ret, char *err, size_t errlen)
{
	char terms[128];
	const char *alias = NULL;
	int len;

	ret->name = e->name;
	ret->type = pmu->type;
	if (uncore && e->occ_reset) {
		set_err(err, errlen, "event '%s': needs OCC_CTR_RST, for which the %s PMU has no "
			"format; count it with the msr engine", e->name, pmu->name);
		return -EOPNOTSUPP;
	}
	if (uncore && e->code == ENGINE_UNCORE_CLOCK && e->umask == 0 && !e->edge && !e->inv &&
	    !e->cmask)
		alias = "clockticks";
	else if (!uncore && e->code == REF_CYCLES_CODE && e->umask == REF_CYCLES_UMASK &&
		 !e->edge && !e->inv && !e->cmask && !e->gp_only)
		alias = "ref-cycles";   /* the pseudo encoding only fixed counter 2 counts */
	if (alias && perf_pmu_find_alias(pmu, alias))
		return perf_pmu_alias_config(pmu, alias, &ret->cfg, err, errlen);
	len = snprintf(terms, sizeof(terms), "event=0x%02x,umask=0x%02x%s%s", e->code, e->umask,
		       e->edge ? ",edge" : "", e->inv ? ",inv" : "");
	if (e->cmask)
		snprintf(terms + len, sizeof(terms) - (size_t)len, ",cmask=0x%02x", e->cmask);
	return perf_pmu_encode(pmu, terms, &ret->cfg, err, errlen);
}

/* ---- groups ---- */

static void close_parts(struct engine_group *g)
{
	for (size_t i = 0; i < g->n_parts; i++)
		perf_group_close(g->parts[i].pg);
	g->n_parts = 0;
}

/*
 * Open events [first, first + n) as one group, or, when the kernel says
 * the group cannot fit (EINVAL for more than one event), as two halves.
 */
static int open_parts(struct engine_perf *ep, struct engine_group *g, size_t first, size_t n,
		      char *err, size_t errlen)
{
	struct perf_group *pg;
	int r;

	r = perf_group_open(ep->cfg.ps, g->cpu, g->pev + first, n, &pg, err, errlen);
	if (r == -EINVAL && n > 1) {
		size_t half = n / 2;

		r = open_parts(ep, g, first, half, err, errlen);
		return r < 0 ? r : open_parts(ep, g, first + half, n - half, err, errlen);
	}
	if (r < 0)
		return r;
	r = perf_group_enable(pg);
	if (r < 0) {
		set_err(err, errlen, "cpu %d: enable group of '%s': %s", g->cpu, pg->members[0].name,
			strerror(-r));
		perf_group_close(pg);
		return r;
	}
	g->parts[g->n_parts++] = (struct part){ .pg = pg, .first = first, .n = n };
	return 0;
}

static int open_all(struct engine_perf *ep, struct engine_group *g, char *err, size_t errlen)
{
	int r = open_parts(ep, g, 0, g->n, err, errlen);

	if (r < 0)
		close_parts(g);
	return r;
}

/* The CPU of an uncore PMU's cpumask in target's package; target when unknown. */
static int uncore_cpu(const struct engine_perf *ep, const struct perf_pmu *pmu, int target)
{
	int socket;

	if (!ep->cfg.cpu_socket || !pmu->has_cpumask)
		return target;
	socket = ep->cfg.cpu_socket(ep->cfg.arg, target);
	for (size_t i = 0; socket >= 0 && i < pmu->n_cpus; i++)
		if (ep->cfg.cpu_socket(ep->cfg.arg, pmu->cpus[i]) == socket)
			return pmu->cpus[i];
	return target;
}

/* The PMU of pmu/target, or NULL with the reason in err. */
static const struct perf_pmu *pmu_of(const struct engine_perf *ep, enum engine_pmu pmu,
				     int target, char *err, size_t errlen)
{
	int box = ENGINE_TARGET_BOX(target);

	switch (pmu) {
	case ENGINE_PMU_CORE:
		if (!ep->core)
			set_err(err, errlen, "%s", ep->core_reason);
		return ep->core;
	case ENGINE_PMU_NHM_UNCORE:
		if (!ep->uncore)
			set_err(err, errlen, "%s", ep->uncore_reason);
		return ep->uncore;
	case ENGINE_PMU_PCU:
		if ((size_t)box < ep->n_pcu && !ep->pcu[box])
			set_err(err, errlen, "%s", ep->pcu_why[box]);
		if ((size_t)box < ep->n_pcu)
			return ep->pcu[box];
		if (ep->n_pcu == 0)
			set_err(err, errlen, "%s", ep->pcu_reason);
		else
			set_err(err, errlen, "this kernel has %zu PCU PMUs, no instance %d", ep->n_pcu,
				box);
		return NULL;
	case ENGINE_PMU_IMC:
		if (box < MAX_IMC && ep->imc[box])
			return ep->imc[box];
		if (ep->imc_reason[0])
			set_err(err, errlen, "%s", ep->imc_reason);
		else
			set_err(err, errlen, "this kernel has no %s%d PMU (no such memory channel)",
				IMC_PREFIX, box);
		return NULL;
	}
	return NULL;
}

static void free_group(struct engine_group *g)
{
	close_parts(g);
	free(g->pev);
	free(g->deltas);
	free(g->r);
	free(g->parts);
	free(g);
}

static int is_offline(const struct engine_perf *ep, int cpu);

static int perf_open(void *ctx, enum engine_pmu pmu, int target, const struct engine_event *events,
		     size_t n, struct engine_group **ret_group, char *err, size_t errlen)
{
	struct engine_perf *ep = ctx;
	bool uncore = pmu == ENGINE_PMU_NHM_UNCORE;
	bool box = pmu == ENGINE_PMU_PCU || pmu == ENGINE_PMU_IMC;
	const struct perf_pmu *p = pmu_of(ep, pmu, target, err, errlen);
	char level[PERF_SYS_PARANOID_TEXT_MAX];
	struct engine_group *g;
	int r;

	if (!p)
		return -ENODEV;
	if (box)
		target = ENGINE_TARGET_CPU(target);
	if (n == 0) {
		set_err(err, errlen, "cpu %d: a group needs at least one event", target);
		return -EINVAL;
	}
	g = calloc(1, sizeof(*g));
	if (!g || !(g->pev = calloc(n, sizeof(*g->pev))) ||
	    !(g->deltas = calloc(n, sizeof(*g->deltas))) || !(g->r = calloc(n, sizeof(*g->r))) ||
	    !(g->parts = calloc(n, sizeof(*g->parts)))) {
		if (g)
			free_group(g);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	g->pmu = pmu;
	g->target = target;
	g->n = n;
	g->cpu = uncore || box ? uncore_cpu(ep, p, target) : target;
	for (size_t i = 0; i < n; i++) {
		r = box ? build_box_event(p, &events[i], &g->pev[i], err, errlen) :
			  build_event(p, uncore, &events[i], &g->pev[i], err, errlen);
		if (r < 0) {
			free_group(g);
			return r;
		}
	}
	r = open_all(ep, g, err, errlen);
	/* The kernel says ENODEV for an offline CPU; the engines say -ENXIO (engine.h). */
	if ((r == -ENODEV || r == -ENXIO) && !box && !uncore && is_offline(ep, target)) {
		set_err(err, errlen, "cpu %d is offline", target);
		r = -ENXIO;
	}
	/*
	 * Above paranoid 2 only CAP_SYS_ADMIN opens (hardware-linux.md §6): the
	 * trial open at start let this process count, so it has dropped it
	 * since (a CPU offline at start, a reload).
	 */
	if (r == -EACCES && perf_sys_paranoid_text(ep->cfg.ps, level, sizeof(level)))
		set_err(err, errlen, "the kernel refuses its events at perf_event_paranoid %s "
			"without CAP_SYS_ADMIN (set it to 2, or restart uncored)", level);
	if (r < 0) {
		free_group(g);
		return r;
	}
	*ret_group = g;
	return 0;
}

/* Whether cpu is offline: 1 yes, 0 no or unknown. */
static int is_offline(const struct engine_perf *ep, int cpu)
{
	return ep->cfg.cpu_online && ep->cfg.cpu_online(ep->cfg.arg, cpu) == 0;
}

static void mark(struct engine_group *g, size_t first, size_t n, enum engine_state state,
		 const char *reason, int err)
{
	for (size_t i = first; i < first + n; i++) {
		struct engine_reading *r = &g->r[i];

		r->delta = r->raw_delta = r->enabled_ns = r->running_ns = 0;
		r->state = state;
		r->reason = reason;
		r->err = err;
		r->fault = err ? ENGINE_FAULT_READ : ENGINE_FAULT_NONE;   /* every failure is a read's */
	}
}

/* The group's CPU went offline: its events are gone; reopen once it is back. */
static int go_offline(struct engine_group *g)
{
	close_parts(g);
	g->offline = true;
	mark(g, 0, g->n, ENGINE_FAILED, "the CPU is offline", 0);   /* the whole reason */
	return -ENXIO;
}

/*
 * Open again a group whose events are gone (go_offline, or detached by
 * the kernel): -ENXIO while its CPU is offline.  The CPU back, the kernel
 * may still refuse: perf_event_paranoid above 2 after the drop of
 * CAP_SYS_ADMIN (hardware-linux.md §6), a seccomp filter, a file limit.
 * Then the group stays closed, tried again at each read, and each reading
 * says why, not that the CPU is offline.  0 once open.
 */
static int reopen(struct engine_perf *ep, struct engine_group *g)
{
	char err[256], level[PERF_SYS_PARANOID_TEXT_MAX];
	int r;

	close_parts(g);
	if (is_offline(ep, g->cpu))
		return go_offline(g);
	r = open_all(ep, g, err, sizeof(err));
	if (r == -ENODEV || r == -ENXIO)
		return go_offline(g);   /* offline again meanwhile */
	if (r < 0) {
		g->offline = true;
		if (r == -EACCES && perf_sys_paranoid_text(ep->cfg.ps, level, sizeof(level)))
			snprintf(g->refused, sizeof(g->refused), "back online, but the kernel refuses "
				 "its events at perf_event_paranoid %s without CAP_SYS_ADMIN (set it "
				 "to 2, or restart uncored)", level);
		else
			snprintf(g->refused, sizeof(g->refused), "back online, but the kernel refused "
				 "its events: %s", err);
		mark(g, 0, g->n, ENGINE_FAILED, g->refused, 0);
		return r;
	}
	g->offline = false;
	return 0;
}

static void account(struct engine_group *g, const struct part *pt)
{
	for (size_t i = pt->first; i < pt->first + pt->n; i++) {
		const struct perf_group_delta *d = &g->deltas[i];
		struct engine_reading *r = &g->r[i];

		r->raw_delta = d->value;
		r->delta = d->ran ? d->scaled : 0;
		r->total += r->delta;
		r->enabled_ns = d->enabled_ns;
		r->running_ns = d->running_ns;
		r->err = 0;
		r->fault = ENGINE_FAULT_NONE;
		/*
		 * Read in the instant it was opened and enabled (on the
		 * simulator's stepped clock, a CPU back online): counting,
		 * with nothing yet, not a group that is not enabled.
		 */
		if (d->ran || (!d->enabled_ns && pt->pg->n_reads <= 1)) {
			r->state = ENGINE_COUNTING;
			r->reason = NULL;
		} else {
			r->state = ENGINE_WAITING;
			r->reason = d->enabled_ns ? "multiplexed out for the whole interval: the PMU "
				    "has more events than counters" : "the group was not enabled";
		}
	}
}

/*
 * The kernel detached the core group: its CPU went offline and came back
 * between two reads (hardware-linux.md §6: the members became singletons,
 * and the leader's read answers nr = 1 or times that no longer grow).
 * Reopen it now; the interval is lost (waiting, counted as a reset), and
 * totals carry on from the next read.
 */
static int reopen_detached(struct engine_perf *ep, struct engine_group *g)
{
	int r = reopen(ep, g);

	if (r < 0)
		return r;
	for (size_t i = 0; i < g->n; i++)
		g->r[i].resets++;
	mark(g, 0, g->n, ENGINE_WAITING, "the CPU went offline and back since the last read: the "
	     "kernel detached the group, which was reopened; this interval is lost", 0);
	return 0;
}

/* A core group whose answer says the kernel detached it (short, nr-mismatched, or frozen). */
static bool is_detached(const struct engine_group *g, const struct part *pt, int read_err)
{
	if (g->pmu != ENGINE_PMU_CORE)
		return false;   /* uncore events migrate to another CPU of the die instead */
	return read_err == -EIO || (!read_err && pt->pg->n_reads > 1 &&
				    g->deltas[pt->first].enabled_ns == 0);
}

static int perf_read(void *ctx, struct engine_group *g, struct engine_reading *readings)
{
	struct engine_perf *ep = ctx;
	int r = 0;

	if (g->offline && (r = reopen(ep, g)) < 0)
		goto out;
	for (size_t k = 0; k < g->n_parts; k++) {
		struct part *pt = &g->parts[k];
		int e = perf_group_read(pt->pg, g->deltas + pt->first);
		bool detached;

		if (e == -ENODATA) {
			perf_group_enable(pt->pg);
			mark(g, pt->first, pt->n, ENGINE_FAILED, "the kernel put the group in error "
			     "state (read returned end of file); it was enabled again", e);
			continue;
		}
		detached = is_detached(g, pt, e);
		if (g->pmu == ENGINE_PMU_CORE &&
		    (e == -ENODEV || (detached && is_offline(ep, g->cpu)))) {
			r = go_offline(g);
			goto out;
		}
		if (detached) {
			r = reopen_detached(ep, g);
			goto out;
		}
		if (e < 0) {
			mark(g, pt->first, pt->n, ENGINE_FAILED, "the group could not be read", e);
			continue;
		}
		account(g, pt);
	}
out:
	memcpy(readings, g->r, g->n * sizeof(*readings));
	return r;
}

static int perf_close(void *ctx, struct engine_group *g, unsigned *ret_failed)
{
	(void)ctx;
	free_group(g);
	if (ret_failed)
		*ret_failed = 0;
	return 0;
}

static void perf_destroy(void *ctx)
{
	struct engine_perf *ep = ctx;

	perf_pmu_free(ep->core);
	perf_pmu_free(ep->uncore);
	free_pcu(ep->pcu, ep->n_pcu);
	for (int i = 0; i < MAX_IMC; i++)
		perf_pmu_free(ep->imc[i]);
	if (ep->cfg.free_arg)
		ep->cfg.free_arg(ep->cfg.arg);
	free(ep);
}

/* The instances of the PCU and iMC PMUs (the others have one per package or CPU). */
static int perf_n_boxes(void *ctx, enum engine_pmu pmu)
{
	const struct engine_perf *ep = ctx;
	int n = 0;

	if (pmu == ENGINE_PMU_PCU)
		return (int)ep->n_pcu;
	if (pmu != ENGINE_PMU_IMC)
		return 1;
	for (int i = 0; i < MAX_IMC; i++)
		n = ep->imc[i] ? i + 1 : n;
	return n;
}

/* The kernel's errors: every failure of this engine is a group read's (mark). */
static const char *perf_hint(void *ctx, int err, enum engine_fault fault)
{
	(void)ctx;
	(void)fault;
	return perf_group_hint(err, PERF_GROUP_OP_READ);
}

static const struct engine_ops engine_perf_ops = {
	.kind = ENGINE_PERF,
	.open = perf_open,
	.read = perf_read,
	.close = perf_close,
	.destroy = perf_destroy,
	.hint = perf_hint,
	.n_boxes = perf_n_boxes,
};

int engine_perf_new(const struct engine_perf_config *config, struct engine *ret_engine, char *err,
		    size_t errlen)
{
	struct engine_perf *ep = calloc(1, sizeof(*ep));
	const char *root;
	int r;

	if (!ep) {
		if (config->free_arg)
			config->free_arg(config->arg);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ep->cfg = *config;
	root = perf_sys_root(config->ps);
	r = perf_pmu_probe_core(root, &ep->core, ep->core_reason, sizeof(ep->core_reason));
	if (r < 0) {
		set_err(err, errlen, "%s", ep->core_reason);
		perf_destroy(ep);
		return r;
	}
	r = load_uncore(root, &ep->uncore, ep->uncore_reason, sizeof(ep->uncore_reason));
	if (r < 0 && r != -ENODEV) {
		set_err(err, errlen, "%s", ep->uncore_reason);
		perf_destroy(ep);
		return r;
	}
	r = load_pcu(root, ep->pcu, ep->pcu_why, &ep->n_pcu, ep->pcu_reason, sizeof(ep->pcu_reason));
	if (r < 0 && r != -ENODEV) {
		set_err(err, errlen, "%s", ep->pcu_reason);
		perf_destroy(ep);
		return r;
	}
	r = load_imc(root, ep->imc, ep->imc_reason, sizeof(ep->imc_reason));
	if (r < 0 && r != -ENODEV) {
		set_err(err, errlen, "%s", ep->imc_reason);
		perf_destroy(ep);
		return r;
	}
	if (r > 0)
		ep->imc_reason[0] = '\0';
	ret_engine->ops = &engine_perf_ops;
	ret_engine->ctx = ep;
	return 0;
}
