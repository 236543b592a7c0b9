/*
 * The human table of `uncored --once` (SPEC §9): two snapshots of the same
 * shape, printed as the state at the second one and the counter deltas
 * between them.  Per socket a block of lines, then one row per core; IPC
 * is instructions over unhalted cycles of the CPUs concerned.  Pure text
 * formatting: missing values print as "-", nothing is ever guessed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "fmt_table.h"
#include "metric.h"

static const struct snapshot_socket *find_socket(const struct snapshot *s, int socket)
{
	for (int i = 0; i < s->n_sockets; i++)
		if (s->sockets[i].socket == socket)
			return &s->sockets[i];
	return NULL;
}

static const struct snapshot_core *find_core(const struct snapshot_socket *sock, int core)
{
	for (int i = 0; sock && i < sock->n_cores; i++)
		if (sock->cores[i].core == core)
			return &sock->cores[i];
	return NULL;
}

static const struct snapshot_cpu *find_cpu(const struct snapshot *s, int cpu)
{
	for (int i = 0; i < s->n_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

static const struct snapshot_event *find_event(const struct snapshot_socket *sock, const char *name)
{
	for (int i = 0; sock && i < sock->n_uncore_events; i++)
		if (strcmp(sock->uncore_events[i].name, name) == 0)
			return &sock->uncore_events[i];
	return NULL;
}

/* Instructions and cycles summed over the CPUs of one core between a and b. */
struct ipc_sum {
	uint64_t instructions;
	uint64_t cycles;
	bool any;
};

static void ipc_add_cpu(struct ipc_sum *sum, const struct snapshot *a, const struct snapshot *b,
			int cpu)
{
	const struct snapshot_cpu *ca = find_cpu(a, cpu), *cb = find_cpu(b, cpu);

	if (!ca || !cb || !ca->has_core_pmu || !cb->has_core_pmu)
		return;
	if (!ca->has_instructions || !cb->has_instructions || !ca->has_cycles || !cb->has_cycles)
		return;
	sum->instructions += cb->instructions - ca->instructions;
	sum->cycles += cb->cycles - ca->cycles;
	sum->any = true;
}

static void ipc_add_core(struct ipc_sum *sum, const struct snapshot *a, const struct snapshot *b,
			 const struct snapshot_core *c)
{
	for (int i = 0; i < c->n_cpus; i++)
		ipc_add_cpu(sum, a, b, c->cpus[i]);
}

/* "1.23", or "-" when nothing was counted. */
static const char *ipc_text(const struct ipc_sum *sum, char *buf, size_t len)
{
	if (!sum->any || sum->cycles == 0)
		return "-";
	snprintf(buf, len, "%.2f", (double)sum->instructions / (double)sum->cycles);
	return buf;
}

static const char *yes_no(bool has, bool v)
{
	return !has ? "-" : v ? "YES" : "no";
}

static void write_header(const struct snapshot *a, const struct snapshot *b, struct strbuf *out)
{
	double interval = b->time - a->time;

	if (interval <= 0)
		interval = b->interval_s;
	strbuf_printf(out, "uncored %s: %s family %u model 0x%02x (%s), interval %.3f s\n",
		      b->version, b->cpu_id.vendor[0] ? b->cpu_id.vendor : "unknown vendor",
		      b->cpu_id.family, b->cpu_id.model,
		      b->cpu_id.microarch[0] ? b->cpu_id.microarch : "unknown microarch", interval);
}

static void write_uncore(const struct snapshot_socket *sa, const struct snapshot_socket *sb,
			 struct strbuf *out)
{
	bool ticks = sb->has_uncore_clockticks && sa && sa->has_uncore_clockticks;
	uint64_t dticks = ticks ? sb->uncore_clockticks - sa->uncore_clockticks : 0;

	if (ticks)
		strbuf_printf(out, "  %-36s %20" PRIu64 "\n", "uncore clockticks", dticks);
	else
		strbuf_printf(out, "  %-36s %20s\n", "uncore clockticks", "-");
	for (int i = 0; i < sb->n_uncore_events; i++) {
		const struct snapshot_event *eb = &sb->uncore_events[i];
		const struct snapshot_event *ea = find_event(sa, eb->name);
		uint64_t d;

		if (!eb->available) {
			strbuf_printf(out, "  %-36s unavailable: %s\n", eb->name, eb->reason);
			continue;
		}
		if (!ea || !ea->available) {
			strbuf_printf(out, "  %-36s %20s\n", eb->name, "-");
			continue;
		}
		d = eb->total - ea->total;
		strbuf_printf(out, "  %-36s %20" PRIu64, eb->name, d);
		if (strcmp(eb->name, EVENT_DRAM_THERMAL_THROTTLED) == 0 && dticks > 0)
			strbuf_printf(out, "  %6.2f %% of clockticks", 100.0 * (double)d / (double)dticks);
		strbuf_append(out, "\n");
	}
}

static void write_socket_lines(const struct snapshot_socket *sa, const struct snapshot_socket *sb,
			       struct strbuf *out)
{
	if (sb->has_uncore)
		write_uncore(sa, sb, out);
	if (sb->has_rapl && sa && sa->has_rapl)
		strbuf_printf(out, "  %-36s package %.3f s, dram %.3f s\n", "RAPL power-limit throttled",
			      sb->rapl_package_throttled_s - sa->rapl_package_throttled_s,
			      sb->rapl_dram_throttled_s - sa->rapl_dram_throttled_s);
	if (sb->has_kernel_package_throttles && sa && sa->has_kernel_package_throttles)
		strbuf_printf(out, "  %-36s %20" PRIu64 "\n", "kernel package throttles",
			      sb->kernel_package_throttles - sa->kernel_package_throttles);
}

static void core_cpus_text(const struct snapshot_core *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->n_cpus && used < len; i++) {
		int n = snprintf(buf + used, len - used, i ? ",%d" : "%d", c->cpus[i]);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

static const char *core_flags(const struct snapshot_core *c)
{
	static const char *const flags[2][2] = {
		{ "ok", "PROCHOT" }, { "THROTTLING", "THROTTLING PROCHOT" },
	};

	if (!c->has_status)
		return "-";
	return flags[c->thermal_throttling][c->prochot_active];
}

/* The IPC of each logical CPU of core c, "1.02/0.97" in the order of its cpus. */
static const char *core_cpu_ipcs(const struct snapshot *a, const struct snapshot *b,
				 const struct snapshot_core *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->n_cpus && used < len; i++) {
		struct ipc_sum sum = { 0 };
		char one[16];

		ipc_add_cpu(&sum, a, b, c->cpus[i]);
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "/" : "",
					 ipc_text(&sum, one, sizeof(one)));
	}
	return buf;
}

static void write_core_row(const struct snapshot *a, const struct snapshot *b,
			   const struct snapshot_core *ca, const struct snapshot_core *cb,
			   struct strbuf *out)
{
	char cpus[64], temp[16], kthr[24], ipc[16], cpu_ipcs[80];
	struct ipc_sum sum = { 0 };

	core_cpus_text(cb, cpus, sizeof(cpus));
	if (cb->has_temperature)
		snprintf(temp, sizeof(temp), "%d C", cb->temperature_c);
	else
		snprintf(temp, sizeof(temp), "-");
	if (cb->has_kernel_throttles && ca && ca->has_kernel_throttles)
		snprintf(kthr, sizeof(kthr), "%" PRIu64, cb->kernel_throttles - ca->kernel_throttles);
	else
		snprintf(kthr, sizeof(kthr), "-");
	ipc_add_core(&sum, a, b, cb);
	strbuf_printf(out, "  %5d  %-12s %7s  %-18s %16s %6s  %s\n", cb->core, cpus, temp,
		      core_flags(cb), kthr, ipc_text(&sum, ipc, sizeof(ipc)),
		      core_cpu_ipcs(a, b, cb, cpu_ipcs, sizeof(cpu_ipcs)));
}

static void write_socket(const struct snapshot *a, const struct snapshot *b,
			 const struct snapshot_socket *sb, struct strbuf *out)
{
	const struct snapshot_socket *sa = find_socket(a, sb->socket);
	struct ipc_sum sum = { 0 };
	char tjmax[16] = "-", pkg[16] = "-", ipc[16];

	for (int i = 0; i < sb->n_cores; i++)
		ipc_add_core(&sum, a, b, &sb->cores[i]);
	if (sb->has_tjmax)
		snprintf(tjmax, sizeof(tjmax), "%d C", sb->tjmax_c);
	if (sb->has_package_temperature)
		snprintf(pkg, sizeof(pkg), "%d C", sb->package_temperature_c);
	strbuf_printf(out, "\nsocket %d: TjMax %s, package %s, package throttling %s, IPC %s\n",
		      sb->socket, tjmax, pkg,
		      yes_no(sb->has_package_status, sb->package_thermal_throttling),
		      ipc_text(&sum, ipc, sizeof(ipc)));
	write_socket_lines(sa, sb, out);
	metric_write_table_lines(a, b, sb->socket, out);
	strbuf_printf(out, "\n  %5s  %-12s %7s  %-18s %16s %6s  %s\n", "core", "cpus", "temp", "flags",
		      "kernel throttles", "IPC", "IPC per cpu");
	for (int i = 0; i < sb->n_cores; i++)
		write_core_row(a, b, find_core(sa, sb->cores[i].core), &sb->cores[i], out);
}

static void write_collectors(const struct snapshot *s, struct strbuf *out)
{
	strbuf_append(out, "\ncollectors:\n");
	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];
		const char *state = !c->enabled ? "disabled" : c->up ? "up" : "down";

		strbuf_printf(out, "  %-8s %-8s errors %" PRIu64 "%s%s\n", c->name ? c->name : "?",
			      state, c->errors, c->reason[0] ? ": " : "", c->reason);
	}
}

int fmt_table_write(const struct snapshot *first, const struct snapshot *second, struct strbuf *out)
{
	write_header(first, second, out);
	for (int i = 0; i < second->n_sockets; i++)
		write_socket(first, second, &second->sockets[i], out);
	write_collectors(second, out);
	return out->failed ? -ENOMEM : 0;
}
