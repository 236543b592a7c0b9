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
#include "episode.h"
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
	double interval = b->mono - a->mono;

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

static double table_value(const struct metric_sample *va, const struct metric_sample *vb,
			  uint64_t *ret_u)
{
	const struct metric_family *f = vb->family;
	bool delta = f->type == METRIC_COUNTER;

	*ret_u = vb->value.u - (delta ? va->value.u : 0);
	return vb->value.d - (delta ? va->value.d : 0);
}

/* The --once table: "  " and a title in 38 columns, a space, a number in 20. */
#define TABLE_TITLE_COLUMNS 38
#define TABLE_NUMBER_WIDTH 20

/* A value of the table: right-aligned on a line of its own, else after its part name. */
static void table_number(const struct metric_family *g, const struct metric_sample *va,
			 const struct metric_sample *vb, int width, struct strbuf *out)
{
	uint64_t u;
	double d = table_value(va, vb, &u);

	if (g->kind == METRIC_DOUBLE)
		strbuf_printf(out, "%*.3f", width, d);
	else if (g->kind == METRIC_INT)
		strbuf_printf(out, "%*" PRId64, width, (int64_t)u);
	else
		strbuf_printf(out, "%*" PRIu64, width, u);
}

/*
 * The title of a table_labels_titled line: f's table title (when
 * with_title), then each label of f with its part of value (see
 * table_labels_titled), ", "-separated.
 */
static void table_label_title(const struct metric_family *f, const char *value, bool with_title,
			      struct strbuf *out)
{
	const char *name = f->label ? f->label : "";
	bool first = !with_title;

	if (with_title)
		strbuf_append(out, f->table_title ? f->table_title : f->json_key);
	while (*name) {
		size_t name_len = strcspn(name, ",");
		size_t value_len = strcspn(value, METRIC_LABEL_SEP);
		bool last = name[name_len] == '\0';

		if (value_len > 0) {
			if (last)
				strbuf_printf(out, "%s%.*s", first ? "" : ", ", (int)value_len, value);
			else
				strbuf_printf(out, "%s%.*s %.*s", first ? "" : ", ", (int)name_len, name,
					      (int)value_len, value);
			first = false;
		}
		name += name_len + !last;
		value += value_len + (value[value_len] != '\0');
	}
}

/* Whether the series vb of a throttle family counted nothing since va (or va is absent). */
static bool throttle_series_quiet(const struct metric_sample *va, const struct metric_sample *vb)
{
	uint64_t u;

	return vb->family->signal == METRIC_SIGNAL_THROTTLE_SECONDS &&
	       (!va || table_value(va, vb, &u) <= 0);
}

/*
 * The lines of labelled f at where: one per label value of b; unless
 * verbose, none for a throttle family series that counted nothing (the
 * socket's summary says so).
 */
static void table_labelled(const struct snapshot *a, const struct snapshot *b,
			   const struct metric_family *f, int where, bool verbose,
			   struct strbuf *out)
{
	for (const struct metric_sample *vb = snapshot_first_labelled(b, f, where); vb;
	     vb = snapshot_next_labelled(b, vb)) {
		const struct metric_sample *va = snapshot_find_sample(a, f, where, vb->label_value);
		const struct metric_family *p = f->table_percent_of;
		const struct metric_sample *pa, *pb;
		int width = TABLE_NUMBER_WIDTH;

		if (!verbose && throttle_series_quiet(va, vb))
			continue;

		if (f->table_labels_titled) {
			size_t mark = out->len;

			strbuf_append(out, "  ");
			table_label_title(f, vb->label_value, true, out);
			/* A long title takes from the number's field, so numbers still end in one column. */
			if (!out->failed && out->len - mark > TABLE_TITLE_COLUMNS)
				width -= (int)(out->len - mark - TABLE_TITLE_COLUMNS);
			else if (!out->failed)
				strbuf_printf(out, "%*s", (int)(TABLE_TITLE_COLUMNS - (out->len - mark)), "");
			if (width < 1)
				width = 1;
			strbuf_append(out, " ");
		} else {
			strbuf_printf(out, "  %-36s ", vb->label_value);
		}
		if (f->kind == METRIC_TEXT) {
			strbuf_printf(out, "%s: %s\n", f->table_title, vb->value.text);
			continue;
		}
		if (!va) {
			strbuf_printf(out, "%*s\n", width, "-");
			continue;
		}
		table_number(f, va, vb, width, out);
		if (f->table_labels_titled && strcmp(f->unit, "seconds") == 0)
			strbuf_append(out, " s");
		pa = p ? snapshot_find_sample(a, p, where, NULL) : NULL;
		pb = p ? snapshot_find_sample(b, p, where, NULL) : NULL;
		if (pa && pb && f->table_percent_label &&
		    strcmp(f->table_percent_label, vb->label_value) == 0 && pb->value.u > pa->value.u)
			strbuf_printf(out, "  %6.2f %% of %s",
				      100.0 * (double)(vb->value.u - va->value.u) /
				      (double)(pb->value.u - pa->value.u),
				      p->json_key ? p->json_key : p->name);
		strbuf_append(out, "\n");
	}
}

static void table_lines(const struct snapshot *a, const struct snapshot *b, int where,
			bool verbose, struct strbuf *out)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];
	size_t n = metric_families_by_json_order(families);

	for (size_t k = 0; k < n;) {
		const struct metric_family *f = families[k];
		size_t end = k + 1, mark = out->len;
		bool whole = true;

		if (f->scope != METRIC_SCOPE_SOCKET || !f->table_title) {
			k++;
			continue;
		}
		if (f->label) {
			table_labelled(a, b, f, where, verbose, out);
			k++;
			continue;
		}
		/* Families that share f's line. */
		while (f->table_part && end < n && families[end]->table_part &&
		       families[end]->table_title && strcmp(families[end]->table_title, f->table_title) == 0)
			end++;
		strbuf_printf(out, "  %-36s", f->table_title);
		for (size_t i = k; i < end; i++) {
			const struct metric_family *g = families[i];
			const struct metric_sample *va = snapshot_find_sample(a, g, where, NULL);
			const struct metric_sample *vb = snapshot_find_sample(b, g, where, NULL);

			if (!va || !vb) {
				whole = g->json_null && g->json_group && end == k + 1 &&
					snapshot_json_group_has_value(b, families, n, g, where);
				if (whole)
					strbuf_printf(out, " %20s", "-");
				break;
			}
			if (g->table_part)
				strbuf_printf(out, "%s %s ", i > k ? "," : "", g->table_part);
			else
				strbuf_append(out, " ");
			table_number(g, va, vb, g->table_part ? 0 : TABLE_NUMBER_WIDTH, out);
			if (g->table_part && strcmp(g->unit, "seconds") == 0)
				strbuf_append(out, " s");
		}
		if (whole) {
			strbuf_append(out, "\n");
		} else if (!out->failed) {
			out->len = mark;
			out->buf[mark] = '\0';
		}
		k = end;
	}
}

/* "hottest core": the core of sb whose temperature at b is highest. */
static void write_hottest_core(const struct snapshot *b, const struct snapshot_socket *sb,
			       struct strbuf *out)
{
	const struct metric_sample *hot = NULL;
	int core = -1;

	for (int i = 0; i < sb->n_cores; i++) {
		const struct snapshot_core *c = &sb->cores[i];
		const struct metric_sample *v = c->n_cpus > 0 ?
			signal_at(b, METRIC_SIGNAL_TEMPERATURE, METRIC_SCOPE_CORE, c->cpus[0]) : NULL;

		if (v && (!hot || metric_sample_int(v) > metric_sample_int(hot))) {
			hot = v;
			core = c->core;
		}
	}
	if (hot)
		strbuf_printf(out, "  %-36s core %d, %" PRId64 " C\n", "hottest core", core,
			      metric_sample_int(hot));
}

/* The socket-scope family that means signal (metric.h), or NULL where no collector declares one. */
static const struct metric_family *socket_family_of(enum metric_signal signal)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];
	size_t n = metric_families_by_json_order(families);

	for (size_t i = 0; i < n; i++)
		if (families[i]->signal == signal && families[i]->scope == METRIC_SCOPE_SOCKET)
			return families[i];
	return NULL;
}

/*
 * Where a socket has named temperature sensors instead of a package sensor
 * (AMD k10temp): the first one (Tctl) and the hottest of the others.
 */
static void write_sensor_temperatures(const struct snapshot *b, int where, struct strbuf *out)
{
	const struct metric_family *f = socket_family_of(METRIC_SIGNAL_SENSOR_TEMPERATURE);
	const struct metric_sample *first = f ? snapshot_first_labelled(b, f, where) : NULL;
	const struct metric_sample *hot = NULL;
	int others = 0;

	if (!first)
		return;
	for (const struct metric_sample *v = snapshot_next_labelled(b, first); v;
	     v = snapshot_next_labelled(b, v)) {
		others++;
		if (!hot || v->value.d > hot->value.d)
			hot = v;
	}
	strbuf_printf(out, "  %-36s %s %g C", "temperature sensors", first->label_value,
		      first->value.d);
	if (hot)
		strbuf_printf(out, ", hottest of %d more: %s %g C", others, hot->label_value,
			      hot->value.d);
	strbuf_append(out, "\n");
}

/* "channel 3 slot 0" from a DIMM label value that starts channel, slot. */
static void dimm_place(const char *value, struct strbuf *out)
{
	size_t ch = strcspn(value, METRIC_LABEL_SEP);
	const char *slot = value[ch] ? value + ch + 1 : "";

	strbuf_printf(out, "channel %.*s slot %.*s", (int)ch, value,
		      (int)strcspn(slot, METRIC_LABEL_SEP), slot);
}

/* DIMMs at twice the refresh rate listed by name, the rest counted. */
#define TABLE_HOT_DIMMS 4

/*
 * Where a socket reports its DIMMs (AMD HSMP): the hottest DIMM sensor,
 * and which DIMMs run at twice the refresh rate (hot), or that none does.
 */
static void write_dimms(const struct snapshot *b, int where, struct strbuf *out)
{
	const struct metric_family *temp = socket_family_of(METRIC_SIGNAL_DIMM_TEMPERATURE);
	const struct metric_family *refresh = socket_family_of(METRIC_SIGNAL_DIMM_REFRESH);
	const struct metric_sample *hot = NULL;
	int n_refresh = 0, n_double = 0;

	for (const struct metric_sample *v = temp ? snapshot_first_labelled(b, temp, where) : NULL; v;
	     v = snapshot_next_labelled(b, v))
		if (!hot || v->value.d > hot->value.d)
			hot = v;
	if (!hot && !(refresh && snapshot_first_labelled(b, refresh, where)))
		return;
	strbuf_printf(out, "  %-36s ", "DIMM temperature");
	if (hot) {
		strbuf_append(out, "hottest ");
		dimm_place(hot->label_value, out);
		strbuf_printf(out, ": %g C", hot->value.d);
	} else {
		strbuf_append(out, "-");
	}
	for (const struct metric_sample *v = refresh ? snapshot_first_labelled(b, refresh, where) : NULL;
	     v; v = snapshot_next_labelled(b, v)) {
		n_refresh++;
		if (v->value.u < 2)
			continue;
		if (n_double < TABLE_HOT_DIMMS) {
			strbuf_append(out, n_double ? ", " : "; refresh 2x: ");
			dimm_place(v->label_value, out);
		}
		n_double++;
	}
	if (n_double > TABLE_HOT_DIMMS)
		strbuf_printf(out, " and %d more", n_double - TABLE_HOT_DIMMS);
	else if (n_double == 0 && n_refresh > 0)
		strbuf_printf(out, "; refresh 1x on all %d", n_refresh);
	strbuf_append(out, "\n");
}

/*
 * One line per throttle family title (every family of it, whatever its
 * labels): the series that counted the most seconds in the interval, by
 * its labels, or "0 s in all N series".  A family no collector adds here
 * has no line (the throttling signals say why).
 */
static void write_throttle_summary(const struct snapshot *a, const struct snapshot *b,
				   int where, struct strbuf *out)
{
	const struct metric_family *families[METRIC_MAX_FAMILIES];
	size_t n = metric_families_by_json_order(families);

	for (size_t k = 0; k < n; k++) {
		const struct metric_family *f = families[k];
		const struct metric_sample *worst = NULL;
		double worst_s = 0;
		int series = 0;
		bool done = false;

		if (f->signal != METRIC_SIGNAL_THROTTLE_SECONDS || !f->table_title ||
		    f->scope != METRIC_SCOPE_SOCKET)
			continue;
		for (size_t j = 0; j < k && !done; j++)
			done = families[j]->signal == METRIC_SIGNAL_THROTTLE_SECONDS &&
			       families[j]->table_title &&
			       strcmp(families[j]->table_title, f->table_title) == 0;
		for (size_t j = k; j < n && !done; j++) {
			const struct metric_family *g = families[j];

			if (g->signal != METRIC_SIGNAL_THROTTLE_SECONDS || !g->table_title ||
			    strcmp(g->table_title, f->table_title) != 0)
				continue;
			for (const struct metric_sample *vb = snapshot_first_labelled(b, g, where); vb;
			     vb = snapshot_next_labelled(b, vb)) {
				const struct metric_sample *va =
					snapshot_find_sample(a, g, where, vb->label_value);
				uint64_t u;
				double d = va ? table_value(va, vb, &u) : 0;

				series++;
				if (d > worst_s) {
					worst_s = d;
					worst = vb;
				}
			}
		}
		if (done || series == 0)
			continue;
		strbuf_printf(out, "  %-36s ", f->table_title);
		if (worst) {
			table_label_title(worst->family, worst->label_value, false, out);
			strbuf_printf(out, "%s%.3f s\n", worst->label_value[0] ? ": " : "", worst_s);
		} else {
			strbuf_printf(out, "0 s in all %d series\n", series);
		}
	}
}

/* Whether core cb is worth a row without --verbose: flagged, or throttled by the kernel. */
static bool core_row_matters(const struct snapshot *a, const struct snapshot *b,
			     const struct snapshot_core *ca, const struct snapshot_core *cb)
{
	int where = cb->n_cpus > 0 ? cb->cpus[0] : -1;
	const struct metric_sample *kb = signal_at(b, METRIC_SIGNAL_THROTTLE_COUNT,
						   METRIC_SCOPE_CORE, where);
	const struct metric_sample *ka = ca ? signal_at(a, METRIC_SIGNAL_THROTTLE_COUNT,
							METRIC_SCOPE_CORE, where) : NULL;
	const char *flags = core_flags(b, where);

	return (strcmp(flags, "ok") != 0 && strcmp(flags, "-") != 0) ||
	       (ka && kb && kb->value.u != ka->value.u);
}

static void write_socket(const struct snapshot *a, const struct snapshot *b,
			 const struct snapshot_socket *sb, bool verbose, struct strbuf *out)
{
	int hidden = 0;

	const struct snapshot_socket *sa = find_socket(a, sb->socket);
	struct ipc_sum sum = { 0 };
	char tjmax[16], pkg[16], ipc[16];
	const struct metric_sample *t, *p, *th;

	for (int i = 0; i < sb->n_cores; i++)
		ipc_add_core(&sum, a, b, &sb->cores[i]);
	if (!sum.any)
		ipc_add(&sum, a, b, METRIC_SCOPE_SOCKET, sb->socket);
	t = signal_at(b, METRIC_SIGNAL_TJMAX, METRIC_SCOPE_SOCKET, sb->socket);
	p = signal_at(b, METRIC_SIGNAL_TEMPERATURE, METRIC_SCOPE_SOCKET, sb->socket);
	th = signal_at(b, METRIC_SIGNAL_THROTTLING, METRIC_SCOPE_SOCKET, sb->socket);
	strbuf_printf(out, "\nsocket %d: ", sb->socket);
	/* None of the three: a CPU without them (AMD), said once under "collectors". */
	if (t || p || th) {
		celsius_text(t, tjmax, sizeof(tjmax));
		celsius_text(p, pkg, sizeof(pkg));
		strbuf_printf(out, "TjMax %s, package %s, package throttling %s, ", tjmax, pkg,
			      yes_no(th));
	}
	strbuf_printf(out, "IPC %s\n", ipc_text(&sum, ipc, sizeof(ipc)));
	write_hottest_core(b, sb, out);
	write_sensor_temperatures(b, sb->socket, out);
	write_throttle_summary(a, b, sb->socket, out);
	write_dimms(b, sb->socket, out);
	table_lines(a, b, sb->socket, verbose, out);
	for (int i = 0; i < sb->n_cores; i++) {
		const struct snapshot_core *ca = find_core(sa, sb->cores[i].core);

		if (!verbose && !core_row_matters(a, b, ca, &sb->cores[i])) {
			hidden++;
			continue;
		}
		if (i - hidden == 0)
			strbuf_printf(out, "\n  %5s  %-12s %7s  %-18s %16s %6s  %s\n", "core", "cpus",
				      "temp", "flags", "kernel throttles", "IPC", "IPC per cpu");
		write_core_row(a, b, ca, &sb->cores[i], out);
	}
	if (hidden > 0)
		strbuf_printf(out, "  %d %s neither throttling nor PROCHOT (--verbose lists %s)\n",
			      hidden, hidden == 1 ? "core" : "cores", hidden == 1 ? "it" : "them");
}

/* Episode lines shown without --verbose; the rest are counted. */
#define TABLE_BRIEF_EPISODES 8

/*
 * One line per throttle episode seen in the interval from a to b: ended in
 * it, or still running at b; without verbose the first
 * TABLE_BRIEF_EPISODES, then how many more.  An episode's start is the
 * stamp of the sample that first saw it, so "started" means b saw it and a
 * did not.
 */
static void write_episodes(const struct snapshot *a, const struct snapshot *b, bool verbose,
			   struct strbuf *out)
{
	bool any = false;
	int n_shown = 0, n_more = 0;

	for (int i = b->n_episodes - 1; i >= 0; i--) {   /* oldest first */
		const struct snapshot_episode *e = &b->episodes[i];
		char place[96], what[128];

		if (e->end != 0 && e->end < a->time)
			continue;   /* over before this interval */
		if (!any)
			strbuf_append(out, "\nepisodes:\n");
		any = true;
		if (!verbose && n_shown == TABLE_BRIEF_EPISODES) {
			n_more++;
			continue;
		}
		n_shown++;
		episode_describe(e, place, sizeof(place), what, sizeof(what));
		strbuf_printf(out, "  %s: %s ", place, what);
		if (e->end != 0)
			strbuf_printf(out, "ended after %.1f s\n", e->end - e->start);
		else if (e->start > a->time)
			strbuf_append(out, "started, still running\n");
		else
			strbuf_printf(out, "still running after %.1f s\n", e->running_s);
	}
	if (n_more)
		strbuf_printf(out, "  %d more (--verbose lists them)\n", n_more);
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

int table_write_brief(const struct snapshot *first, const struct snapshot *second, bool verbose,
		      struct strbuf *out)
{
	write_header(first, second, out);
	for (int i = 0; i < second->n_sockets; i++)
		write_socket(first, second, &second->sockets[i], verbose, out);
	write_episodes(first, second, verbose, out);
	write_collectors(second, out);
	write_throttling_signals(second, out);
	return out->failed ? -ENOMEM : 0;
}

int table_write(const struct snapshot *first, const struct snapshot *second, struct strbuf *out)
{
	return table_write_brief(first, second, true, out);
}
