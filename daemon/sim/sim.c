/*
 * The simulated machine behind struct hw: a register file per socket, per
 * physical core and per logical CPU, with the PMU, thermal and RAPL
 * semantics of hardware.md, driven by a scenario's timelines.  A counter is
 * stored as (value, time of last change); a read integrates the event rate
 * since then, so counts are exact and never go backwards while counting,
 * and any write re-bases every counter of the PMU it touches.  The
 * kernel's writes (boot state, perf users) come from sim_kernel.c at their
 * times, through the same register table.  It knows nothing about
 * collectors; hw.c forwards to the ops table below.
 * This file keeps its lifetime, time and agents and the hw_ops; the
 * register models, the building and the probe are files of their own
 * (sim_machine.h lists them).
 *
 * The simulator's choices where hardware.md says UNCONFIRMED or is silent:
 * reading 0x393 fails with EIO; the uncore and core overflow status
 * registers read 0 (overflow is not modelled) and writes to them are
 * ignored (OVF_CTRL, STATUS_SET) or fail with EIO (read-only STATUS);
 * CMASK and INV are ignored, EDGE is honoured on uncore events only;
 * MSR_IA32_PERF_CAPABILITIES reads FW_WRITE (bit 13) alone where the model has
 * it, 0 elsewhere;
 * several CORE_n umask bits count the OR of the conditions; 0x80 counts
 * while a core is at/above TjMax, 0x81 while it is throttled (hot, or
 * forced by the scenario), 0x83 while its socket's PROCHOT is asserted;
 * Nehalem generates no thermal uncore events; counter writes keep the low
 * width bits, except plain IA32_PMCx writes, which sign-extend bit 31; writes to read-only registers fail with
 * EIO; INUSE (0x392, v4) bit n = PERFEVTSELn EN, bit 32+i = nonzero fixed
 * nibble i; the package thermal status bit 0 is the OR of its cores'.
 * A CPU taken offline with sim_set_online() keeps generating events;
 * scenario offline windows make its load idle.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "sim_machine.h"

/* ---- time and agents ---- */

int64_t sim_now_ns(const struct sim *s)
{
	struct timespec ts;

	if (s->clock == SIM_CLOCK_STEPPED)
		return s->stepped_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec - s->opened.tv_sec) * SIM_NS_PER_S + (ts.tv_nsec - s->opened.tv_nsec);
}

/* Apply a preset or rewrite rule at time t to every CPU it names. */
static int apply_rule_write(struct sim *s, const struct sim_rule *rule, int64_t t)
{
	int r = 0;

	for (int cpu = 0; cpu < s->n_cpus; cpu++) {
		const struct hw_cpu *topo = &s->cpus[cpu].topo;
		bool hit = rule->cpu != SIM_UNSET ?
			   (rule->cpu == SIM_ALL || rule->cpu == cpu) :
			   (rule->socket == SIM_ALL || rule->socket == topo->socket);

		if (hit && (r = sim_raw_write(s, cpu, rule->msr, rule->value, t)) < 0)
			return r;
	}
	return r;
}

/* The kernel's writes (sim_kernel.h) land as another agent's would. */
static int kernel_write(void *ctx, int cpu, uint32_t msr, uint64_t value, int64_t t)
{
	return sim_raw_write(ctx, cpu, msr, value, t);
}

/* Run every scenario rewrite and agent change due by now, in time order; returns now. */
int64_t sim_sync_time(struct sim *s)
{
	int64_t now = sim_now_ns(s);

	for (;;) {
		int64_t t_kernel = sim_kernel_next(s->kernel);
		int64_t t_perf = sim_perf_next(s->perf);
		int64_t t_rw = s->rw_idx < s->n_rewrites ?
			       s->rw_period + s->rewrites[s->rw_idx]->at_ns : SIM_FOREVER;

		if (t_perf < t_kernel && t_perf < t_rw && t_perf <= now) {
			sim_perf_step(s->perf);
		} else if (t_rw <= t_kernel && t_rw <= now) {
			apply_rule_write(s, s->rewrites[s->rw_idx], t_rw);
			if (++s->rw_idx == s->n_rewrites && s->scn->period_ns) {
				s->rw_idx = 0;
				s->rw_period += s->scn->period_ns;
			}
		} else if (t_kernel <= now && sim_kernel_next_is_core_event(s->kernel)) {
			/* Adding or removing an event re-schedules the CPU's PMU. */
			sim_perf_core_sched_out(s->perf, t_kernel);
			sim_kernel_step(s->kernel);
			sim_perf_core_sched_in(s->perf, t_kernel);
		} else if (t_kernel <= now) {
			sim_kernel_step(s->kernel);
		} else {
			return now;
		}
	}
}

bool sim_cpu_is_online(const struct sim *s, int cpu, int64_t t)
{
	const struct sim_cpu *c = &s->cpus[cpu];

	return !c->manual_offline && !sim_timeline_value_at(&c->offline, t);
}

/* ---- hw_ops ---- */

static int check_cpu(struct sim *s, int cpu, int64_t t)
{
	if (cpu < 0 || cpu >= s->n_cpus || !sim_cpu_is_online(s, cpu, t))
		return -ENXIO;
	return 0;
}

static int op_read_msr(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value)
{
	struct sim *s = ctx;
	uint64_t v;
	int64_t t;
	int r;

	pthread_mutex_lock(&s->lock);
	t = sim_sync_time(s);
	r = check_cpu(s, cpu, t);
	if (r == 0 && s->fail_read.err && s->fail_read.cpu == cpu && s->fail_read.msr == msr)
		r = s->fail_read.err;
	if (r == 0)
		r = sim_raw_read(s, cpu, msr, &v, t);
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		*ret_value = v;
	return r;
}

static int op_write_msr(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	struct sim *s = ctx;
	int64_t t;
	int r;

	pthread_mutex_lock(&s->lock);
	t = sim_sync_time(s);
	r = check_cpu(s, cpu, t);
	if (r == 0 && s->refuse_writes)
		r = -EPERM;
	if (r == 0)
		r = sim_raw_write(s, cpu, msr, value, t);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int op_cpuid(void *ctx, int cpu, uint32_t leaf, uint32_t subleaf, struct hw_cpuid *ret_regs)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = check_cpu(s, cpu, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		sim_model_cpuid(s->model, cpu, leaf, subleaf, ret_regs);
	return r;
}

static int op_enumerate(void *ctx, struct hw_cpu *cpus, int max, int *ret_n)
{
	struct sim *s = ctx;
	int64_t t;

	pthread_mutex_lock(&s->lock);
	t = sim_sync_time(s);
	for (int cpu = 0; cpu < s->n_cpus && cpu < max; cpu++) {
		cpus[cpu] = s->cpus[cpu].topo;
		cpus[cpu].online = sim_cpu_is_online(s, cpu, t);
	}
	pthread_mutex_unlock(&s->lock);
	*ret_n = s->n_cpus;
	return 0;
}

static int op_cpu_online(void *ctx, int cpu)
{
	struct sim *s = ctx;
	int r;

	if (cpu < 0 || cpu >= s->n_cpus)
		return -ENOENT;
	pthread_mutex_lock(&s->lock);
	r = sim_cpu_is_online(s, cpu, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Kernel thermal_throttle counts, hardware.md §3.5: rising edges of status bit 0. */
static int cpu_attr(struct sim *s, int cpu, const char *relpath, int64_t t, uint64_t *ret_value)
{
	struct loc l;

	if (!(s->model->flags & SIM_F_INTEL) || !s->scn->kernel_thermal_throttle ||
	    check_cpu(s, cpu, t) < 0)
		return -ENOENT;
	l = sim_loc_of(s, cpu);
	if (strcmp(relpath, "thermal_throttle/core_throttle_count") == 0) {
		*ret_value = sim_timeline_rises(&l.core->throttled, t + 1);
		return 0;
	}
	if ((s->model->flags & SIM_F_PTM) &&
	    strcmp(relpath, "thermal_throttle/package_throttle_count") == 0) {
		*ret_value = sim_timeline_rises(&l.socket->pkg_thermal, t + 1);
		return 0;
	}
	return -ENOENT;
}

static int op_read_cpu_attr(void *ctx, int cpu, const char *relpath, uint64_t *ret_value)
{
	struct sim *s = ctx;
	uint64_t v;
	int r;

	pthread_mutex_lock(&s->lock);
	r = cpu_attr(s, cpu, relpath, sim_sync_time(s), &v);
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		*ret_value = v;
	return r;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/*
 * Remove the tree sim_attach_perf wrote.  Best effort: a process that
 * dropped root after writing it may no longer be allowed to.
 */
void sim_remove_pmu_root(struct sim *s)
{
	if (!s->pmu_root)
		return;
	nftw(s->pmu_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(s->pmu_root);
	s->pmu_root = NULL;
}

static void sim_free(struct sim *s);

static void op_close(void *ctx)
{
	sim_free(ctx);
}

static int64_t op_now_ns(void *ctx)
{
	struct sim *s = ctx;
	int64_t t;

	pthread_mutex_lock(&s->lock);
	t = sim_now_ns(s);
	pthread_mutex_unlock(&s->lock);
	return t;
}

static int op_read_hwmon(void *ctx, const char *relpath, char *buf, size_t len)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_hwmon_read(s, relpath, sim_sync_time(s), buf, len);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int op_hsmp(void *ctx, struct hw_hsmp_msg *msg)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_hsmp_send(s, msg, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

/*
 * The simulated kernel's /sys/devices/system/cpu/online: its online CPUs
 * now, as ranges ("0-5,7-15"), the way the kernel prints a cpumask list.
 */
static int op_read_online_list(void *ctx, char *buf, size_t len)
{
	struct sim *s = ctx;
	size_t at = 0;
	int64_t t;
	int r = 0;

	buf[0] = '\0';
	pthread_mutex_lock(&s->lock);
	t = sim_sync_time(s);
	for (int lo = 0; lo < s->n_cpus && r == 0; lo++) {
		int hi = lo, n;

		if (!sim_cpu_is_online(s, lo, t))
			continue;
		while (hi + 1 < s->n_cpus && sim_cpu_is_online(s, hi + 1, t))
			hi++;
		n = hi > lo ? snprintf(buf + at, len - at, "%s%d-%d", at ? "," : "", lo, hi) :
			      snprintf(buf + at, len - at, "%s%d", at ? "," : "", lo);
		if (n < 0 || (size_t)n >= len - at)
			r = -EINVAL;
		else
			at += (size_t)n;
		lo = hi;
	}
	pthread_mutex_unlock(&s->lock);
	if (r == 0 && at + 1 < len) {
		buf[at++] = '\n';
		buf[at] = '\0';
	}
	return r;
}

static const struct hw_ops sim_hw_ops = {
	.name = "sim",
	.read_msr = op_read_msr,
	.write_msr = op_write_msr,
	.cpuid = op_cpuid,
	.enumerate = op_enumerate,
	.cpu_online = op_cpu_online,
	.read_cpu_attr = op_read_cpu_attr,
	.read_online_list = op_read_online_list,
	.close = op_close,
	.now_ns = op_now_ns,
	.read_hwmon = op_read_hwmon,
	.hsmp = op_hsmp,
};

void sim_bind(struct sim *sim, struct hw *ret_hw)
{
	*ret_hw = (struct hw){ .ops = &sim_hw_ops, .ctx = sim };
}

static int cmp_rewrite(const void *a, const void *b)
{
	const struct sim_rule *ra = *(const struct sim_rule *const *)a;
	const struct sim_rule *rb = *(const struct sim_rule *const *)b;

	if (ra->at_ns != rb->at_ns)
		return ra->at_ns < rb->at_ns ? -1 : 1;
	return ra < rb ? -1 : ra > rb;
}

static int perf_read(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value, int64_t t)
{
	return sim_raw_read(ctx, cpu, msr, ret_value, t);
}

static bool perf_online(void *ctx, int cpu, int64_t t)
{
	return sim_cpu_is_online(ctx, cpu, t);
}

static uint64_t perf_offline_edges(void *ctx, int cpu, int64_t t)
{
	const struct sim *s = ctx;

	return sim_timeline_rises(&s->cpus[cpu].offline, t + 1);
}

static const struct sim_pcu_addr *perf_pcu_addr(void *ctx)
{
	const struct sim *s = ctx;
	const struct sim_uncore_gen *gen = s->boxes ? sim_boxes_uncore(s->boxes) : NULL;

	return gen ? gen->pcu : NULL;
}

static int perf_box_count(void *ctx, bool imc, int socket, int index, uint64_t config, int64_t t,
			  uint64_t *ret)
{
	struct sim *s = ctx;

	return sim_boxes_count(s->boxes, imc ? SIM_BOX_IMC : SIM_BOX_PCU, socket, index, config, t,
			       ret);
}

/* The kernel's perf reaches the registers as the kernel does: without the msr driver's checks. */
static const struct sim_perf_io perf_io = {
	.read = perf_read,
	.write = kernel_write,
	.online = perf_online,
	.offline_edges = perf_offline_edges,
	.box_count = perf_box_count,
	.pcu_addr = perf_pcu_addr,
};

/*
 * The kernel's uncore driver initialises each PCU box: BOX_CTL =
 * SNBEP_PMON_BOX_CTL_INT (reset controls and counters, FRZ_EN) on Sandy
 * Bridge-EP (snbep_uncore_msr_init_box), IVBEP_PMON_BOX_CTL_INT (the two
 * resets) from Ivy Bridge-EP on (ivbep_uncore_msr_init_box, which SKX and
 * ICX use).  The resets read back 0.
 */
static void boot_boxes(struct sim *s)
{
	const struct sim_uncore_gen *gen = s->boxes ? sim_boxes_uncore(s->boxes) : NULL;
	uint64_t v = SNBEP_PMON_BOX_CTL_RST_CTRL | SNBEP_PMON_BOX_CTL_RST_CTRS;

	if (!gen || !gen->pcu)
		return;
	if (gen->pcu->box_ctl == SNBEP_PCU_MSR_PMON_BOX_CTL)
		v |= SNBEP_PMON_BOX_CTL_FRZ_EN;
	for (int u = 0; u < s->model->n_sockets * sim_model_n_dies(s->model); u++)
		kernel_write(s, sim_model_unit_cpu(s->model, u), gen->pcu->box_ctl, v, 0);
}

static int setup_agents(struct sim *s)
{
	struct sim_scenario *scn = s->scn;

	s->rewrites = calloc((size_t)scn->n_rules + 1, sizeof(*s->rewrites));
	if (!s->rewrites || sim_kernel_new(s->model, scn, kernel_write, s, &s->kernel) < 0)
		return -ENOMEM;
	if (s->boot == SIM_BOOT_LINUX) {
		sim_kernel_boot(s->kernel);
		boot_boxes(s);
	}
	if (sim_perf_new(s->model, s->kernel, s->boot == SIM_BOOT_LINUX, &perf_io, s, &s->perf) < 0)
		return -ENOMEM;
	for (int i = 0; i < scn->n_rules; i++) {
		if (scn->rules[i].kind == SIM_RULE_PRESET)
			apply_rule_write(s, &scn->rules[i], 0);
		else if (scn->rules[i].kind == SIM_RULE_REWRITE)
			s->rewrites[s->n_rewrites++] = &scn->rules[i];
	}
	qsort(s->rewrites, (size_t)s->n_rewrites, sizeof(*s->rewrites), cmp_rewrite);
	s->refuse_writes = scn->refuse_writes;
	return 0;
}

static int build(struct sim *s)
{
	int r = sim_build_machine(s);

	return r < 0 ? r : setup_agents(s);
}

static void sim_free(struct sim *s)
{
	if (!s)
		return;
	for (int i = 0; s->sockets && i < s->model->n_sockets; i++) {
		struct sim_socket *sk = &s->sockets[i];

		sim_timeline_free(&sk->dram);
		sim_timeline_free(&sk->prochot);
		sim_timeline_free(&sk->pkg_limit);
		sim_timeline_free(&sk->dram_limit);
		sim_timeline_free(&sk->pkg_thermal);
		sim_timeline_free(&sk->pkg_hot);
		for (int u = 0; u < N_UMASKS; u++) {
			sim_timeline_free(&sk->temp_or[u]);
			sim_timeline_free(&sk->throttled_or[u]);
		}
	}
	for (int i = 0; s->cores && i < s->model->n_sockets * s->model->n_cores; i++) {
		sim_timeline_free(&s->cores[i].temp);
		sim_timeline_free(&s->cores[i].hot);
		sim_timeline_free(&s->cores[i].throttled);
	}
	for (int i = 0; s->cpus && i < s->n_cpus; i++) {
		for (int e = 0; e < EV_COUNT; e++)
			sim_timeline_free(&s->cpus[i].rate[e]);
		sim_timeline_free(&s->cpus[i].offline);
	}
	free(s->sockets);
	free(s->cores);
	free(s->cpus);
	sim_perf_free(s->perf);
	sim_remove_pmu_root(s);
	sim_kernel_free(s->kernel);
	sim_boxes_free(s->boxes);
	free(s->rewrites);
	for (int i = 0; i < s->n_notes; i++)
		free(s->notes[i]);
	free(s->notes);
	sim_scenario_free(s->scn);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void unknown_model(const char *name, char *err, size_t errlen)
{
	const char *const *names = sim_model_names();
	size_t used;

	used = (size_t)snprintf(err, errlen, "unknown simulated model '%s', expected one of: ", name);
	for (int i = 0; names[i] && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", names[i]);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sim_scenario_names(const char *dir, char **names, int max)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		size_t len = strlen(de->d_name);

		if (len <= 4 || strcmp(de->d_name + len - 4, ".ini") != 0)
			continue;
		names[n] = strndup(de->d_name, len - 4);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), compare_names);
	return n;
}

/* "unknown scenario 'NAME' in DIR; known: a, b, c" (the .ini files there, sorted). */
static void unknown_scenario(const char *name, const char *dir, char *err, size_t errlen)
{
	char *names[SIM_MAX_SCENARIOS];
	int n = sim_scenario_names(dir, names, SIM_MAX_SCENARIOS);
	size_t used;

	used = (size_t)snprintf(err, errlen, "unknown scenario '%s' in %s", name, dir);
	for (int i = 0; i < n; i++) {
		if (used < errlen)
			used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "; known: ",
						 names[i]);
		free(names[i]);
	}
}

/* Parse "MODEL[:SCENARIO]" into the model and the scenario (loaded, or an idle one). */
static int open_spec(struct sim *s, const char *spec, const char *scenario_dir, char *err,
		     size_t errlen)
{
	char model[64], path[1024];
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	int r;

	snprintf(model, sizeof(model), "%.*s", (int)len, spec);
	s->model = len < sizeof(model) ? sim_model_find(model) : NULL;
	if (!s->model) {
		unknown_model(model, err, errlen);
		return -ENOENT;
	}
	if (!colon || !colon[1]) {
		s->scn = calloc(1, sizeof(*s->scn));
		if (!s->scn)
			return -ENOMEM;
		s->scn->kernel_thermal_throttle = true;
		s->scn->perf_event_paranoid = 2;
		s->scn->pcu_clock_stopped = -1;
		return 0;
	}
	if (strchr(colon + 1, '/'))
		return sim_scenario_load(colon + 1, &s->scn, err, errlen);
	if (!scenario_dir)
		scenario_dir = UNCORED_SCENARIO_DIR;
	snprintf(path, sizeof(path), "%s/%s.ini", scenario_dir, colon + 1);
	r = sim_scenario_load(path, &s->scn, err, errlen);
	if (r == -ENOENT)
		unknown_scenario(colon + 1, scenario_dir, err, errlen);
	return r;
}

struct sim *sim_open(const char *spec, const char *scenario_dir, enum sim_clock clock,
		     char *err, size_t errlen)
{
	return sim_open_boot(spec, scenario_dir, clock, SIM_BOOT_LINUX, err, errlen);
}

struct sim *sim_open_boot(const char *spec, const char *scenario_dir, enum sim_clock clock,
			  enum sim_boot boot, char *err, size_t errlen)
{
	struct sim *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->clock = clock;
	s->boot = boot;
	clock_gettime(CLOCK_MONOTONIC, &s->opened);
	r = open_spec(s, spec, scenario_dir, err, errlen);
	if (r == 0) {
		s->n_cpus = sim_model_n_cpus(s->model);
		r = sim_check_scenario(s, err, errlen);
	}
	if (r == 0 && (r = build(s)) < 0)
		snprintf(err, errlen, "simulated machine: %s", strerror(-r));
	if (r < 0) {
		sim_free(s);
		return NULL;
	}
	return s;
}

