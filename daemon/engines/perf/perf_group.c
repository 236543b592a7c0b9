/*
 * Counting perf event groups: open one group on one CPU, start it with one
 * group ioctl, read all of it with one read(2), and turn the kernel's
 * running totals and times into per-interval deltas, multiplexing ratios
 * and scaled estimates.  It owns the group's fds and last readings; it
 * does not choose events, reopen after hotplug, or log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "perf_group.h"

/* read_format: { nr, time_enabled, time_running, { value, id } [nr] } (perf_event_open(2)). */
#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		     PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)
#define HEADER_WORDS 3

/*
 * The attr of one counting event.  Exclude bits stay clear: uncore and msr
 * PMUs refuse them (PERF_PMU_CAP_NO_EXCLUDE), and the MSR collectors count
 * user and kernel alike.
 */
static int fill_attr(const struct perf_group_event *ev, bool leader, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = ev->type;
	attr->config = ev->cfg.config[PERF_PMU_CONFIG];
	attr->config1 = ev->cfg.config[PERF_PMU_CONFIG1];
	attr->config2 = ev->cfg.config[PERF_PMU_CONFIG2];
#ifdef PERF_ATTR_SIZE_VER8
	attr->config3 = ev->cfg.config[PERF_PMU_CONFIG3];
#else
	if (ev->cfg.config[PERF_PMU_CONFIG3])
		return -EOPNOTSUPP;
#endif
	attr->read_format = READ_FORMAT;
	/* Members follow the leader: the group starts with one ioctl. */
	attr->disabled = leader;
	return 0;
}

static void describe_event(const struct perf_group_event *ev, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "'%s' (type %u, config 0x%llx", ev->name,
				       ev->type, (unsigned long long)ev->cfg.config[0]);

	for (int t = 1; t < PERF_PMU_TARGET_COUNT && used < len; t++)
		if (ev->cfg.config[t])
			used += (size_t)snprintf(buf + used, len - used, ", %s 0x%llx",
						 perf_pmu_target_name((enum perf_pmu_target)t),
						 (unsigned long long)ev->cfg.config[t]);
	if (used < len)
		snprintf(buf + used, len - used, ")");
}

static void open_error(struct perf_sys *ps, int cpu, const struct perf_group_event *ev,
		       size_t index, size_t n, int r, char *err, size_t errlen)
{
	char what[256], extra[96] = "", level[PERF_SYS_PARANOID_TEXT_MAX];

	describe_event(ev, what, sizeof(what));
	if (r == -EACCES) {
		perf_sys_paranoid_text(ps, level, sizeof(level));
		snprintf(extra, sizeof(extra), " (kernel.perf_event_paranoid is %s)", level);
	}
	else if (r == -EINVAL && n > 1)
		snprintf(extra, sizeof(extra), " (event %zu of a group of %zu)", index + 1, n);
	if (r == -EOPNOTSUPP && ev->cfg.config[PERF_PMU_CONFIG3])
		set_err(err, errlen, "cpu %d: open %s: uses config3, which this build's kernel "
			"headers cannot pass", cpu, what);
	else
		set_err(err, errlen, "cpu %d: open %s: %s%s", cpu, what,
			perf_group_hint(r, PERF_GROUP_OP_OPEN), extra);
}

static void close_members(struct perf_group *g)
{
	/* Members first, the leader last, so no member outlives its group. */
	for (size_t i = g->n; i-- > 0;) {
		perf_sys_close(g->ps, g->members[i].fd);
		g->members[i].fd = -1;
	}
}

static void free_group(struct perf_group *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->members[i].name);
	free(g->members);
	free(g->buf);
	free(g);
}

static int open_member(struct perf_group *g, size_t i, const struct perf_group_event *ev)
{
	struct perf_group_member *m = &g->members[i];
	struct perf_event_attr attr;
	int r, fd;

	r = fill_attr(ev, i == 0, &attr);
	if (r < 0)
		return r;
	fd = perf_sys_open(g->ps, &attr, g->cpu, i == 0 ? -1 : g->members[0].fd);
	if (fd < 0)
		return fd;
	m->fd = fd;
	return perf_sys_id(g->ps, fd, &m->id);
}

static struct perf_group *alloc_group(struct perf_sys *ps, int cpu,
				      const struct perf_group_event *events, size_t n)
{
	struct perf_group *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->ps = ps;
	g->cpu = cpu;
	g->members = calloc(n, sizeof(*g->members));
	g->buf = calloc(HEADER_WORDS + 2 * n, sizeof(*g->buf));
	if (!g->members || !g->buf) {
		free_group(g);
		return NULL;
	}
	g->n = n;
	for (size_t i = 0; i < n; i++) {
		g->members[i].fd = -1;
		g->members[i].name = strdup(events[i].name ? events[i].name : "?");
		if (!g->members[i].name) {
			free_group(g);
			return NULL;
		}
	}
	return g;
}

int perf_group_open(struct perf_sys *ps, int cpu, const struct perf_group_event *events,
		    size_t n, struct perf_group **ret_group, char *err, size_t errlen)
{
	struct perf_group *g;
	int r = 0;

	if (n == 0) {
		set_err(err, errlen, "cpu %d: a group needs at least one event", cpu);
		return -EINVAL;
	}
	g = alloc_group(ps, cpu, events, n);
	if (!g) {
		set_err(err, errlen, "cpu %d: out of memory", cpu);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		r = open_member(g, i, &events[i]);
		if (r < 0) {
			open_error(ps, cpu, &events[i], i, n, r, err, errlen);
			close_members(g);
			free_group(g);
			return r;
		}
	}
	*ret_group = g;
	return 0;
}

int perf_group_enable(struct perf_group *g)
{
	return perf_sys_enable(g->ps, g->members[0].fd, PERF_IOC_FLAG_GROUP);
}

int perf_group_disable(struct perf_group *g)
{
	return perf_sys_disable(g->ps, g->members[0].fd, PERF_IOC_FLAG_GROUP);
}

void perf_group_scale(uint64_t value, uint64_t enabled_ns, uint64_t running_ns,
		      struct perf_group_delta *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->value = value;
	ret->enabled_ns = enabled_ns;
	ret->running_ns = running_ns;
	if (running_ns == 0)
		return;
	if (running_ns > enabled_ns)
		running_ns = enabled_ns;
	ret->ran = true;
	ret->ratio = (double)running_ns / (double)enabled_ns;
	if (running_ns == enabled_ns) {
		ret->scaled = value;
		return;
	}
	/* value × enabled can exceed 64 bits within one interval of a fast counter. */
#ifdef __SIZEOF_INT128__
	unsigned __int128 product = (unsigned __int128)value * enabled_ns / running_ns;

	ret->scaled = product > UINT64_MAX ? UINT64_MAX : (uint64_t)product;
#else
	long double product = (long double)value * enabled_ns / running_ns;

	ret->scaled = product >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)product;
#endif
}

/* Check the answer's shape; set order[i] to the member the i-th entry belongs to. */
static int match_entries(const struct perf_group *g, ssize_t got, size_t *order)
{
	size_t want = (HEADER_WORDS + 2 * g->n) * sizeof(uint64_t);

	if (got != (ssize_t)want || g->buf[0] != g->n)
		return -EIO;
	for (size_t i = 0; i < g->n; i++) {
		uint64_t id = g->buf[HEADER_WORDS + 2 * i + 1];
		size_t k = 0;

		/* The kernel lists the leader then the members in order; search anyway. */
		if (g->members[i].id == id)
			k = i;
		else
			while (k < g->n && g->members[k].id != id)
				k++;
		if (k == g->n)
			return -EIO;
		order[i] = k;
	}
	return 0;
}

int perf_group_read(struct perf_group *g, struct perf_group_delta *deltas)
{
	size_t len = (HEADER_WORDS + 2 * g->n) * sizeof(uint64_t);
	size_t order_small[16], *order = order_small;
	uint64_t d_enabled, d_running;
	ssize_t got;
	int r;

	got = perf_sys_read(g->ps, g->members[0].fd, g->buf, len);
	if (got == 0)
		return -ENODATA;
	if (got < 0)
		return (int)got;
	if (g->n > sizeof(order_small) / sizeof(order_small[0]) &&
	    !(order = malloc(g->n * sizeof(*order))))
		return -ENOMEM;
	r = match_entries(g, got, order);
	if (r < 0)
		goto out;
	d_enabled = g->buf[1] - g->time_enabled;
	d_running = g->buf[2] - g->time_running;
	for (size_t i = 0; i < g->n; i++) {
		struct perf_group_member *m = &g->members[order[i]];
		uint64_t value = g->buf[HEADER_WORDS + 2 * i];
		struct perf_group_delta d;

		/* Counts only grow; a smaller one means the count was reset. */
		perf_group_scale(value >= m->value ? value - m->value : value,
				 d_enabled, d_running, &d);
		m->value = value;
		m->total += d.value;
		m->total_scaled += d.scaled;
		if (deltas)
			deltas[order[i]] = d;
	}
	g->time_enabled = g->buf[1];
	g->time_running = g->buf[2];
	g->n_reads++;
out:
	if (order != order_small)
		free(order);
	return r;
}

void perf_group_close(struct perf_group *g)
{
	if (!g)
		return;
	close_members(g);
	free_group(g);
}

#define ANY_OP (ERR_OP(PERF_GROUP_OP_OPEN) | ERR_OP(PERF_GROUP_OP_READ))

/*
 * perf_event_open(2) errno meanings (man page ERRORS; hardware-linux.md
 * §3.1 and §3.3).  First matching row wins.
 */
static const struct err_hint hints[] = {
	{ EACCES, ERR_OP(PERF_GROUP_OP_OPEN),
	  "permission denied: counting all tasks on a CPU needs CAP_PERFMON (Linux 5.8 and "
	  "later) or CAP_SYS_ADMIN, or kernel.perf_event_paranoid below 1; above 2 (Debian, "
	  "Ubuntu) only CAP_SYS_ADMIN: set the sysctl to 2, or grant CAP_SYS_ADMIN" },
	{ EPERM, ERR_OP(PERF_GROUP_OP_OPEN),
	  "operation not permitted: needs CAP_PERFMON, or a seccomp filter (a unit without "
	  "SystemCallFilter=perf_event_open) or a security module refuses perf_event_open" },
	{ ENODEV, ERR_OP(PERF_GROUP_OP_OPEN),
	  "the CPU is offline, or its PMU does not support this event" },
	{ ENOENT, ERR_OP(PERF_GROUP_OP_OPEN),
	  "the PMU does not know this event type or config (for an uncore PMU: no such box "
	  "on this machine)" },
	{ EINVAL, ERR_OP(PERF_GROUP_OP_OPEN),
	  "the kernel refused the event: a config bit the PMU does not accept, or more events "
	  "in the group than the PMU has counters (split the group)" },
	{ EMFILE, ERR_OP(PERF_GROUP_OP_OPEN),
	  "too many open files: each event on each CPU takes a file descriptor; raise "
	  "LimitNOFILE= (RLIMIT_NOFILE)" },
	{ ENFILE, ERR_OP(PERF_GROUP_OP_OPEN), "the system's file table is full (fs.file-max)" },
	{ EBUSY, ERR_OP(PERF_GROUP_OP_OPEN), "another user holds the PMU exclusively" },
	{ ENOSYS, ERR_OP(PERF_GROUP_OP_OPEN),
	  "this kernel has no perf_event_open (built without CONFIG_PERF_EVENTS), or a seccomp "
	  "filter hides it" },
	{ EOPNOTSUPP, ERR_OP(PERF_GROUP_OP_OPEN),
	  "the PMU does not support this kind of event (sampling or exclude bits on a "
	  "counting-only PMU)" },
	{ E2BIG, ERR_OP(PERF_GROUP_OP_OPEN),
	  "the kernel does not understand this perf_event_attr (built against newer headers)" },
	{ ENODATA, ERR_OP(PERF_GROUP_OP_READ),
	  "the group is in error state (read returned end of file, as a pinned group the PMU "
	  "could not schedule does); enable it again" },
	{ EIO, ERR_OP(PERF_GROUP_OP_READ),
	  "the kernel's group read had an unexpected size, member count or event id (a core "
	  "group whose CPU went offline and back is detached: the engine reopens it)" },
	{ EBADF, ANY_OP, "the event is closed" },
};

const char *perf_group_hint(int err, enum perf_group_op op)
{
	return ERR_HINT_FIND(hints, err, op);
}
