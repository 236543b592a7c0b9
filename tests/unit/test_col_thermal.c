/*
 * Unit tests of the thermal collector against the register file: what it
 * reads and how often, how it decodes, RAPL accumulation, kernel counts,
 * offline CPUs and errors, and that it never writes anything.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "fake_machines.h"

/* Registered in collectors.c; named here to test them one by one. */
extern const struct collector_ops thermal_collector_ops;
#include "msr.h"
#include "regfile.h"
#include "snapshot.h"

#define MAX_CPUS 16
#define TJMAX_RAW (UINT64_C(100) << TEMPERATURE_TARGET_TJMAX_SHIFT)
#define VALID THERM_STATUS_READING_VALID
#define READOUT(d) ((uint64_t)(d) << THERM_STATUS_READOUT_SHIFT)
#define TU_1024 (UINT64_C(10) << RAPL_POWER_UNIT_TIME_SHIFT)  /* 1/1024 s */
#define CORE_ATTR "thermal_throttle/core_throttle_count"
#define PKG_ATTR "thermal_throttle/package_throttle_count"

/*
 * A machine of n_sockets x n_cores x n_threads numbered as Linux does
 * (thread-major), core ids 0, 2, 4... to tell ids from indexes.
 */
struct fx {
	struct hw_cpu cpus[MAX_CPUS];
	struct cpu_core cores[2][4];
	int socket_cpus[2][MAX_CPUS];
	struct cpu_socket sockets[2];
	struct cpu_die dies[2][2];
	int die_cpus[2][2][MAX_CPUS];
	struct cpu_topology topo;
	struct cpu_info info;
	struct conf conf;
	struct regfile *rf;
	struct hw hw;
	struct collector c;
	struct snapshot *s;
	int n_sockets, n_cores, n_threads;
	int n_dies;          /* per socket; 1: the topology lists none, as one built by hand */
};


/* The collector's status as one sentence list (collector_reason). */
static char reason_buf[2048];
#define REASON(c) collector_reason((c), reason_buf, sizeof(reason_buf))

static int cpu_of(const struct fx *f, int socket, int core_idx, int thread)
{
	return thread * f->n_sockets * f->n_cores + socket * f->n_cores + core_idx;
}

static void build_topology(struct fx *f)
{
	int n = f->n_sockets * f->n_cores * f->n_threads;

	for (int cpu = 0; cpu < n; cpu++) {
		int thread = cpu / (f->n_sockets * f->n_cores);
		int socket = cpu % (f->n_sockets * f->n_cores) / f->n_cores;
		int core_idx = cpu % f->n_cores;
		struct cpu_core *core = &f->cores[socket][core_idx];
		struct cpu_socket *sock = &f->sockets[socket];
		int die = core_idx * f->n_dies / f->n_cores;
		struct cpu_die *d = &f->dies[socket][die];

		f->cpus[cpu] = (struct hw_cpu){ cpu, socket, die, 2 * core_idx, thread, true };
		core->core = 2 * core_idx;
		core->cpus[core->n_cpus++] = cpu;
		f->socket_cpus[socket][sock->n_cpus++] = cpu;
		d->die = die;
		d->cpus = f->die_cpus[socket][die];
		d->cpus[d->n_cpus++] = cpu;
	}
	for (int s = 0; s < f->n_sockets; s++) {
		f->sockets[s].socket = s;
		f->sockets[s].n_cores = f->n_cores;
		f->sockets[s].cores = f->cores[s];
		f->sockets[s].cpus = f->socket_cpus[s];
		if (f->n_dies > 1) {
			f->sockets[s].n_dies = f->n_dies;
			f->sockets[s].dies = f->dies[s];
		}
	}
	f->topo = (struct cpu_topology){ n, f->cpus, f->n_sockets, f->sockets };
}

/*
 * Every register a Westmere-like package has, with quiet values.  With
 * several dies the package registers are each CPU's own, so that each die
 * can hold its own values (set them through every CPU of the die).
 */
static void define_registers(struct fx *f)
{
	static const uint32_t package[] = {
		MSR_TEMPERATURE_TARGET, IA32_PACKAGE_THERM_STATUS, MSR_RAPL_POWER_UNIT,
		MSR_PKG_PERF_STATUS, MSR_DRAM_PERF_STATUS,
	};
	const uint64_t values[] = { TJMAX_RAW, READOUT(35), TU_1024 | 0xa0e03, 0, 0 };

	regfile_define_all(f->rf, IA32_THERM_STATUS, VALID | READOUT(40));
	if (f->n_dies > 1) {
		for (size_t i = 0; i < sizeof(package) / sizeof(package[0]); i++)
			regfile_define_all(f->rf, package[i], values[i]);
		return;
	}
	for (int s = 0; s < f->n_sockets; s++) {
		regfile_define_socket(f->rf, s, MSR_TEMPERATURE_TARGET, TJMAX_RAW);
		regfile_define_socket(f->rf, s, IA32_PACKAGE_THERM_STATUS, READOUT(35));
		regfile_define_socket(f->rf, s, MSR_RAPL_POWER_UNIT, TU_1024 | 0xa0e03);
		regfile_define_socket(f->rf, s, MSR_PKG_PERF_STATUS, 0);
		regfile_define_socket(f->rf, s, MSR_DRAM_PERF_STATUS, 0);
	}
}

/* A machine of n_sockets x n_dies x (n_cores / n_dies) x n_threads. */
static struct fx *fx_new_dies(int n_sockets, int n_dies, int n_cores, int n_threads)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->n_sockets = n_sockets;
	f->n_dies = n_dies;
	f->n_cores = n_cores;
	f->n_threads = n_threads;
	build_topology(f);
	f->info.fac = (struct cpu_facilities){ .has_tjmax = true, .has_package_thermal = true,
					       .has_rapl_perf_status = true };
	*conf_setting_bool(&f->conf, "thermal", "enabled") = true;
	*conf_setting_bool(&f->conf, "thermal", "rapl") = true;
	*conf_setting_bool(&f->conf, "thermal", "kernel_counts") = true;
	f->conf.interval_s = 1;
	f->rf = regfile_new(f->cpus, f->topo.n_cpus);
	regfile_bind(f->rf, &f->hw);
	define_registers(f);
	return f;
}

static struct fx *fx_new(int n_sockets, int n_cores, int n_threads)
{
	return fx_new_dies(n_sockets, 1, n_cores, n_threads);
}

/* Set msr on every CPU of die of socket (package registers of a multi-die fx). */
static void set_die(struct fx *f, int socket, int die, uint32_t msr, uint64_t value)
{
	const struct cpu_die *d = &f->dies[socket][die];

	for (int i = 0; i < d->n_cpus; i++)
		regfile_set(f->rf, d->cpus[i], msr, value);
}

static int fx_start(struct fx *f)
{
	return collector_start(&f->c, &thermal_collector_ops, &f->hw, &f->info, &f->topo, &f->conf);
}

/* One sample into a fresh snapshot kept in f->s. */
static void fx_sample(struct fx *f)
{
	snapshot_release(f->s);
	f->s = snapshot_new(&f->topo, &f->info);
	assert_non_null(f->s);
	collector_sample(&f->c, f->s);
}

/* Frees everything; the thermal collector must not have written anything. */
static void fx_free(struct fx *f)
{
	static const uint32_t msrs[] = {
		IA32_THERM_STATUS, IA32_PACKAGE_THERM_STATUS, MSR_TEMPERATURE_TARGET,
		MSR_RAPL_POWER_UNIT, MSR_PKG_PERF_STATUS, MSR_DRAM_PERF_STATUS,
	};

	collector_stop(&f->c);
	assert_int_equal(f->hw.n_writes, 0);
	for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++)
		assert_int_equal(regfile_writes(f->rf, -1, msrs[i]), 0);
	snapshot_release(f->s);
	hw_close(&f->hw);
	free(f);
}

/*
 * What the collector added for a core or a socket, read back through the
 * sample API by the thermal families' JSON keys (a value absent: has_* false).
 */
struct core_view {
	bool has_status, has_temperature, has_kernel_throttles;
	int temperature_c;
	bool thermal_throttling, prochot_active;
	uint64_t kernel_throttles;
};

struct socket_view {
	bool has_tjmax, has_package_status, has_package_temperature, has_kernel_package_throttles;
	bool has_rapl, has_rapl_dram;   /* package, DRAM throttled time */
	int tjmax_c, package_temperature_c;
	bool package_thermal_throttling, package_prochot_active;
	uint64_t kernel_package_throttles;
	double rapl_package_throttled_s, rapl_dram_throttled_s;
};

static const struct metric_sample *value_of(const struct fx *f, const char *json_key, int where)
{
	const struct collector_ops *ops = &thermal_collector_ops;

	for (size_t i = 0; i < ops->n_families; i++)
		if (strcmp(ops->families[i]->json_key, json_key) == 0)
			return snapshot_find_sample(f->s, ops->families[i], where, NULL);
	fail_msg("no thermal family %s", json_key);
	return NULL;
}

/* v's value in *ret (METRIC_INT, METRIC_BOOL, METRIC_UINT); whether there is one. */
static bool get_u(const struct metric_sample *v, uint64_t *ret)
{
	*ret = v ? v->value.u : 0;
	return v != NULL;
}

static const struct core_view *core_of(struct fx *f, int socket, int core_idx)
{
	static struct core_view views[4];
	static int next;
	struct core_view *cv = &views[next++ % 4];
	int where = f->cores[socket][core_idx].cpus[0];
	uint64_t u;

	assert_non_null(snapshot_core(f->s, socket, 2 * core_idx));
	memset(cv, 0, sizeof(*cv));
	cv->has_temperature = get_u(value_of(f, "temperature_celsius", where), &u);
	cv->temperature_c = (int)(int64_t)u;
	cv->has_status = get_u(value_of(f, "thermal_throttling", where), &u);
	cv->thermal_throttling = u != 0;
	assert_int_equal(get_u(value_of(f, "prochot_active", where), &u), cv->has_status);
	cv->prochot_active = u != 0;
	cv->has_kernel_throttles = get_u(value_of(f, "kernel_throttles", where), &u);
	cv->kernel_throttles = u;
	return cv;
}

static const struct socket_view *socket_of(struct fx *f, int socket)
{
	static struct socket_view views[4];
	static int next;
	struct socket_view *sv = &views[next++ % 4];
	const struct metric_sample *pkg, *dram;
	uint64_t u;

	memset(sv, 0, sizeof(*sv));
	sv->has_tjmax = get_u(value_of(f, "tjmax_celsius", socket), &u);
	sv->tjmax_c = (int)(int64_t)u;
	sv->has_package_temperature = get_u(value_of(f, "package_temperature_celsius", socket), &u);
	sv->package_temperature_c = (int)(int64_t)u;
	sv->has_package_status = get_u(value_of(f, "package_thermal_throttling", socket), &u);
	sv->package_thermal_throttling = u != 0;
	assert_int_equal(get_u(value_of(f, "package_prochot_active", socket), &u),
			 sv->has_package_status);
	sv->package_prochot_active = u != 0;
	sv->has_kernel_package_throttles = get_u(value_of(f, "kernel_package_throttles", socket), &u);
	sv->kernel_package_throttles = u;
	pkg = value_of(f, "package_throttled_seconds", socket);
	dram = value_of(f, "dram_throttled_seconds", socket);
	sv->has_rapl = pkg != NULL;
	sv->has_rapl_dram = dram != NULL;
	sv->rapl_package_throttled_s = pkg ? pkg->value.d : 0;
	sv->rapl_dram_throttled_s = dram ? dram->value.d : 0;
	return sv;
}

/* The present entry for field at socket: 1, 0, or -1 when not listed. */
static int present_of(const struct fx *f, int socket, const char *field)
{
	const struct collector_ops *ops = &thermal_collector_ops;

	for (size_t i = 0; i < ops->n_families; i++)
		if (strcmp(ops->families[i]->json_key, "present") == 0) {
			const struct metric_sample *v =
				snapshot_find_sample(f->s, ops->families[i], socket, field);

			return v ? (int)v->value.u : -1;
		}
	fail_msg("no present family");
	return -1;
}

static void one_status_read_per_core_and_one_package_read_per_socket(void **state)
{
	struct fx *f = fx_new(2, 2, 2);

	(void)state;
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	fx_sample(f);
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < 2; k++) {
			assert_int_equal(regfile_reads(f->rf, cpu_of(f, s, k, 0), IA32_THERM_STATUS), 2);
			assert_int_equal(regfile_reads(f->rf, cpu_of(f, s, k, 1), IA32_THERM_STATUS), 0);
		}
	}
	assert_int_equal(regfile_reads(f->rf, -1, IA32_THERM_STATUS), 8);
	assert_int_equal(regfile_reads(f->rf, -1, IA32_PACKAGE_THERM_STATUS), 4);
	assert_int_equal(regfile_reads(f->rf, 0, IA32_PACKAGE_THERM_STATUS), 2);
	assert_int_equal(regfile_reads(f->rf, 2, IA32_PACKAGE_THERM_STATUS), 2);
	/* TjMax and the RAPL unit once, at start. */
	assert_int_equal(regfile_reads(f->rf, -1, MSR_TEMPERATURE_TARGET), 2);
	assert_int_equal(regfile_reads(f->rf, -1, MSR_RAPL_POWER_UNIT), 2);
	assert_true(f->c.up);
	assert_string_equal(REASON(&f->c), "");
	assert_int_equal(f->c.errors, 0);
	fx_free(f);
}

/*
 * One package of two dies, two cores each: the package registers are read
 * once per die, through a CPU of that die, and make one package value (the
 * hottest die, a bit set on any die, the dies' throttled time summed).
 */
static void package_registers_read_per_die(void **state)
{
	struct fx *f = fx_new_dies(1, 2, 4, 2);
	const struct socket_view *ss;

	(void)state;
	/* Die 0: CPUs 0, 1, 4, 5; die 1: CPUs 2, 3, 6, 7. */
	set_die(f, 0, 1, IA32_PACKAGE_THERM_STATUS, READOUT(10) | THERM_STATUS_PROCHOT);
	set_die(f, 0, 0, MSR_PKG_PERF_STATUS, 1024);
	set_die(f, 0, 1, MSR_PKG_PERF_STATUS, 2048);
	regfile_set_attr(f->rf, 0, PKG_ATTR, 3);
	regfile_set_attr(f->rf, 2, PKG_ATTR, 4);
	assert_int_equal(fx_start(f), 0);
	set_die(f, 0, 0, MSR_PKG_PERF_STATUS, 2048);   /* die 0: +1 s */
	set_die(f, 0, 1, MSR_PKG_PERF_STATUS, 4096);   /* die 1: +2 s */
	set_die(f, 0, 1, MSR_DRAM_PERF_STATUS, 512);   /* die 1: +0.5 s */
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_true(ss->has_package_status);
	assert_int_equal(ss->package_temperature_c, 90);   /* die 1: TjMax 100 - 10 */
	assert_false(ss->package_thermal_throttling);
	assert_true(ss->package_prochot_active);
	assert_true(ss->rapl_package_throttled_s == 3.0);
	assert_true(ss->rapl_dram_throttled_s == 0.5);
	assert_true(ss->has_kernel_package_throttles);
	assert_int_equal(ss->kernel_package_throttles, 7);
	/* Through the first CPU of each die, once per die and sample (TjMax and unit at start). */
	for (int cpu = 0; cpu < 8; cpu++) {
		unsigned want = cpu == 0 || cpu == 2 ? 1 : 0;

		assert_int_equal(regfile_reads(f->rf, cpu, IA32_PACKAGE_THERM_STATUS), want);
		assert_int_equal(regfile_reads(f->rf, cpu, MSR_TEMPERATURE_TARGET), want);
		assert_int_equal(regfile_reads(f->rf, cpu, MSR_RAPL_POWER_UNIT), want);
		assert_int_equal(regfile_reads(f->rf, cpu, MSR_PKG_PERF_STATUS), 2 * want);
	}
	/* Die 1 cools down and drops PROCHOT#: the package follows die 0. */
	set_die(f, 0, 1, IA32_PACKAGE_THERM_STATUS, READOUT(50));
	set_die(f, 0, 0, IA32_PACKAGE_THERM_STATUS, READOUT(20) | THERM_STATUS_THERMAL);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_int_equal(ss->package_temperature_c, 80);
	assert_true(ss->package_thermal_throttling);
	assert_false(ss->package_prochot_active);
	assert_string_equal(REASON(&f->c), "");
	assert_int_equal(f->c.errors, 0);
	fx_free(f);
}

/* A die that cannot be read leaves the package values out; the other die's totals are kept. */
static void a_die_failing_leaves_the_package_out(void **state)
{
	struct fx *f = fx_new_dies(1, 2, 2, 1);
	const struct socket_view *ss;

	(void)state;
	/* Die 0: CPU 0; die 1: CPU 1. */
	assert_int_equal(fx_start(f), 0);
	regfile_fail_reads(f->rf, 1, IA32_PACKAGE_THERM_STATUS, -EIO);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_false(ss->has_package_status);
	assert_true(ss->has_rapl);
	assert_int_equal(f->c.errors, 1);
	regfile_fail_reads(f->rf, 0, 0, 0);
	fx_sample(f);
	assert_true(socket_of(f, 0)->has_package_status);
	fx_free(f);
}

struct status_case {
	const char *name;
	uint64_t raw;
	bool has_temperature;
	int temperature_c;
	bool throttling, prochot;
};

static const struct status_case status_cases[] = {
	{ "valid reading", VALID | READOUT(40), true, 60, false, false },
	{ "at TjMax", VALID | READOUT(0), true, 100, false, false },
	{ "reading not valid", READOUT(40), false, 0, false, false },
	{ "throttling now", VALID | READOUT(2) | THERM_STATUS_THERMAL, true, 98, true, false },
	{ "prochot now", VALID | READOUT(20) | THERM_STATUS_PROCHOT, true, 80, false, true },
	{ "only sticky logs", VALID | READOUT(20) | THERM_STATUS_THERMAL_LOG |
		THERM_STATUS_PROCHOT_LOG, true, 80, false, false },
};

static void core_status_decoded_with_valid_bit_respected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(status_cases) / sizeof(status_cases[0]); i++) {
		const struct status_case *t = &status_cases[i];
		struct fx *f = fx_new(1, 2, 1);
		const struct core_view *sc;

		print_message("case: %s\n", t->name);
		regfile_set(f->rf, 1, IA32_THERM_STATUS, t->raw);
		assert_int_equal(fx_start(f), 0);
		fx_sample(f);
		sc = core_of(f, 0, 1);
		assert_true(sc->has_status);
		assert_int_equal(sc->has_temperature, t->has_temperature);
		if (t->has_temperature)
			assert_int_equal(sc->temperature_c, t->temperature_c);
		assert_int_equal(sc->thermal_throttling, t->throttling);
		assert_int_equal(sc->prochot_active, t->prochot);
		/* The other core keeps its own reading. */
		assert_int_equal(core_of(f, 0, 0)->temperature_c, 60);
		fx_free(f);
	}
}

/* Bit 2 is another agent's PROCHOT#/FORCEPR#, not the core's own throttling (bit 0). */
static void prochot_help_names_another_agent(void **state)
{
	const struct collector_ops *ops = &thermal_collector_ops;
	const struct metric_family *fam = NULL;

	(void)state;
	for (size_t i = 0; i < ops->n_families; i++)
		if (strcmp(ops->families[i]->json_key, "prochot_active") == 0)
			fam = ops->families[i];
	assert_non_null(fam);
	assert_string_equal(fam->name, "uncored_core_prochot_active");
	assert_string_equal(fam->help, "Whether PROCHOT# or FORCEPR# is asserted now by another "
			    "agent on the platform (IA32_THERM_STATUS bit 2), not the core's own "
			    "thermal throttling.");
}

static void package_status_decoded(void **state)
{
	struct fx *f = fx_new(2, 1, 1);
	const struct socket_view *ss;

	(void)state;
	regfile_set(f->rf, 1, IA32_PACKAGE_THERM_STATUS,
		    READOUT(7) | THERM_STATUS_THERMAL | THERM_STATUS_PROCHOT);
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_true(ss->has_tjmax);
	assert_int_equal(ss->tjmax_c, 100);
	assert_true(ss->has_package_status);
	assert_true(ss->has_package_temperature);
	assert_int_equal(ss->package_temperature_c, 65);
	assert_false(ss->package_thermal_throttling);
	assert_false(ss->package_prochot_active);
	ss = socket_of(f, 1);
	assert_int_equal(ss->package_temperature_c, 93);
	assert_true(ss->package_thermal_throttling);
	assert_true(ss->package_prochot_active);
	fx_free(f);
}

static void package_absent_on_a_model_without_it(void **state)
{
	struct fx *f = fx_new(1, 2, 2);
	const struct socket_view *ss;

	(void)state;
	f->info.fac.has_package_thermal = false;
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_false(ss->has_package_status);
	assert_false(ss->has_package_temperature);
	assert_int_equal(regfile_reads(f->rf, -1, IA32_PACKAGE_THERM_STATUS), 0);
	assert_true(core_of(f, 0, 0)->has_temperature);
	/* Not on this CPU, as opposed to unread. */
	assert_int_equal(present_of(f, 0, "package_temperature_celsius"), 0);
	assert_int_equal(present_of(f, 0, "package_thermal_throttling"), 0);
	assert_int_equal(present_of(f, 0, "package_prochot_active"), 0);
	assert_int_equal(present_of(f, 0, "tjmax_celsius"), 1);
	fx_free(f);
}

static void tjmax_zero_means_no_temperatures_and_says_why(void **state)
{
	struct fx *f = fx_new(1, 1, 1);
	const struct socket_view *ss;

	(void)state;
	regfile_set(f->rf, 0, MSR_TEMPERATURE_TARGET, 0);
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_false(ss->has_tjmax);
	assert_false(ss->has_package_temperature);
	assert_true(ss->has_package_status);
	assert_true(core_of(f, 0, 0)->has_status);
	assert_false(core_of(f, 0, 0)->has_temperature);
	assert_true(f->c.up);
	assert_string_equal(REASON(&f->c),
			    "socket 0: MSR_TEMPERATURE_TARGET reports TjMax 0, no temperatures");
	assert_int_equal(f->c.errors, 0);
	fx_free(f);
}

static void tjmax_unreadable_is_an_error_with_a_reason(void **state)
{
	struct fx *f = fx_new(1, 1, 1);

	(void)state;
	regfile_fail_reads(f->rf, 0, MSR_TEMPERATURE_TARGET, -EIO);
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	assert_false(socket_of(f, 0)->has_tjmax);
	assert_false(core_of(f, 0, 0)->has_temperature);
	assert_int_equal(f->c.errors, 1);
	assert_string_equal(REASON(&f->c), "socket 0: MSR_TEMPERATURE_TARGET unreadable "
			    "(Input/output error), no temperatures");
	fx_free(f);
}

static void rapl_accumulates_across_the_32_bit_wrap(void **state)
{
	struct fx *f = fx_new(1, 1, 1);
	const struct socket_view *ss;

	(void)state;
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, UINT64_C(0xffffff00));
	regfile_set(f->rf, 0, MSR_DRAM_PERF_STATUS, UINT64_C(0xfffffc00));
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_true(ss->has_rapl);
	assert_true(ss->rapl_package_throttled_s == 0.0);
	/* 0x100 units to the wrap, 0x100 after it: 512/1024 s. */
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 0x100);
	regfile_set(f->rf, 0, MSR_DRAM_PERF_STATUS, 0x400);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_true(ss->rapl_package_throttled_s == 0.5);
	assert_true(ss->rapl_dram_throttled_s == 2.0);
	/* Bits above 31 are not part of the counter. */
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, UINT64_C(0xabcd00000000) | 0x500);
	fx_sample(f);
	assert_true(socket_of(f, 0)->rapl_package_throttled_s == 1.5);
	fx_free(f);
}

static void rapl_off_in_config_or_model_reads_nothing(void **state)
{
	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		struct fx *f = fx_new(1, 1, 1);

		if (variant == 0)
			*conf_setting_bool(&f->conf, "thermal", "rapl") = false;
		else
			f->info.fac.has_rapl_perf_status = false;
		assert_int_equal(fx_start(f), 0);
		fx_sample(f);
		assert_false(socket_of(f, 0)->has_rapl);
		assert_false(socket_of(f, 0)->has_rapl_dram);
		/* Off in the configuration: not known; a model without RAPL: absent. */
		assert_int_equal(present_of(f, 0, "dram_throttled_seconds"), variant == 0 ? -1 : 0);
		assert_int_equal(present_of(f, 0, "package_throttled_seconds"), variant == 0 ? -1 : 0);
		assert_int_equal(regfile_reads(f->rf, -1, MSR_RAPL_POWER_UNIT), 0);
		assert_int_equal(regfile_reads(f->rf, -1, MSR_PKG_PERF_STATUS), 0);
		assert_int_equal(regfile_reads(f->rf, -1, MSR_DRAM_PERF_STATUS), 0);
		fx_free(f);
	}
}

static void rapl_register_reading_eio_is_absent(void **state)
{
	struct fx *f = fx_new(1, 1, 1);
	const struct socket_view *ss;

	(void)state;
	regfile_fail_reads(f->rf, 0, MSR_DRAM_PERF_STATUS, -EIO);
	assert_int_equal(fx_start(f), 0);
	regfile_fail_reads(f->rf, 0, 0, 0);
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 1024);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_true(ss->has_rapl);
	assert_true(ss->rapl_package_throttled_s == 1.0);
	/* Absent hardware is left out, not exported as 0. */
	assert_false(ss->has_rapl_dram);
	assert_int_equal(present_of(f, 0, "dram_throttled_seconds"), 0);
	assert_int_equal(present_of(f, 0, "package_throttled_seconds"), 1);
	/* Absent since start: never read again, not an error. */
	assert_int_equal(regfile_reads(f->rf, 0, MSR_DRAM_PERF_STATUS), 1);
	assert_int_equal(f->c.errors, 0);
	assert_string_equal(REASON(&f->c),
			    "socket 0: no MSR_DRAM_PERF_STATUS, no DRAM throttled time");
	fx_free(f);
}

static void read_errors_are_counted_without_losing_rapl_totals(void **state)
{
	struct fx *f = fx_new(1, 1, 1);
	const struct socket_view *ss;

	(void)state;
	assert_int_equal(fx_start(f), 0);
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 2048);
	fx_sample(f);
	assert_true(socket_of(f, 0)->rapl_package_throttled_s == 2.0);

	regfile_fail_reads(f->rf, 0, MSR_PKG_PERF_STATUS, -EIO);
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 3072);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_false(ss->has_rapl);
	assert_true(ss->has_rapl_dram);   /* the other register was read */
	/* The CPU has the register: a missing value means it could not be read. */
	assert_int_equal(present_of(f, 0, "package_throttled_seconds"), 1);
	assert_true(ss->has_package_status);
	assert_int_equal(f->c.errors, 1);

	regfile_fail_reads(f->rf, 0, 0, 0);
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 4096);
	fx_sample(f);
	ss = socket_of(f, 0);
	assert_true(ss->has_rapl);
	assert_true(ss->rapl_package_throttled_s == 4.0);

	/* A failed core read: that core's status absent this sample, counted. */
	regfile_fail_reads(f->rf, 0, IA32_THERM_STATUS, -EIO);
	fx_sample(f);
	assert_false(core_of(f, 0, 0)->has_status);
	assert_false(core_of(f, 0, 0)->has_temperature);
	assert_true(socket_of(f, 0)->has_package_status);
	assert_int_equal(f->c.errors, 2);
	fx_free(f);
}

static void kernel_counts_absent_present_and_going_down(void **state)
{
	struct fx *f = fx_new(1, 2, 2);
	const struct core_view *sc;
	const struct socket_view *ss;

	(void)state;
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	assert_false(core_of(f, 0, 0)->has_kernel_throttles);
	assert_false(socket_of(f, 0)->has_kernel_package_throttles);
	assert_int_equal(f->c.errors, 0);

	/* Exported as the kernel has them; the sibling's count is not read. */
	regfile_set_attr(f->rf, 0, CORE_ATTR, 7);
	regfile_set_attr(f->rf, 2, CORE_ATTR, 1000);
	regfile_set_attr(f->rf, 0, PKG_ATTR, 3);
	fx_sample(f);
	sc = core_of(f, 0, 0);
	ss = socket_of(f, 0);
	assert_true(sc->has_kernel_throttles);
	assert_int_equal(sc->kernel_throttles, 7);
	assert_false(core_of(f, 0, 1)->has_kernel_throttles);
	assert_true(ss->has_kernel_package_throttles);
	assert_int_equal(ss->kernel_package_throttles, 3);

	regfile_set_attr(f->rf, 0, CORE_ATTR, 9);
	fx_sample(f);
	assert_int_equal(core_of(f, 0, 0)->kernel_throttles, 9);

	/* The count restarted: the total stays, later increases add. */
	regfile_set_attr(f->rf, 0, CORE_ATTR, 1);
	fx_sample(f);
	assert_int_equal(core_of(f, 0, 0)->kernel_throttles, 9);
	regfile_set_attr(f->rf, 0, CORE_ATTR, 4);
	fx_sample(f);
	assert_int_equal(core_of(f, 0, 0)->kernel_throttles, 12);
	assert_int_equal(f->c.errors, 0);
	fx_free(f);
}

static void kernel_counts_off_in_config(void **state)
{
	struct fx *f = fx_new(1, 1, 1);

	(void)state;
	*conf_setting_bool(&f->conf, "thermal", "kernel_counts") = false;
	regfile_set_attr(f->rf, 0, CORE_ATTR, 7);
	regfile_set_attr(f->rf, 0, PKG_ATTR, 3);
	assert_int_equal(fx_start(f), 0);
	fx_sample(f);
	assert_false(core_of(f, 0, 0)->has_kernel_throttles);
	assert_false(socket_of(f, 0)->has_kernel_package_throttles);
	fx_free(f);
}

static void offline_cpu_is_skipped_for_a_sibling_without_an_error(void **state)
{
	struct fx *f = fx_new(1, 2, 2);
	int first = cpu_of(f, 0, 0, 0), sibling = cpu_of(f, 0, 0, 1);

	(void)state;
	assert_int_equal(fx_start(f), 0);
	regfile_set_online(f->rf, first, false);
	regfile_set(f->rf, sibling, IA32_THERM_STATUS, VALID | READOUT(30));
	fx_sample(f);
	assert_true(core_of(f, 0, 0)->has_status);
	assert_int_equal(core_of(f, 0, 0)->temperature_c, 70);
	assert_int_equal(regfile_reads(f->rf, sibling, IA32_THERM_STATUS), 1);
	assert_true(socket_of(f, 0)->has_package_status);

	/* The whole core offline: skipped, still no error. */
	regfile_set_online(f->rf, sibling, false);
	fx_sample(f);
	assert_false(core_of(f, 0, 0)->has_status);
	assert_true(core_of(f, 0, 1)->has_status);
	assert_int_equal(f->c.errors, 0);

	/* Back: read through the first CPU again. */
	regfile_set_online(f->rf, first, true);
	fx_sample(f);
	assert_true(core_of(f, 0, 0)->has_status);
	assert_int_equal(core_of(f, 0, 0)->temperature_c, 60);
	fx_free(f);
}

static void whole_socket_offline_keeps_rapl_totals(void **state)
{
	struct fx *f = fx_new(1, 1, 1);

	(void)state;
	assert_int_equal(fx_start(f), 0);
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 1024);
	fx_sample(f);
	regfile_set_online(f->rf, 0, false);
	fx_sample(f);
	assert_false(socket_of(f, 0)->has_rapl);
	assert_false(socket_of(f, 0)->has_package_status);
	assert_int_equal(f->c.errors, 0);
	regfile_set_online(f->rf, 0, true);
	regfile_set(f->rf, 0, MSR_PKG_PERF_STATUS, 2048);
	fx_sample(f);
	assert_true(socket_of(f, 0)->rapl_package_throttled_s == 2.0);
	fx_free(f);
}

static void disabled_in_config_does_not_start(void **state)
{
	struct fx *f = fx_new(1, 1, 1);

	(void)state;
	*conf_setting_bool(&f->conf, "thermal", "enabled") = false;
	assert_int_equal(fx_start(f), -ENOTSUP);
	assert_false(f->c.up);
	assert_string_equal(REASON(&f->c), "disabled in the configuration");
	fx_sample(f);
	assert_false(core_of(f, 0, 0)->has_status);
	assert_int_equal(regfile_reads(f->rf, -1, IA32_THERM_STATUS), 0);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_status_read_per_core_and_one_package_read_per_socket),
		cmocka_unit_test(core_status_decoded_with_valid_bit_respected),
		cmocka_unit_test(package_registers_read_per_die),
		cmocka_unit_test(a_die_failing_leaves_the_package_out),
		cmocka_unit_test(prochot_help_names_another_agent),
		cmocka_unit_test(package_status_decoded),
		cmocka_unit_test(package_absent_on_a_model_without_it),
		cmocka_unit_test(tjmax_zero_means_no_temperatures_and_says_why),
		cmocka_unit_test(tjmax_unreadable_is_an_error_with_a_reason),
		cmocka_unit_test(rapl_accumulates_across_the_32_bit_wrap),
		cmocka_unit_test(rapl_off_in_config_or_model_reads_nothing),
		cmocka_unit_test(rapl_register_reading_eio_is_absent),
		cmocka_unit_test(read_errors_are_counted_without_losing_rapl_totals),
		cmocka_unit_test(kernel_counts_absent_present_and_going_down),
		cmocka_unit_test(kernel_counts_off_in_config),
		cmocka_unit_test(offline_cpu_is_skipped_for_a_sibling_without_an_error),
		cmocka_unit_test(whole_socket_offline_keeps_rapl_totals),
		cmocka_unit_test(disabled_in_config_does_not_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
