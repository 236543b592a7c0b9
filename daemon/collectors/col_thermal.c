/*
 * The thermal collector: core and package temperature and throttling
 * status bits, the RAPL power-limit throttled-time counters and the
 * kernel's thermal_throttle counts from sysfs.  It reads IA32_THERM_STATUS
 * once per physical core (not per SMT sibling) and the package registers
 * once per die of each socket (once per socket on a package of one die),
 * the dies making one package value.  It never writes any MSR: the sticky log bits of the
 * thermal status registers belong to the kernel's interrupt handler
 * (hardware.md §3.5), so only the live status bits are used.
 *
 * Offline CPUs: the read itself says a CPU is offline (-ENXIO); the
 * collector then tries the next sibling, and skips a core whose CPUs are
 * all offline without counting an error (it knowingly skips it).  Any other
 * failed read is counted in c->errors and leaves that part absent for the
 * sample; accumulated totals are kept.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "counter.h"
#include "decode.h"
#include "msr.h"

#define ATTR_CORE_THROTTLES "thermal_throttle/core_throttle_count"
#define ATTR_PACKAGE_THROTTLES "thermal_throttle/package_throttle_count"

/* The [thermal] section: its settings live in the collector's block of struct conf. */
struct thermal_settings {
	bool enabled;
	bool rapl;
	bool kernel_counts;
};

static const struct conf_key thermal_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct thermal_settings, enabled), .def = "yes" },
	{ "rapl", CONF_KIND_BOOL, CONF_SETTING(struct thermal_settings, rapl), .def = "yes" },
	{ "kernel_counts", CONF_KIND_BOOL, CONF_SETTING(struct thermal_settings, kernel_counts),
	  .def = "yes" },
};

static const struct conf_section thermal_conf_section = {
	.name = "thermal", .keys = thermal_keys,
	.n_keys = sizeof(thermal_keys) / sizeof(thermal_keys[0]),
	.settings_size = sizeof(struct thermal_settings),
};

extern const struct collector_ops thermal_collector_ops;

static const struct thermal_settings *settings(const struct conf *conf)
{
	return collector_settings(conf, &thermal_collector_ops);
}

/*
 * A kernel count made monotonic: exported as the kernel has it until it
 * goes down (the CPU went offline and its count restarted) or is read
 * through another CPU; then it is re-based and only later increases add.
 */
struct kcount {
	bool has_base;
	int cpu;             /* the CPU whose attribute last_value came from */
	uint64_t last_value;
	uint64_t total;
};

/* One RAPL throttled-time register of a socket (hardware.md §4.1). */
struct rapl_reg {
	uint32_t msr;
	bool is_present;     /* did not read -EIO at start */
	bool has_base;       /* ctr initialised from a reading */
	struct counter ctr;
};

struct thermal_core {
	struct kcount kernel;
	int die;             /* index in the socket's dies */
};

/*
 * One die of a package: package-scope registers are read once per die,
 * where the kernel keeps package thermal and RAPL state (hardware-linux.md
 * 3.2, 4.1).  A package of one die has one.
 */
struct thermal_die {
	int die;             /* die_id */
	bool has_tjmax;
	unsigned tjmax_c;
	bool is_rapl_probed; /* whether pkg and dram say if the CPU has their registers */
	double time_unit_s;
	struct rapl_reg pkg, dram;
	struct kcount kernel_pkg;
	int reader;          /* this sample: a CPU of the die that answered, or -1 */
};

struct thermal_socket {
	const struct cpu_socket *topo;
	int n_dies;          /* at least 1 */
	struct thermal_die *dies;
	struct thermal_core *cores;   /* parallel to topo->cores */
};

struct thermal_state {
	int n_sockets;
	struct thermal_socket *sockets; /* parallel to c->topo->sockets */
};

/*
 * The families, in /metrics order; json_order places the fields where SPEC
 * §5a has them in the socket and core objects.
 */
static const struct metric_family core_temperature = {
	.name = "uncored_core_temperature_celsius", .help = "Core temperature.",
	.type = METRIC_GAUGE, .unit = "celsius", .scope = METRIC_SCOPE_CORE, .kind = METRIC_INT,
	.signal = METRIC_SIGNAL_TEMPERATURE,
	.json_key = "temperature_celsius", .json_order = 10, .json_null = true,
};

static const struct metric_family package_temperature = {
	.name = "uncored_package_temperature_celsius", .help = "Package temperature.",
	.type = METRIC_GAUGE, .unit = "celsius", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_INT,
	.signal = METRIC_SIGNAL_TEMPERATURE,
	.json_key = "package_temperature_celsius", .json_order = 20, .json_null = true,
};

static const struct metric_family tjmax = {
	.name = "uncored_tjmax_celsius", .help = "TCC activation temperature (TjMax).",
	.type = METRIC_GAUGE, .unit = "celsius", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_INT,
	.signal = METRIC_SIGNAL_TJMAX,
	.json_key = "tjmax_celsius", .json_order = 10, .json_null = true,
};

static const struct metric_family core_throttling = {
	.name = "uncored_core_thermal_throttling",
	.help = "Whether the core is thermally throttled now (status bit).",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_CORE, .kind = METRIC_BOOL,
	.signal = METRIC_SIGNAL_THROTTLING,
	.json_key = "thermal_throttling", .json_order = 20, .json_null = true,
};

static const struct metric_family core_prochot = {
	/* IA32_THERM_STATUS bit 2; the core's own throttling is bit 0 (hardware-linux.md 3.1). */
	.name = "uncored_core_prochot_active",
	.help = "Whether PROCHOT# or FORCEPR# is asserted now by another agent on the platform "
		"(IA32_THERM_STATUS bit 2), not the core's own thermal throttling.",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_CORE, .kind = METRIC_BOOL,
	.signal = METRIC_SIGNAL_PROCHOT,
	.json_key = "prochot_active", .json_order = 30, .json_null = true,
};

static const struct metric_family package_throttling = {
	.name = "uncored_package_thermal_throttling",
	.help = "Whether the package is thermally throttled now (status bit).",
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_BOOL,
	.signal = METRIC_SIGNAL_THROTTLING,
	.json_key = "package_thermal_throttling", .json_order = 30, .json_null = true,
};

/* In the JSON snapshot only (SPEC §5a). */
static const struct metric_family package_prochot = {
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_BOOL,
	.signal = METRIC_SIGNAL_PROCHOT,
	.json_key = "package_prochot_active", .json_order = 40, .json_null = true,
};

static const struct metric_family kernel_core_throttles = {
	.name = "uncored_kernel_core_throttles_total",
	.help = "The kernel's core_throttle_count for the core.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_CORE, .kind = METRIC_UINT,
	.is_foreign_total = true, .signal = METRIC_SIGNAL_THROTTLE_COUNT,
	.json_key = "kernel_throttles", .json_order = 40, .json_null = true,
};

static const struct metric_family kernel_package_throttles = {
	.name = "uncored_kernel_package_throttles_total",
	.help = "The kernel's package_throttle_count for the socket.",
	.type = METRIC_COUNTER, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_UINT,
	.is_foreign_total = true,
	.json_key = "kernel_package_throttles", .json_order = METRIC_JSON_SOCKET_FIXED + 200,
	.json_null = true,
	.table_title = "kernel package throttles",
};

static const struct metric_family rapl_package = {
	.name = "uncored_rapl_package_throttled_seconds_total",
	.help = "Time the package was throttled by its RAPL power limit (MSR_PKG_PERF_STATUS); "
		"power-limit throttling, not thermal.",
	.type = METRIC_COUNTER, .unit = "seconds", .scope = METRIC_SCOPE_SOCKET,
	.kind = METRIC_DOUBLE,
	.json_key = "package_throttled_seconds", .json_group = "rapl",
	.json_order = METRIC_JSON_SOCKET_FIXED + 100,
	.table_title = "RAPL power-limit throttled", .table_part = "package",
};

static const struct metric_family rapl_dram = {
	.name = "uncored_rapl_dram_throttled_seconds_total",
	.help = "Time DRAM was throttled by its RAPL power limit (MSR_DRAM_PERF_STATUS); "
		"power-limit throttling, not thermal.",
	.type = METRIC_COUNTER, .unit = "seconds", .scope = METRIC_SCOPE_SOCKET,
	.kind = METRIC_DOUBLE,
	.json_key = "dram_throttled_seconds", .json_group = "rapl",
	.json_order = METRIC_JSON_SOCKET_FIXED + 100,
	.table_title = "RAPL power-limit throttled", .table_part = "dram",
};

/*
 * In the JSON snapshot only: per socket, for each field above whose register
 * a CPU may lack, whether this CPU has it.  true: a missing or null value
 * means the register could not be read; false: the CPU does not have it.
 * A field not listed is not known either way (e.g. RAPL off in the
 * configuration).
 */
static const struct metric_family present = {
	.type = METRIC_GAUGE, .unit = "", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_BOOL,
	.label = "field",
	.json_key = "present", .json_order = METRIC_JSON_SOCKET_FIXED + 300,
};

static const struct metric_family *const thermal_families[] = {
	&core_temperature, &package_temperature, &tjmax, &core_throttling, &core_prochot,
	&package_throttling, &package_prochot, &kernel_core_throttles, &kernel_package_throttles,
	&rapl_package, &rapl_dram, &present,
};

/* "socket S", or "socket S die D" on a package of several dies, for notes. */
static const char *die_place(const struct thermal_socket *ts, const struct thermal_die *d,
			     char *buf, size_t len)
{
	if (ts->n_dies > 1)
		snprintf(buf, len, "socket %d die %d", ts->topo->socket, d->die);
	else
		snprintf(buf, len, "socket %d", ts->topo->socket);
	return buf;
}

static void setup_tjmax(struct collector *c, const struct thermal_socket *ts, struct thermal_die *d,
			int cpu)
{
	char place[48];
	uint64_t raw;
	int err;

	die_place(ts, d, place, sizeof(place));
	if (!c->info->fac.has_tjmax) {
		collector_note(c, "%s: no MSR_TEMPERATURE_TARGET on this model, no temperatures", place);
		return;
	}
	err = hw_read_msr(c->hw, cpu, MSR_TEMPERATURE_TARGET, &raw);
	if (err) {
		c->errors++;
		collector_note(c, "%s: MSR_TEMPERATURE_TARGET unreadable (%s), no temperatures", place,
			       strerror(-err));
		return;
	}
	/* hardware.md §3.4: no guessing of a default TjMax. */
	d->tjmax_c = decode_tjmax(raw);
	if (d->tjmax_c == 0) {
		collector_note(c, "%s: MSR_TEMPERATURE_TARGET reports TjMax 0, no temperatures", place);
		return;
	}
	d->has_tjmax = true;
}

/* First reading of a RAPL register; -EIO means the register is absent. */
static void setup_rapl_reg(struct collector *c, struct rapl_reg *r, int cpu, uint32_t msr)
{
	uint64_t raw;
	int err;

	r->msr = msr;
	err = hw_read_msr(c->hw, cpu, msr, &raw);
	if (err == -EIO)
		return;
	r->is_present = true;
	if (err) {
		c->errors++;
		return;
	}
	counter_init(&r->ctr, RAPL_PERF_STATUS_WIDTH, raw);
	r->has_base = true;
}

static void setup_rapl(struct collector *c, const struct thermal_socket *ts, struct thermal_die *d,
		       int cpu)
{
	char place[48];
	uint64_t raw;
	int err;

	die_place(ts, d, place, sizeof(place));
	if (!c->info->fac.has_rapl_perf_status) {
		d->is_rapl_probed = true;   /* neither register */
		return;
	}
	if (!settings(c->conf)->rapl)
		return;
	err = hw_read_msr(c->hw, cpu, MSR_RAPL_POWER_UNIT, &raw);
	if (err) {
		c->errors++;
		collector_note(c, "%s: MSR_RAPL_POWER_UNIT unreadable (%s), no RAPL throttled time",
			       place, strerror(-err));
		return;
	}
	d->time_unit_s = decode_rapl_time_unit_s(raw);
	setup_rapl_reg(c, &d->pkg, cpu, MSR_PKG_PERF_STATUS);
	setup_rapl_reg(c, &d->dram, cpu, MSR_DRAM_PERF_STATUS);
	d->is_rapl_probed = true;
	if (!d->pkg.is_present)
		collector_note(c, "%s: no MSR_PKG_PERF_STATUS, no package throttled time", place);
	if (!d->dram.is_present)
		collector_note(c, "%s: no MSR_DRAM_PERF_STATUS, no DRAM throttled time", place);
}

/* The lowest-numbered online CPU of cpus[0..n), or -1. */
static int first_online(struct hw *hw, const int *cpus, int n)
{
	for (int i = 0; i < n; i++)
		if (hw_cpu_online(hw, cpus[i]) == 1)
			return cpus[i];
	return -1;
}

static void setup_die(struct collector *c, struct thermal_socket *ts, int k)
{
	const struct cpu_socket *sock = ts->topo;
	struct thermal_die *d = &ts->dies[k];
	int cpu = sock->n_dies > 0 ? first_online(c->hw, sock->dies[k].cpus, sock->dies[k].n_cpus)
				   : cpu_socket_first_online(c->hw, sock);
	char place[48];

	d->die = sock->n_dies > 0 ? sock->dies[k].die : 0;
	if (cpu < 0) {
		collector_note(c, "%s: no online CPU, no TjMax", die_place(ts, d, place, sizeof(place)));
		return;
	}
	setup_tjmax(c, ts, d, cpu);
	setup_rapl(c, ts, d, cpu);
}

static int setup_socket(struct collector *c, struct thermal_socket *ts,
			const struct cpu_socket *sock)
{
	ts->topo = sock;
	ts->n_dies = sock->n_dies > 0 ? sock->n_dies : 1;
	ts->dies = calloc((size_t)ts->n_dies, sizeof(*ts->dies));
	ts->cores = calloc((size_t)(sock->n_cores ? sock->n_cores : 1), sizeof(*ts->cores));
	if (!ts->dies || !ts->cores)
		return -ENOMEM;
	for (int i = 0; i < sock->n_cores; i++)
		ts->cores[i].die = cpu_socket_die_of(sock, sock->cores[i].cpus[0]);
	for (int k = 0; k < ts->n_dies; k++)
		setup_die(c, ts, k);
	return 0;
}

static void thermal_free(struct thermal_state *st)
{
	if (!st)
		return;
	for (int i = 0; i < st->n_sockets; i++) {
		free(st->sockets[i].cores);
		free(st->sockets[i].dies);
	}
	free(st->sockets);
	free(st);
}

static int thermal_start(struct collector *c)
{
	struct thermal_state *st;
	int err;

	if (collector_refuse_disabled(c))
		return -ENOTSUP;
	if (c->info->fac.lacks_intel_thermal) {
		collector_refuse(c, "%s has no IA32_THERM_STATUS, no package thermal status, no TjMax "
				 "and no thermal_throttle counts (Intel facilities); its temperatures "
				 "come from k10temp", c->info->microarch ? c->info->microarch : "this CPU");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->sockets = calloc((size_t)(c->topo->n_sockets ? c->topo->n_sockets : 1),
			     sizeof(*st->sockets));
	if (!st->sockets) {
		free(st);
		return -ENOMEM;
	}
	st->n_sockets = c->topo->n_sockets;
	for (int i = 0; i < st->n_sockets; i++) {
		err = setup_socket(c, &st->sockets[i], &c->topo->sockets[i]);
		if (err) {
			thermal_free(st);
			return err;
		}
	}
	c->state = st;
	return 0;
}

/* Add a kernel count reading through cpu; see struct kcount. */
static void kcount_update(struct kcount *k, int cpu, uint64_t value)
{
	if (!k->has_base) {
		k->total = value;
	} else if (cpu == k->cpu && value >= k->last_value) {
		k->total += value - k->last_value;
	}
	k->has_base = true;
	k->cpu = cpu;
	k->last_value = value;
}

/* Read a kernel count; true when there is one to export this sample. */
static bool read_kcount(struct collector *c, struct kcount *k, int cpu, const char *attr)
{
	uint64_t value;
	int err;

	err = hw_read_cpu_attr(c->hw, cpu, attr, &value);
	if (err == -ENOENT)
		return false;
	if (err) {
		c->errors++;
		return false;
	}
	kcount_update(k, cpu, value);
	return true;
}

/*
 * IA32_THERM_STATUS of a core through its first CPU that answers.  Sets
 * *ret_cpu to that CPU (-1 if all are offline) and returns the read's
 * result (-ENXIO when all are offline).
 */
static int read_core_status(struct hw *hw, const struct cpu_core *core, int *ret_cpu,
			    uint64_t *ret_raw)
{
	*ret_cpu = -1;
	for (int i = 0; i < core->n_cpus; i++) {
		int err = hw_read_msr(hw, core->cpus[i], IA32_THERM_STATUS, ret_raw);

		if (err == -ENXIO)
			continue;
		*ret_cpu = core->cpus[i];
		return err;
	}
	return -ENXIO;
}

/* An int64_t for snapshot_add_sample (METRIC_INT). */
static uint64_t int_value(int64_t v)
{
	return (uint64_t)v;
}

static void add_core_status(struct snapshot *s, const struct thermal_die *d, uint64_t raw,
			    int where)
{
	struct decode_therm_status st = decode_therm_status(raw);

	if (d->has_tjmax && st.reading_valid)
		snapshot_add_sample(s, &core_temperature, where, NULL,
				    int_value((int64_t)d->tjmax_c - st.readout), 0);
	snapshot_add_sample(s, &core_throttling, where, NULL, st.thermal, 0);
	snapshot_add_sample(s, &core_prochot, where, NULL, st.prochot, 0);
}

/* One core; a CPU of it that answered becomes its die's reader if the die has none yet. */
static void sample_core(struct collector *c, struct thermal_socket *ts, int i, struct snapshot *s)
{
	const struct cpu_core *core = &ts->topo->cores[i];
	struct thermal_die *d = &ts->dies[ts->cores[i].die];
	int where = core->cpus[0];   /* METRIC_SCOPE_CORE */
	uint64_t raw;
	int cpu, err;

	err = read_core_status(c->hw, core, &cpu, &raw);
	if (cpu < 0)
		return;
	if (d->reader < 0)
		d->reader = cpu;
	if (err)
		c->errors++;
	else
		add_core_status(s, d, raw, where);
	if (settings(c->conf)->kernel_counts &&
	    read_kcount(c, &ts->cores[i].kernel, cpu, ATTR_CORE_THROTTLES))
		snapshot_add_sample(s, &kernel_core_throttles, where, NULL, ts->cores[i].kernel.total, 0);
}

/*
 * IA32_PACKAGE_THERM_STATUS of every die that answers, as one package: the
 * hottest die's temperature, a status bit set when it is set on any die.
 * Left out for the sample when a read fails.
 */
static void sample_package_status(struct collector *c, const struct thermal_socket *ts,
				  struct snapshot *s)
{
	int socket = ts->topo->socket, hottest = 0;
	bool has_temperature = false, thermal = false, prochot = false;

	if (!c->info->fac.has_package_thermal)
		return;
	for (int k = 0; k < ts->n_dies; k++) {
		const struct thermal_die *d = &ts->dies[k];
		struct decode_therm_status st;
		uint64_t raw;
		int err;

		if (d->reader < 0)
			continue;
		err = hw_read_msr(c->hw, d->reader, IA32_PACKAGE_THERM_STATUS, &raw);
		if (err) {
			c->errors++;
			return;
		}
		st = decode_package_therm_status(raw);
		if (d->has_tjmax) {
			int celsius = (int)d->tjmax_c - (int)st.readout;

			if (!has_temperature || celsius > hottest)
				hottest = celsius;
		}
		has_temperature |= d->has_tjmax;
		thermal |= st.thermal;
		prochot |= st.prochot;
	}
	if (has_temperature)
		snapshot_add_sample(s, &package_temperature, socket, NULL, int_value(hottest), 0);
	snapshot_add_sample(s, &package_throttling, socket, NULL, thermal, 0);
	snapshot_add_sample(s, &package_prochot, socket, NULL, prochot, 0);
}

/* Accumulate one RAPL register the CPU has; false when it could not be read. */
static bool sample_rapl_reg(struct collector *c, struct rapl_reg *r, int cpu)
{
	uint64_t raw;
	int err;

	err = hw_read_msr(c->hw, cpu, r->msr, &raw);
	if (err) {
		c->errors++;
		return false;
	}
	if (r->has_base) {
		counter_add(&r->ctr, raw);
	} else {
		counter_init(&r->ctr, RAPL_PERF_STATUS_WIDTH, raw);
		r->has_base = true;
	}
	return true;
}

/*
 * One RAPL register (offsetof struct thermal_die) over the dies: each die
 * that answers is read, and the throttled time of every die that has the
 * register is summed.  Adds nothing when no die has it or a read failed.
 */
static void sample_rapl(struct collector *c, struct thermal_socket *ts, size_t reg,
			const struct metric_family *f, struct snapshot *s)
{
	bool any = false, ok = true;
	double seconds = 0;

	for (int k = 0; k < ts->n_dies; k++) {
		struct thermal_die *d = &ts->dies[k];
		struct rapl_reg *r = (struct rapl_reg *)((char *)d + reg);

		if (!r->is_present)
			continue;
		any = true;
		if (d->reader >= 0 && !sample_rapl_reg(c, r, d->reader))
			ok = false;
		/* hardware.md §4.1: power-limit throttled time in time units. */
		seconds += (double)r->ctr.total * d->time_unit_s;
	}
	if (any && ok)
		snapshot_add_sample(s, f, ts->topo->socket, NULL, 0, seconds);
}

/* The kernel's package throttle count of every die that answers, summed. */
static void sample_kernel_package(struct collector *c, struct thermal_socket *ts,
				  struct snapshot *s)
{
	uint64_t total = 0;

	for (int k = 0; k < ts->n_dies; k++) {
		struct thermal_die *d = &ts->dies[k];

		if (d->reader >= 0 && !read_kcount(c, &d->kernel_pkg, d->reader, ATTR_PACKAGE_THROTTLES))
			return;
		total += d->kernel_pkg.total;
	}
	snapshot_add_sample(s, &kernel_package_throttles, ts->topo->socket, NULL, total, 0);
}

/* Which of the socket's optional registers this CPU has (the present family). */
static void add_present(const struct collector *c, const struct thermal_socket *ts,
			struct snapshot *s)
{
	bool pkg_status = c->info->fac.has_package_thermal;
	bool pkg = false, dram = false;
	int socket = ts->topo->socket;

	snapshot_add_sample(s, &present, socket, tjmax.json_key, c->info->fac.has_tjmax, 0);
	snapshot_add_sample(s, &present, socket, package_temperature.json_key, pkg_status, 0);
	snapshot_add_sample(s, &present, socket, package_throttling.json_key, pkg_status, 0);
	snapshot_add_sample(s, &present, socket, package_prochot.json_key, pkg_status, 0);
	for (int k = 0; k < ts->n_dies; k++) {
		if (!ts->dies[k].is_rapl_probed)
			return;
		pkg |= ts->dies[k].pkg.is_present;
		dram |= ts->dies[k].dram.is_present;
	}
	snapshot_add_sample(s, &present, socket, rapl_package.json_key, pkg, 0);
	snapshot_add_sample(s, &present, socket, rapl_dram.json_key, dram, 0);
}

static void sample_socket(struct collector *c, struct thermal_socket *ts, struct snapshot *s)
{
	bool has_tjmax = false, any_reader = false;
	unsigned lowest_tjmax = 0;

	add_present(c, ts, s);
	/* Dies of one package share a TjMax in practice; the lowest is the conservative one. */
	for (int k = 0; k < ts->n_dies; k++) {
		const struct thermal_die *d = &ts->dies[k];

		if (d->has_tjmax && (!has_tjmax || d->tjmax_c < lowest_tjmax))
			lowest_tjmax = d->tjmax_c;
		has_tjmax |= d->has_tjmax;
		ts->dies[k].reader = -1;
	}
	if (has_tjmax)
		snapshot_add_sample(s, &tjmax, ts->topo->socket, NULL, int_value(lowest_tjmax), 0);
	for (int i = 0; i < ts->topo->n_cores; i++)
		sample_core(c, ts, i, s);
	for (int k = 0; k < ts->n_dies; k++)
		any_reader |= ts->dies[k].reader >= 0;
	/* Every core offline: nothing of the package is reachable. */
	if (!any_reader)
		return;
	sample_package_status(c, ts, s);
	sample_rapl(c, ts, offsetof(struct thermal_die, pkg), &rapl_package, s);
	sample_rapl(c, ts, offsetof(struct thermal_die, dram), &rapl_dram, s);
	if (settings(c->conf)->kernel_counts)
		sample_kernel_package(c, ts, s);
}

static void thermal_sample(struct collector *c, struct snapshot *s)
{
	struct thermal_state *st = c->state;

	if (!st)
		return;
	for (int i = 0; i < st->n_sockets; i++)
		sample_socket(c, &st->sockets[i], s);
}

static void thermal_stop(struct collector *c)
{
	thermal_free(c->state);
	c->state = NULL;
}

const struct collector_ops thermal_collector_ops = {
	.name = "thermal",
	.start = thermal_start,
	.sample = thermal_sample,
	.stop = thermal_stop,
	.families = thermal_families,
	.n_families = sizeof(thermal_families) / sizeof(thermal_families[0]),
	.conf_section = &thermal_conf_section,
};
