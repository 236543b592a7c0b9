/*
 * Snapshot to the Prometheus text exposition format (SPEC §5).  The metric
 * families are one table in output order; each row names a writer that
 * emits the family's samples, and a family whose writer emitted nothing
 * is taken back out, HELP and TYPE included, so absent hardware leaves no
 * trace.  It never touches hardware; the only state it writes is the
 * per-snapshot cache of the formatted text (fmt_prom_cached).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_prom.h"

struct family;
typedef void family_writer(const struct family *f, const struct snapshot *s, struct strbuf *out);

struct family {
	const char *name;
	const char *type;
	const char *help;
	family_writer *write;
};

/* Sample helpers: name{ then labels then } value. */
static void begin(struct strbuf *out, const struct family *f)
{
	strbuf_append(out, f->name);
	strbuf_append(out, "{");
}

static void label_str(struct strbuf *out, const char *key, const char *value)
{
	if (out->len > 0 && out->buf[out->len - 1] != '{')
		strbuf_append(out, ",");
	strbuf_append(out, key);
	strbuf_append(out, "=\"");
	strbuf_append_prom_label(out, value);
	strbuf_append(out, "\"");
}

static void label_int(struct strbuf *out, const char *key, long long value)
{
	if (out->len > 0 && out->buf[out->len - 1] != '{')
		strbuf_append(out, ",");
	strbuf_printf(out, "%s=\"%lld\"", key, value);
}

static void end_u64(struct strbuf *out, uint64_t v)
{
	strbuf_printf(out, "} %" PRIu64 "\n", v);
}

static void end_double(struct strbuf *out, double v)
{
	strbuf_append(out, "} ");
	strbuf_append_prom_double(out, v);
	strbuf_append(out, "\n");
}

/* A sample without labels. */
static void plain_u64(struct strbuf *out, const struct family *f, uint64_t v)
{
	strbuf_printf(out, "%s %" PRIu64 "\n", f->name, v);
}

static void write_build_info(const struct family *f, const struct snapshot *s, struct strbuf *out)
{
	begin(out, f);
	label_str(out, "version", s->version);
	end_u64(out, 1);
}

static void write_cpu_info(const struct family *f, const struct snapshot *s, struct strbuf *out)
{
	for (int i = 0; i < s->n_sockets; i++) {
		begin(out, f);
		label_int(out, "socket", s->sockets[i].socket);
		label_str(out, "vendor", s->cpu_id.vendor);
		label_int(out, "family", s->cpu_id.family);
		label_int(out, "model", s->cpu_id.model);
		label_str(out, "microarch", s->cpu_id.microarch);
		end_u64(out, 1);
	}
}

static void write_collector_up(const struct family *f, const struct snapshot *s,
			       struct strbuf *out)
{
	for (int i = 0; i < SNAPSHOT_COLLECTOR_COUNT; i++) {
		const struct snapshot_collector *c = &s->collectors[i];

		if (!c->enabled || !c->name)
			continue;
		begin(out, f);
		label_str(out, "collector", c->name);
		end_u64(out, c->up ? 1 : 0);
	}
}

static void write_samples(const struct family *f, const struct snapshot *s, struct strbuf *out)
{
	plain_u64(out, f, s->samples);
}

static void write_sample_errors(const struct family *f, const struct snapshot *s,
				struct strbuf *out)
{
	for (int i = 0; i < SNAPSHOT_COLLECTOR_COUNT; i++) {
		const struct snapshot_collector *c = &s->collectors[i];

		if (!c->enabled || !c->name)
			continue;
		begin(out, f);
		label_str(out, "collector", c->name);
		end_u64(out, c->errors);
	}
}

static void write_sample_duration(const struct family *f, const struct snapshot *s,
				  struct strbuf *out)
{
	strbuf_append(out, f->name);
	strbuf_append(out, " ");
	strbuf_append_prom_double(out, s->last_sample_duration_s);
	strbuf_append(out, "\n");
}

static void write_uncore_events(const struct family *f, const struct snapshot *s,
				struct strbuf *out)
{
	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *sock = &s->sockets[i];

		if (!sock->has_uncore)
			continue;
		for (int j = 0; j < sock->n_uncore_events; j++) {
			const struct snapshot_event *ev = &sock->uncore_events[j];

			if (!ev->available)
				continue;
			begin(out, f);
			label_int(out, "socket", sock->socket);
			label_str(out, "event", ev->name);
			end_u64(out, ev->total);
		}
	}
}

static void write_uncore_clockticks(const struct family *f, const struct snapshot *s,
				    struct strbuf *out)
{
	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *sock = &s->sockets[i];

		if (!sock->has_uncore || !sock->has_uncore_clockticks)
			continue;
		begin(out, f);
		label_int(out, "socket", sock->socket);
		end_u64(out, sock->uncore_clockticks);
	}
}

static void write_conflicts(const struct family *f, const struct snapshot *s, struct strbuf *out)
{
	for (int i = 0; i < s->n_sockets; i++) {
		if (!s->sockets[i].has_uncore)
			continue;
		begin(out, f);
		label_str(out, "collector", "uncore");
		label_int(out, "socket", s->sockets[i].socket);
		end_u64(out, s->sockets[i].uncore_conflicts);
	}
	for (int i = 0; i < s->n_cpus; i++) {
		if (!s->cpus[i].has_core_pmu)
			continue;
		begin(out, f);
		label_str(out, "collector", "core");
		label_int(out, "cpu", s->cpus[i].cpu);
		end_u64(out, s->cpus[i].conflicts);
	}
}

/*
 * Per-core and per-socket gauges and counters share one shape: a test of
 * whether the value exists and the value itself.  These tables keep each
 * family to one line instead of one writer apiece.
 */
struct core_value {
	bool (*has)(const struct snapshot_core *c);
	uint64_t (*value)(const struct snapshot_core *c);
};

struct socket_value {
	bool (*has)(const struct snapshot_socket *sock);
	bool is_double;
	uint64_t (*value)(const struct snapshot_socket *sock);
	double (*dvalue)(const struct snapshot_socket *sock);
};

static bool core_has_temp(const struct snapshot_core *c) { return c->has_temperature; }
static bool core_has_status(const struct snapshot_core *c) { return c->has_status; }
static bool core_has_kthr(const struct snapshot_core *c) { return c->has_kernel_throttles; }
static uint64_t core_temp(const struct snapshot_core *c) { return (uint64_t)c->temperature_c; }
static uint64_t core_thr(const struct snapshot_core *c) { return c->thermal_throttling; }
static uint64_t core_prochot(const struct snapshot_core *c) { return c->prochot_active; }
static uint64_t core_kthr(const struct snapshot_core *c) { return c->kernel_throttles; }

static const struct core_value core_values[] = {
	{ core_has_temp, core_temp },
	{ core_has_status, core_thr },
	{ core_has_status, core_prochot },
	{ core_has_kthr, core_kthr },
};
enum { CV_TEMP, CV_THROTTLING, CV_PROCHOT, CV_KERNEL_THROTTLES };

static bool sock_has_pkg_temp(const struct snapshot_socket *s) { return s->has_package_temperature; }
static bool sock_has_tjmax(const struct snapshot_socket *s) { return s->has_tjmax; }
static bool sock_has_pkg_status(const struct snapshot_socket *s) { return s->has_package_status; }
static bool sock_has_kthr(const struct snapshot_socket *s) { return s->has_kernel_package_throttles; }
static bool sock_has_rapl(const struct snapshot_socket *s) { return s->has_rapl; }
static uint64_t sock_pkg_temp(const struct snapshot_socket *s) { return (uint64_t)s->package_temperature_c; }
static uint64_t sock_tjmax(const struct snapshot_socket *s) { return (uint64_t)s->tjmax_c; }
static uint64_t sock_pkg_thr(const struct snapshot_socket *s) { return s->package_thermal_throttling; }
static uint64_t sock_kthr(const struct snapshot_socket *s) { return s->kernel_package_throttles; }
static double sock_rapl_pkg(const struct snapshot_socket *s) { return s->rapl_package_throttled_s; }
static double sock_rapl_dram(const struct snapshot_socket *s) { return s->rapl_dram_throttled_s; }

static const struct socket_value socket_values[] = {
	{ sock_has_pkg_temp, false, sock_pkg_temp, NULL },
	{ sock_has_tjmax, false, sock_tjmax, NULL },
	{ sock_has_pkg_status, false, sock_pkg_thr, NULL },
	{ sock_has_kthr, false, sock_kthr, NULL },
	{ sock_has_rapl, true, NULL, sock_rapl_pkg },
	{ sock_has_rapl, true, NULL, sock_rapl_dram },
};
enum { SV_PKG_TEMP, SV_TJMAX, SV_PKG_THROTTLING, SV_KERNEL_THROTTLES, SV_RAPL_PKG, SV_RAPL_DRAM };

/* Temperatures can in principle be negative; print them signed. */
static void end_value(struct strbuf *out, uint64_t v, bool is_signed)
{
	if (is_signed)
		strbuf_printf(out, "} %" PRId64 "\n", (int64_t)v);
	else
		end_u64(out, v);
}

static void write_cores(const struct family *f, const struct snapshot *s, struct strbuf *out,
			int which)
{
	const struct core_value *cv = &core_values[which];

	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *sock = &s->sockets[i];

		for (int j = 0; j < sock->n_cores; j++) {
			if (!cv->has(&sock->cores[j]))
				continue;
			begin(out, f);
			label_int(out, "socket", sock->socket);
			label_int(out, "core", sock->cores[j].core);
			end_value(out, cv->value(&sock->cores[j]), which == CV_TEMP);
		}
	}
}

static void write_sockets(const struct family *f, const struct snapshot *s, struct strbuf *out,
			  int which)
{
	const struct socket_value *sv = &socket_values[which];

	for (int i = 0; i < s->n_sockets; i++) {
		const struct snapshot_socket *sock = &s->sockets[i];

		if (!sv->has(sock))
			continue;
		begin(out, f);
		label_int(out, "socket", sock->socket);
		if (sv->is_double)
			end_double(out, sv->dvalue(sock));
		else
			end_value(out, sv->value(sock), which == SV_PKG_TEMP || which == SV_TJMAX);
	}
}

#define CORE_WRITER(fn, which) \
	static void fn(const struct family *f, const struct snapshot *s, struct strbuf *out) \
	{ write_cores(f, s, out, which); }
#define SOCKET_WRITER(fn, which) \
	static void fn(const struct family *f, const struct snapshot *s, struct strbuf *out) \
	{ write_sockets(f, s, out, which); }

CORE_WRITER(write_core_temp, CV_TEMP)
CORE_WRITER(write_core_throttling, CV_THROTTLING)
CORE_WRITER(write_core_prochot, CV_PROCHOT)
CORE_WRITER(write_core_kernel_throttles, CV_KERNEL_THROTTLES)
SOCKET_WRITER(write_pkg_temp, SV_PKG_TEMP)
SOCKET_WRITER(write_tjmax, SV_TJMAX)
SOCKET_WRITER(write_pkg_throttling, SV_PKG_THROTTLING)
SOCKET_WRITER(write_pkg_kernel_throttles, SV_KERNEL_THROTTLES)
SOCKET_WRITER(write_rapl_pkg, SV_RAPL_PKG)
SOCKET_WRITER(write_rapl_dram, SV_RAPL_DRAM)

/* Labels socket, core, cpu of a logical CPU. */
static void cpu_labels(struct strbuf *out, const struct family *f, const struct snapshot_cpu *c)
{
	begin(out, f);
	label_int(out, "socket", c->socket);
	label_int(out, "core", c->core);
	label_int(out, "cpu", c->cpu);
}

enum { FIXED_INSTRUCTIONS, FIXED_CYCLES, FIXED_REF_CYCLES };

static void write_fixed(const struct family *f, const struct snapshot *s, struct strbuf *out,
			int which)
{
	for (int i = 0; i < s->n_cpus; i++) {
		const struct snapshot_cpu *c = &s->cpus[i];
		const bool has[] = { c->has_instructions, c->has_cycles, c->has_ref_cycles };
		const uint64_t value[] = { c->instructions, c->cycles, c->ref_cycles };

		if (!c->has_core_pmu || !has[which])
			continue;
		cpu_labels(out, f, c);
		end_u64(out, value[which]);
	}
}

#define FIXED_WRITER(fn, which) \
	static void fn(const struct family *f, const struct snapshot *s, struct strbuf *out) \
	{ write_fixed(f, s, out, which); }

FIXED_WRITER(write_instructions, FIXED_INSTRUCTIONS)
FIXED_WRITER(write_cycles, FIXED_CYCLES)
FIXED_WRITER(write_ref_cycles, FIXED_REF_CYCLES)

static void write_core_events(const struct family *f, const struct snapshot *s,
			      struct strbuf *out)
{
	for (int i = 0; i < s->n_cpus; i++) {
		const struct snapshot_cpu *c = &s->cpus[i];

		if (!c->has_core_pmu)
			continue;
		for (int j = 0; j < c->n_events; j++) {
			if (!c->events[j].available)
				continue;
			cpu_labels(out, f, c);
			label_str(out, "event", c->events[j].name);
			end_u64(out, c->events[j].total);
		}
	}
}

static const struct family families[] = {
	{ "uncored_build_info", "gauge", "Build identity of uncored; always 1.",
	  write_build_info },
	{ "uncored_cpu_info", "gauge", "Detected CPU per socket; always 1.", write_cpu_info },
	{ "uncored_collector_up", "gauge", "Whether an enabled collector is working (1) or not (0).",
	  write_collector_up },
	{ "uncored_samples_total", "counter", "Samples taken since start.", write_samples },
	{ "uncored_sample_errors_total", "counter", "Failed hardware reads per collector.",
	  write_sample_errors },
	{ "uncored_last_sample_duration_seconds", "gauge", "Time the last sample took.",
	  write_sample_duration },
	{ "uncored_uncore_events_total", "counter", "Uncore PMU event counts per socket.",
	  write_uncore_events },
	{ "uncored_uncore_clockticks_total", "counter", "Uncore fixed counter (uncore clock ticks).",
	  write_uncore_clockticks },
	{ "uncored_counter_conflicts_total", "counter",
	  "Times a counter of uncored was found reprogrammed by someone else.", write_conflicts },
	{ "uncored_core_temperature_celsius", "gauge", "Core temperature.", write_core_temp },
	{ "uncored_package_temperature_celsius", "gauge", "Package temperature.", write_pkg_temp },
	{ "uncored_tjmax_celsius", "gauge", "TCC activation temperature (TjMax).", write_tjmax },
	{ "uncored_core_thermal_throttling", "gauge",
	  "Whether the core is thermally throttled now (status bit).", write_core_throttling },
	{ "uncored_core_prochot_active", "gauge", "Whether PROCHOT# or FORCEPR# is asserted now.",
	  write_core_prochot },
	{ "uncored_package_thermal_throttling", "gauge",
	  "Whether the package is thermally throttled now (status bit).", write_pkg_throttling },
	{ "uncored_kernel_core_throttles_total", "counter",
	  "The kernel's core_throttle_count for the core.", write_core_kernel_throttles },
	{ "uncored_kernel_package_throttles_total", "counter",
	  "The kernel's package_throttle_count for the socket.", write_pkg_kernel_throttles },
	{ "uncored_rapl_package_throttled_seconds_total", "counter",
	  "Time the package was throttled by its RAPL power limit (MSR_PKG_PERF_STATUS); "
	  "power-limit throttling, not thermal.", write_rapl_pkg },
	{ "uncored_rapl_dram_throttled_seconds_total", "counter",
	  "Time DRAM was throttled by its RAPL power limit (MSR_DRAM_PERF_STATUS); "
	  "power-limit throttling, not thermal.", write_rapl_dram },
	{ "uncored_core_instructions_total", "counter", "Instructions retired (fixed counter 0).",
	  write_instructions },
	{ "uncored_core_cycles_total", "counter", "Unhalted core cycles (fixed counter 1).",
	  write_cycles },
	{ "uncored_core_ref_cycles_total", "counter",
	  "Unhalted reference cycles (fixed counter 2).", write_ref_cycles },
	{ "uncored_core_events_total", "counter", "Programmable core PMU event counts per CPU.",
	  write_core_events },
};

/* Write one family; take its HELP and TYPE back out when it had no samples. */
static void write_family(const struct family *f, const struct snapshot *s, struct strbuf *out)
{
	size_t mark = out->len, samples_at;

	strbuf_append(out, "# HELP ");
	strbuf_append(out, f->name);
	strbuf_append(out, " ");
	strbuf_append_prom_help(out, f->help);
	strbuf_printf(out, "\n# TYPE %s %s\n", f->name, f->type);
	samples_at = out->len;
	f->write(f, s, out);
	if (!out->failed && out->len == samples_at) {
		out->len = mark;
		out->buf[mark] = '\0';
	}
}

int fmt_prom_write(const struct snapshot *s, struct strbuf *out)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		write_family(&families[i], s, out);
	return out->failed ? -ENOMEM : 0;
}

int fmt_prom_cached(struct snapshot *s, const char **ret_text, size_t *ret_len)
{
	char *text = atomic_load(&s->prom_text);
	char *expected = NULL;
	struct strbuf sb;
	int r;

	if (!text) {
		strbuf_init(&sb);
		r = fmt_prom_write(s, &sb);
		if (r < 0) {
			strbuf_free(&sb);
			return r;
		}
		text = strbuf_steal(&sb, NULL);
		if (!text)
			text = strdup("");
		if (!text)
			return -ENOMEM;
		if (!atomic_compare_exchange_strong(&s->prom_text, &expected, text)) {
			free(text);
			text = expected;
		}
	}
	*ret_text = text;
	*ret_len = strlen(text);
	return 0;
}
