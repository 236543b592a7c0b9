/*
 * The human table of `uncored --once` (SPEC §9): two snapshots of the same
 * shape, printed as the state at the second one and the counter deltas
 * between them.  Per socket a header, the lines of the declared families
 * (metric.h), then one row per core; IPC is instructions over unhalted
 * cycles of the CPUs concerned (or of the core or socket where the counts
 * are summed so); then the throttle episodes of the interval and the
 * collectors.  Pure text formatting: missing values print as "-", nothing
 * is ever guessed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "table.h"
#include "metric.h"
#include "throttle_signal.h"

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

/* Instructions and cycles summed over the CPUs of one core between a and b. */
struct ipc_sum {
	uint64_t instructions;
	uint64_t cycles;
	bool any;
};

/* Add the instructions and cycles at where of scope between a and b, when both have them. */
static void ipc_add(struct ipc_sum *sum, const struct snapshot *a, const struct snapshot *b,
		    enum metric_scope scope, int where)
{
	const struct metric_sample *ia = snapshot_find_signal(a, METRIC_SIGNAL_INSTRUCTIONS, scope, where);
	const struct metric_sample *ib = snapshot_find_signal(b, METRIC_SIGNAL_INSTRUCTIONS, scope, where);
	const struct metric_sample *ca = snapshot_find_signal(a, METRIC_SIGNAL_CYCLES, scope, where);
	const struct metric_sample *cb = snapshot_find_signal(b, METRIC_SIGNAL_CYCLES, scope, where);

	if (!ia || !ib || !ca || !cb)
		return;
	sum->instructions += ib->value.u - ia->value.u;
	sum->cycles += cb->value.u - ca->value.u;
	sum->any = true;
}

static void ipc_add_cpu(struct ipc_sum *sum, const struct snapshot *a, const struct snapshot *b,
			int cpu)
{
	ipc_add(sum, a, b, METRIC_SCOPE_CPU, cpu);
}

/* The core's CPUs, or where the counts are summed per core, the core's. */
static void ipc_add_core(struct ipc_sum *sum, const struct snapshot *a, const struct snapshot *b,
			 const struct snapshot_core *c)
{
	for (int i = 0; i < c->n_cpus; i++)
		ipc_add_cpu(sum, a, b, c->cpus[i]);
	if (!sum->any && c->n_cpus > 0)
		ipc_add(sum, a, b, METRIC_SCOPE_CORE, c->cpus[0]);
}

/* "1.23", or "-" when nothing was counted. */
static const char *ipc_text(const struct ipc_sum *sum, char *buf, size_t len)
{
	if (!sum->any || sum->cycles == 0)
		return "-";
	snprintf(buf, len, "%.2f", (double)sum->instructions / (double)sum->cycles);
	return buf;
}

/* A value the table derives from, found by what it means (metric.h). */
static const struct metric_sample *signal_at(const struct snapshot *s, enum metric_signal signal,
					     enum metric_scope scope, int where)
{
	return s ? snapshot_find_signal(s, signal, scope, where) : NULL;
}

/* "45 C", or "-" without a reading. */
static void celsius_text(const struct metric_sample *v, char *buf, size_t len)
{
	if (v)
		snprintf(buf, len, "%" PRId64 " C", metric_sample_int(v));
	else
		snprintf(buf, len, "-");
}

static const char *yes_no(const struct metric_sample *v)
{
	return !v ? "-" : v->value.u ? "YES" : "no";
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

/* The flags column: the core's throttling and PROCHOT status bits. */
static const char *core_flags(const struct snapshot *s, int where)
{
	static const char *const flags[2][2] = {
		{ "ok", "PROCHOT" }, { "THROTTLING", "THROTTLING PROCHOT" },
	};
	const struct metric_sample *thr = signal_at(s, METRIC_SIGNAL_THROTTLING, METRIC_SCOPE_CORE, where);
	const struct metric_sample *hot = signal_at(s, METRIC_SIGNAL_PROCHOT, METRIC_SCOPE_CORE, where);

	if (!thr)
		return "-";
	return flags[thr->value.u != 0][hot && hot->value.u != 0];
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
	int where = cb->n_cpus > 0 ? cb->cpus[0] : -1;   /* METRIC_SCOPE_CORE */
	const struct metric_sample *kb, *ka;

	core_cpus_text(cb, cpus, sizeof(cpus));
	celsius_text(signal_at(b, METRIC_SIGNAL_TEMPERATURE, METRIC_SCOPE_CORE, where), temp,
		     sizeof(temp));
	kb = signal_at(b, METRIC_SIGNAL_THROTTLE_COUNT, METRIC_SCOPE_CORE, where);
	ka = ca ? signal_at(a, METRIC_SIGNAL_THROTTLE_COUNT, METRIC_SCOPE_CORE, where) : NULL;
	if (kb && ka)
		snprintf(kthr, sizeof(kthr), "%" PRIu64, kb->value.u - ka->value.u);
	else
		snprintf(kthr, sizeof(kthr), "-");
	ipc_add_core(&sum, a, b, cb);
	strbuf_printf(out, "  %5d  %-12s %7s  %-18s %16s %6s  %s\n", cb->core, cpus, temp,
		      core_flags(b, where), kthr, ipc_text(&sum, ipc, sizeof(ipc)),
		      core_cpu_ipcs(a, b, cb, cpu_ipcs, sizeof(cpu_ipcs)));
}

static void write_socket(const struct snapshot *a, const struct snapshot *b,
			 const struct snapshot_socket *sb, struct strbuf *out)
{
	const struct snapshot_socket *sa = find_socket(a, sb->socket);
	struct ipc_sum sum = { 0 };
	char tjmax[16], pkg[16], ipc[16];

	for (int i = 0; i < sb->n_cores; i++)
		ipc_add_core(&sum, a, b, &sb->cores[i]);
	if (!sum.any)
		ipc_add(&sum, a, b, METRIC_SCOPE_SOCKET, sb->socket);
	celsius_text(signal_at(b, METRIC_SIGNAL_TJMAX, METRIC_SCOPE_SOCKET, sb->socket), tjmax,
		     sizeof(tjmax));
	celsius_text(signal_at(b, METRIC_SIGNAL_TEMPERATURE, METRIC_SCOPE_SOCKET, sb->socket), pkg,
		     sizeof(pkg));
	strbuf_printf(out, "\nsocket %d: TjMax %s, package %s, package throttling %s, IPC %s\n",
		      sb->socket, tjmax, pkg,
		      yes_no(signal_at(b, METRIC_SIGNAL_THROTTLING, METRIC_SCOPE_SOCKET, sb->socket)),
		      ipc_text(&sum, ipc, sizeof(ipc)));
	metric_write_table_lines(a, b, sb->socket, out);
	strbuf_printf(out, "\n  %5s  %-12s %7s  %-18s %16s %6s  %s\n", "core", "cpus", "temp", "flags",
		      "kernel throttles", "IPC", "IPC per cpu");
	for (int i = 0; i < sb->n_cores; i++)
		write_core_row(a, b, find_core(sa, sb->cores[i].core), &sb->cores[i], out);
}

/*
 * One line per throttle episode seen in the interval from a to b: ended in
 * it, or still running at b.  An episode's start is the stamp of the sample
 * that first saw it, so "started" means b saw it and a did not.
 */
static void write_episodes(const struct snapshot *a, const struct snapshot *b, struct strbuf *out)
{
	bool any = false;

	for (int i = b->n_episodes - 1; i >= 0; i--) {   /* oldest first */
		const struct snapshot_episode *e = &b->episodes[i];
		char place[48];

		if (e->end != 0 && e->end < a->time)
			continue;   /* over before this interval */
		if (!any)
			strbuf_append(out, "\nepisodes:\n");
		any = true;
		if (e->core >= 0)
			snprintf(place, sizeof(place), "socket %d core %d", e->socket, e->core);
		else
			snprintf(place, sizeof(place), "socket %d", e->socket);
		strbuf_printf(out, "  %-18s %-28s ", place, e->kind);
		if (e->end != 0)
			strbuf_printf(out, "ended after %.1f s\n", e->end - e->start);
		else if (e->start > a->time)
			strbuf_append(out, "started, still running\n");
		else
			strbuf_printf(out, "still running after %.1f s\n", b->time - e->start);
	}
	if (!any)
		strbuf_append(out, "\nepisodes: none\n");
}

static void write_collectors(const struct snapshot *s, struct strbuf *out)
{
	strbuf_append(out, "\ncollectors:\n");
	for (int i = 0; i < s->n_collectors; i++) {
		const struct snapshot_collector *c = &s->collectors[i];
		const char *state = snapshot_collector_state(c);

		if (strcmp(state, "not_applicable") == 0)
			state = "not applicable";

		strbuf_printf(out, "  %-8s %-8s errors %" PRIu64 "%s%s\n", c->name ? c->name : "?",
			      state, c->errors, c->reason[0] ? ": " : "", c->reason);
	}
}

/* Which throttling signals this host sees, and why not (throttle_signal.h). */
static void write_throttling_signals(const struct snapshot *s, struct strbuf *out)
{
	struct throttle_signal_view views[THROTTLE_N_SIGNALS];

	throttle_signals_view(s, views);
	strbuf_append(out, "\nthrottling signals:\n");
	for (int i = 0; i < THROTTLE_N_SIGNALS; i++) {
		const struct throttle_signal_info *info = throttle_signal_info((enum throttle_signal)i);

		if (views[i].visible)
			strbuf_printf(out, "  %-34s seen (%s collector)\n", info->title,
				      views[i].collector);
		else
			strbuf_printf(out, "  %-34s not seen: %s\n", info->title, views[i].why_not);
	}
}

int table_write(const struct snapshot *first, const struct snapshot *second, struct strbuf *out)
{
	write_header(first, second, out);
	for (int i = 0; i < second->n_sockets; i++)
		write_socket(first, second, &second->sockets[i], out);
	write_episodes(first, second, out);
	write_collectors(second, out);
	write_throttling_signals(second, out);
	return out->failed ? -ENOMEM : 0;
}
