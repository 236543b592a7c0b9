/*
 * Scenario files for the simulated hardware, and the timelines built from
 * them.  The parser turns an ini file into a flat list of rules and checks
 * everything that does not depend on the machine model (numbers, ranges,
 * windows inside the period, required keys); sim_build.c checks sockets, cores
 * and CPUs against the model.  Errors read "FILE:LINE: key: what was
 * expected"; the first one is reported.  Timelines are the exact
 * piecewise-constant functions of time the simulator integrates.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "sim_scenario.h"

#define MAX_CYCLES_PER_RULE 4096
#define MAX_SECONDS         1e7

const struct sim_load sim_load_default = {
	.busy = 0.1, .ghz = 0, .ipc = 1.0, .llc_refs = 0.02, .llc_misses = 0.005,
	.branches = 0.2, .branch_misses = 0.004,
};

static const char *const kind_names[SIM_RULE_KIND_COUNT] = {
	[SIM_RULE_DRAM_THROTTLE] = "dram-throttle",
	[SIM_RULE_TEMPERATURE] = "temperature",
	[SIM_RULE_PROCHOT] = "prochot",
	[SIM_RULE_CORE_THROTTLE] = "core-throttle",
	[SIM_RULE_POWER_LIMIT] = "power-limit",
	[SIM_RULE_PRESET] = "preset",
	[SIM_RULE_REWRITE] = "rewrite",
	[SIM_RULE_OFFLINE] = "offline",
	[SIM_RULE_LOAD] = "load",
	[SIM_RULE_PERF_CORE] = "perf-core",
	[SIM_RULE_PERF_UNCORE] = "perf-uncore",
	[SIM_RULE_GLOBAL_DISABLE] = "global-disable",
	[SIM_RULE_DRAM_CRITICAL] = "dram-critical",
};

#define K(kind) (1u << (kind))
#define K_DRAM (K(SIM_RULE_DRAM_THROTTLE) | K(SIM_RULE_DRAM_CRITICAL))
#define K_WINDOWED (K_DRAM | K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_PROCHOT) | \
		    K(SIM_RULE_CORE_THROTTLE) | K(SIM_RULE_POWER_LIMIT) | K(SIM_RULE_OFFLINE) | \
		    K(SIM_RULE_LOAD) | K_PERF)
#define K_PERF (K(SIM_RULE_PERF_CORE) | K(SIM_RULE_PERF_UNCORE) | K(SIM_RULE_GLOBAL_DISABLE))
#define K_SOCKET (K_DRAM | K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_PROCHOT) | \
		  K(SIM_RULE_CORE_THROTTLE) | K(SIM_RULE_POWER_LIMIT) | K(SIM_RULE_PRESET) | \
		  K(SIM_RULE_REWRITE) | K(SIM_RULE_PERF_UNCORE) | K(SIM_RULE_GLOBAL_DISABLE))
#define K_REGISTER (K(SIM_RULE_PRESET) | K(SIM_RULE_REWRITE))
#define K_PERF_EVENT (K(SIM_RULE_PERF_CORE) | K(SIM_RULE_PERF_UNCORE))

enum key_type {
	KEY_ID_OR_ALL,     /* int field: a number >= 0 or "all" */
	KEY_SECONDS,       /* int64_t nanoseconds */
	KEY_REAL,          /* double in [min, max] */
	KEY_CELSIUS,       /* int in [min, max] */
	KEY_DOMAIN,
	KEY_MSR,           /* uint32_t */
	KEY_U64,
	KEY_COUNTER,       /* int: a counter index or 'fixed' (SIM_FIXED) */
	KEY_PMU,           /* bool: 'core' or 'uncore' */
};

struct key_desc {
	const char *name;
	unsigned kinds;      /* rule kinds that take it */
	unsigned required;   /* rule kinds that need it */
	enum key_type type;
	size_t offset;
	double min, max;
};

#define OFF(field) offsetof(struct sim_rule, field)

static const struct key_desc keys[] = {
	{ "socket", K_SOCKET, K_SOCKET & ~K_REGISTER & ~K(SIM_RULE_GLOBAL_DISABLE), KEY_ID_OR_ALL,
	  OFF(socket), 0, 0 },
	{ "core", K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_CORE_THROTTLE),
	  K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_CORE_THROTTLE), KEY_ID_OR_ALL, OFF(core), 0, 0 },
	{ "cpu", K(SIM_RULE_OFFLINE) | K(SIM_RULE_LOAD) | K_REGISTER | K(SIM_RULE_PERF_CORE) |
	  K(SIM_RULE_GLOBAL_DISABLE), K(SIM_RULE_OFFLINE) | K(SIM_RULE_LOAD) | K(SIM_RULE_PERF_CORE),
	  KEY_ID_OR_ALL, OFF(cpu), 0, 0 },
	{ "channel", K_DRAM, 0, KEY_ID_OR_ALL, OFF(channel), 0, 0 },
	{ "start", K_WINDOWED, 0, KEY_SECONDS, OFF(start_ns), 0, 0 },
	{ "end", K_WINDOWED, 0, KEY_SECONDS, OFF(end_ns), 0, 0 },
	{ "duty", K_WINDOWED, 0, KEY_REAL, OFF(duty), 0, 1 },
	{ "cycle", K_WINDOWED, 0, KEY_SECONDS, OFF(cycle_ns), 0, 0 },
	{ "celsius", K(SIM_RULE_TEMPERATURE), K(SIM_RULE_TEMPERATURE), KEY_CELSIUS, OFF(celsius),
	  -40, 150 },
	{ "domain", K(SIM_RULE_POWER_LIMIT), K(SIM_RULE_POWER_LIMIT), KEY_DOMAIN, OFF(domain), 0, 0 },
	{ "msr", K_REGISTER, K_REGISTER, KEY_MSR, OFF(msr), 0, 0 },
	{ "value", K_REGISTER | K_PERF_EVENT, K_REGISTER | K(SIM_RULE_PERF_CORE), KEY_U64,
	  OFF(value), 0, 0 },
	{ "counter", K_PERF_EVENT, K_PERF_EVENT, KEY_COUNTER, OFF(counter), 0, 0 },
	{ "pmu", K(SIM_RULE_GLOBAL_DISABLE), K(SIM_RULE_GLOBAL_DISABLE), KEY_PMU, OFF(uncore), 0, 0 },
	{ "at", K(SIM_RULE_REWRITE), K(SIM_RULE_REWRITE), KEY_SECONDS, OFF(at_ns), 0, 0 },
	{ "busy", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.busy), 0, 1 },
	{ "ghz", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.ghz), 0.1, 10 },
	{ "ipc", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.ipc), 0, 8 },
	{ "llc_refs", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.llc_refs), 0, 1 },
	{ "llc_misses", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.llc_misses), 0, 1 },
	{ "branches", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.branches), 0, 1 },
	{ "branch_misses", K(SIM_RULE_LOAD), 0, KEY_REAL, OFF(load.branch_misses), 0, 1 },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))
_Static_assert(N_KEYS <= SIM_RULE_MAX_KEYS, "key_line too small");

struct parse_ctx {
	FILE *f;
	int line;
	int section_line;
	bool at_line_start;
	struct sim_scenario *scn;
	struct sim_rule *cur;            /* rule of the current section, NULL in [scenario] */
	char cur_section[64];
	bool in_scenario_section;
	unsigned scenario_keys_seen;
	char *err;
	size_t errlen;
	int err_line;                    /* 0 until the first error */
};

void sim_scenario_error(const struct sim_scenario *scn, int line, const char *key, char *err,
			size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, errlen, "%s:%d: %s: ", scn->file, line, key);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Record an error at the current line unless one was recorded already. */
static int fail(struct parse_ctx *ctx, int line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct parse_ctx *ctx, int line, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (ctx->err_line)
		return 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->err_line = line;
	sim_scenario_error(ctx->scn, line, key, ctx->err, ctx->errlen, "%s", msg);
	return 0;
}

/* inih reader: fgets that counts lines and notes where each section starts. */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	const char *p;
	size_t len;

	if (!fgets(str, num, ctx->f))
		return NULL;
	if (ctx->at_line_start) {
		ctx->line++;
		for (p = str; *p == ' ' || *p == '\t'; p++)
			;
		if (*p == '[')
			ctx->section_line = ctx->line;
	}
	len = strlen(str);
	ctx->at_line_start = len > 0 && str[len - 1] == '\n';
	if (!ctx->at_line_start && !feof(ctx->f))
		fail(ctx, ctx->line, "syntax", "expected lines of at most %d characters", num - 2);
	return str;
}

static bool parse_int(const char *s, long min, long max, long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

static bool parse_real(const char *s, double min, double max, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
		return false;
	*ret = v;
	return true;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (*s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v > max)
		return false;
	*ret = v;
	return true;
}

static bool parse_seconds(const char *s, int64_t *ret_ns)
{
	double v;

	if (!parse_real(s, 0, MAX_SECONDS, &v))
		return false;
	*ret_ns = llround(v * (double)SIM_NS_PER_S);
	return true;
}

/* Store value of key k into rule; false with *ret_expect set when malformed. */
static bool store_key(const struct key_desc *k, struct sim_rule *rule, const char *value,
		      const char **ret_expect)
{
	char *field = (char *)rule + k->offset;
	long l;
	uint64_t u;
	double d;

	switch (k->type) {
	case KEY_ID_OR_ALL:
		*ret_expect = "expected a number from 0 or 'all'";
		if (strcmp(value, "all") == 0) {
			*(int *)field = SIM_ALL;
			return true;
		}
		if (!parse_int(value, 0, 100000, &l))
			return false;
		*(int *)field = (int)l;
		return true;
	case KEY_SECONDS:
		*ret_expect = "expected seconds, a number from 0 to 10000000";
		return parse_seconds(value, (int64_t *)field);
	case KEY_REAL:
		*ret_expect = k->max == 1 && k->min == 0 ? "expected a number from 0 to 1" :
			      k->max == 8 ? "expected a number from 0 to 8" :
			      "expected a number from 0.1 to 10";
		if (!parse_real(value, k->min, k->max, &d))
			return false;
		*(double *)field = d;
		return true;
	case KEY_CELSIUS:
		*ret_expect = "expected whole degrees from -40 to 150";
		if (!parse_int(value, (long)k->min, (long)k->max, &l))
			return false;
		*(int *)field = (int)l;
		return true;
	case KEY_DOMAIN:
		*ret_expect = "expected 'package' or 'dram'";
		if (strcmp(value, "package") && strcmp(value, "dram"))
			return false;
		*(enum sim_power_domain *)field = strcmp(value, "dram") == 0 ? SIM_DOMAIN_DRAM :
									   SIM_DOMAIN_PACKAGE;
		return true;
	case KEY_MSR:
		*ret_expect = "expected a register address from 0 to 0xffffffff";
		if (!parse_u64(value, UINT32_MAX, &u))
			return false;
		*(uint32_t *)field = (uint32_t)u;
		return true;
	case KEY_U64:
		*ret_expect = "expected an unsigned 64-bit number (decimal or 0x hex)";
		return parse_u64(value, UINT64_MAX, (uint64_t *)field);
	case KEY_COUNTER:
		*ret_expect = "expected a counter number from 0, or 'fixed'";
		if (strcmp(value, "fixed") == 0) {
			*(int *)field = SIM_FIXED;
			return true;
		}
		if (!parse_int(value, 0, 63, &l))
			return false;
		*(int *)field = (int)l;
		return true;
	case KEY_PMU:
		*ret_expect = "expected 'core' or 'uncore'";
		if (strcmp(value, "core") && strcmp(value, "uncore"))
			return false;
		*(bool *)field = strcmp(value, "uncore") == 0;
		return true;
	}
	return false;
}

static void rule_defaults(struct sim_rule *rule)
{
	memset(rule, 0, sizeof(*rule));
	rule->socket = SIM_UNSET;
	rule->core = SIM_UNSET;
	rule->cpu = SIM_UNSET;
	rule->channel = SIM_UNSET;
	rule->end_ns = SIM_FOREVER;
	rule->duty = 1.0;
	rule->cycle_ns = SIM_NS_PER_S;
	rule->load = sim_load_default;
}

/* Copy src into dst of size len, cut and terminated. */
static void copy_name(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int kind_of(const char *name, size_t len)
{
	for (int i = 0; i < SIM_RULE_KIND_COUNT; i++)
		if (strlen(kind_names[i]) == len && strncmp(kind_names[i], name, len) == 0)
			return i;
	return -1;
}

/* "KIND.N" → kind, or -1. */
static int parse_section_name(const char *section)
{
	const char *dot = strrchr(section, '.');
	long n;

	if (!dot || !parse_int(dot + 1, 1, 1000000, &n))
		return -1;
	return kind_of(section, (size_t)(dot - section));
}

static int begin_section(struct parse_ctx *ctx, const char *section, const char *name)
{
	char key[80];
	struct sim_rule *rules;
	int kind;

	copy_name(ctx->cur_section, sizeof(ctx->cur_section), section);
	ctx->cur = NULL;
	ctx->in_scenario_section = strcmp(section, "scenario") == 0;
	if (ctx->in_scenario_section)
		return 1;
	snprintf(key, sizeof(key), "[%s]", section);
	kind = parse_section_name(section);
	if (kind < 0 || strlen(section) >= sizeof(ctx->cur->section))
		return fail(ctx, ctx->section_line, key, "expected [scenario] or [KIND.N] with KIND "
			    "one of dram-throttle, temperature, prochot, core-throttle, power-limit, "
			    "preset, rewrite, offline, load, perf-core, perf-uncore, "
			    "global-disable, dram-critical");
	for (int i = 0; i < ctx->scn->n_rules; i++)
		if (strcmp(ctx->scn->rules[i].section, section) == 0)
			return fail(ctx, ctx->section_line, key, "section given twice");
	rules = realloc(ctx->scn->rules, sizeof(*rules) * (size_t)(ctx->scn->n_rules + 1));
	if (!rules)
		return fail(ctx, ctx->line, name, "out of memory");
	ctx->scn->rules = rules;
	ctx->cur = &rules[ctx->scn->n_rules++];
	rule_defaults(ctx->cur);
	ctx->cur->kind = (enum sim_rule_kind)kind;
	ctx->cur->section_line = ctx->section_line;
	copy_name(ctx->cur->section, sizeof(ctx->cur->section), section);
	return 1;
}

static int scenario_key(struct parse_ctx *ctx, const char *name, const char *value)
{
	static const char *const names[] = { "description", "period", "writes",
					     "kernel_thermal_throttle" };
	struct sim_scenario *scn = ctx->scn;
	unsigned i;

	for (i = 0; i < 4 && strcmp(names[i], name); i++)
		;
	if (i == 4)
		return fail(ctx, ctx->line, name, "unknown key in [scenario], expected description, "
			    "period, writes or kernel_thermal_throttle");
	if (ctx->scenario_keys_seen & (1u << i))
		return fail(ctx, ctx->line, name, "key given twice");
	ctx->scenario_keys_seen |= 1u << i;
	if (i == 0) {
		snprintf(scn->description, sizeof(scn->description), "%s", value);
	} else if (i == 1) {
		if (!parse_seconds(value, &scn->period_ns) ||
		    (scn->period_ns && scn->period_ns < SIM_MIN_PERIOD_NS))
			return fail(ctx, ctx->line, name, "expected 0 (run once) or seconds from "
				    "%g to 10000000",
				    (double)SIM_MIN_PERIOD_NS / (double)SIM_NS_PER_S);
	} else if (i == 2) {
		if (strcmp(value, "allowed") && strcmp(value, "refused"))
			return fail(ctx, ctx->line, name, "expected 'allowed' or 'refused'");
		scn->refuse_writes = strcmp(value, "refused") == 0;
	} else {
		if (strcmp(value, "yes") && strcmp(value, "no"))
			return fail(ctx, ctx->line, name, "expected 'yes' or 'no'");
		scn->kernel_thermal_throttle = strcmp(value, "yes") == 0;
	}
	return 1;
}

static int rule_key(struct parse_ctx *ctx, const char *name, const char *value)
{
	struct sim_rule *rule = ctx->cur;
	const char *expect = "";

	for (size_t i = 0; i < N_KEYS; i++) {
		const struct key_desc *k = &keys[i];

		if (strcmp(k->name, name) || !(k->kinds & K(rule->kind)))
			continue;
		if (rule->key_line[i])
			return fail(ctx, ctx->line, name, "key given twice");
		if (!store_key(k, rule, value, &expect))
			return fail(ctx, ctx->line, name, "%s, got '%s'", expect, value);
		rule->key_line[i] = ctx->line;
		return 1;
	}
	return fail(ctx, ctx->line, name, "unknown key in [%s]", rule->section);
}

static int handle(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;

	if (ctx->err_line)
		return 1;
	if (!*section)
		return fail(ctx, ctx->line, name, "expected a [section] before the first key");
	if (strcmp(section, ctx->cur_section) || (!ctx->cur && !ctx->in_scenario_section)) {
		if (!begin_section(ctx, section, name))
			return 0;
	}
	if (ctx->in_scenario_section)
		return scenario_key(ctx, name, value);
	return rule_key(ctx, name, value);
}

int sim_rule_line(const struct sim_rule *rule, const char *key)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(keys[i].name, key) == 0 && rule->key_line[i])
			return rule->key_line[i];
	return rule->section_line;
}

static bool rule_has(const struct sim_rule *rule, const char *key)
{
	return sim_rule_line(rule, key) != rule->section_line;
}

static int check_required(struct parse_ctx *ctx, const struct sim_rule *rule)
{
	bool has_cpu = rule_has(rule, "cpu"), has_socket = rule_has(rule, "socket");

	for (size_t i = 0; i < N_KEYS; i++)
		if ((keys[i].required & K(rule->kind)) && !rule->key_line[i])
			return fail(ctx, rule->section_line, keys[i].name, "missing in [%s]",
				    rule->section);
	if ((K(rule->kind) & K_REGISTER) && has_cpu == has_socket)
		return fail(ctx, rule->section_line, "cpu", "expected exactly one of cpu or socket "
			    "in [%s]", rule->section);
	if (rule->kind == SIM_RULE_GLOBAL_DISABLE && (rule->uncore ? !has_socket || has_cpu :
						      !has_cpu || has_socket))
		return fail(ctx, rule->section_line, rule->uncore ? "socket" : "cpu",
			    "expected %s (and not %s) with pmu = %s in [%s]",
			    rule->uncore ? "socket" : "cpu", rule->uncore ? "cpu" : "socket",
			    rule->uncore ? "uncore" : "core", rule->section);
	if (rule->kind == SIM_RULE_PERF_CORE && rule->counter == SIM_FIXED)
		return fail(ctx, sim_rule_line(rule, "counter"), "counter",
			    "expected a GP counter number (perf-core takes GP counters)");
	if (rule->kind == SIM_RULE_PERF_UNCORE && rule->counter != SIM_FIXED &&
	    !rule_has(rule, "value"))
		return fail(ctx, rule->section_line, "value", "missing in [%s] (needed unless "
			    "counter = fixed)", rule->section);
	return 1;
}

static int check_window(struct parse_ctx *ctx, const struct sim_rule *rule)
{
	int64_t period = ctx->scn->period_ns;
	int64_t end = rule->end_ns == SIM_FOREVER ? period : rule->end_ns;

	if (rule->end_ns != SIM_FOREVER && rule->end_ns <= rule->start_ns)
		return fail(ctx, sim_rule_line(rule, "end"), "end", "expected a time after start");
	if (period && rule->start_ns >= period)
		return fail(ctx, sim_rule_line(rule, "start"), "start",
			    "expected a time before the period's end");
	if (period && rule->end_ns != SIM_FOREVER && rule->end_ns > period)
		return fail(ctx, sim_rule_line(rule, "end"), "end",
			    "expected a time at most the period");
	if (period && rule->kind == SIM_RULE_REWRITE && rule->at_ns >= period)
		return fail(ctx, sim_rule_line(rule, "at"), "at",
			    "expected a time before the period's end");
	if (rule->duty >= 1.0 || !(K(rule->kind) & K_WINDOWED))
		return 1;
	if (end == 0)
		return fail(ctx, sim_rule_line(rule, "duty"), "duty", "expected 1 unless the "
			    "window has an end (give end, or a scenario period)");
	if (rule->cycle_ns <= 0)
		return fail(ctx, sim_rule_line(rule, "cycle"), "cycle", "expected a time above 0");
	if ((end - rule->start_ns) / rule->cycle_ns >= MAX_CYCLES_PER_RULE)
		return fail(ctx, sim_rule_line(rule, "cycle"), "cycle", "expected fewer than %d "
			    "cycles in the window", MAX_CYCLES_PER_RULE);
	return 1;
}

static void validate(struct parse_ctx *ctx)
{
	for (int i = 0; i < ctx->scn->n_rules && !ctx->err_line; i++) {
		const struct sim_rule *rule = &ctx->scn->rules[i];

		if (check_required(ctx, rule))
			check_window(ctx, rule);
	}
}

int sim_scenario_load(const char *path, struct sim_scenario **ret_scn, char *err, size_t errlen)
{
	struct parse_ctx ctx = { .at_line_start = true, .err = err, .errlen = errlen };
	struct sim_scenario *scn;
	int r;

	scn = calloc(1, sizeof(*scn));
	if (!scn)
		return -ENOMEM;
	snprintf(scn->file, sizeof(scn->file), "%s", path);
	scn->kernel_thermal_throttle = true;
	ctx.scn = scn;
	ctx.f = fopen(path, "r");
	if (!ctx.f) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot open scenario: %s", path, strerror(-r));
		sim_scenario_free(scn);
		return r;
	}
	r = ini_parse_stream(read_line, &ctx, handle, &ctx);
	fclose(ctx.f);
	if (r > 0 && (!ctx.err_line || r < ctx.err_line)) {
		ctx.err_line = 0;
		fail(&ctx, r, "syntax", "expected '[section]', 'key = value' or a comment");
	}
	if (!ctx.err_line)
		validate(&ctx);
	if (ctx.err_line) {
		sim_scenario_free(scn);
		return -EINVAL;
	}
	*ret_scn = scn;
	return 0;
}

void sim_scenario_free(struct sim_scenario *scn)
{
	if (!scn)
		return;
	free(scn->rules);
	free(scn);
}

/* ---- timelines ---- */

int sim_timeline_init(struct sim_timeline *tl, int64_t period, int64_t value)
{
	tl->period = period;
	tl->cap = 8;
	tl->n = 1;
	tl->seg = calloc((size_t)tl->cap, sizeof(*tl->seg));
	if (!tl->seg)
		return -ENOMEM;
	tl->seg[0].start = 0;
	tl->seg[0].value = value;
	return 0;
}

void sim_timeline_free(struct sim_timeline *tl)
{
	free(tl->seg);
	tl->seg = NULL;
	tl->n = tl->cap = 0;
}

/* Index of the segment holding local time t (0 <= t). */
static int find_seg(const struct sim_timeline *tl, int64_t t)
{
	int lo = 0, hi = tl->n - 1;

	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (tl->seg[mid].start <= t)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Make a segment boundary at t; returns the index of the segment starting at t. */
static int split_at(struct sim_timeline *tl, int64_t t)
{
	int i = find_seg(tl, t);

	if (tl->seg[i].start == t)
		return i;
	if (tl->n == tl->cap) {
		struct sim_timeline_seg *seg = realloc(tl->seg, sizeof(*seg) * (size_t)tl->cap * 2);

		if (!seg)
			return -ENOMEM;
		tl->seg = seg;
		tl->cap *= 2;
	}
	memmove(&tl->seg[i + 2], &tl->seg[i + 1], sizeof(*tl->seg) * (size_t)(tl->n - i - 1));
	tl->seg[i + 1].start = t;
	tl->seg[i + 1].value = tl->seg[i].value;
	tl->n++;
	return i + 1;
}

int sim_timeline_paint(struct sim_timeline *tl, int64_t start, int64_t end, int64_t value,
		       enum sim_paint op)
{
	int first, stop;

	if (tl->period && end > tl->period)
		end = tl->period;
	if (start >= end)
		return 0;
	first = split_at(tl, start);
	if (first < 0)
		return first;
	if (end != SIM_FOREVER && end != tl->period) {
		stop = split_at(tl, end);
		if (stop < 0)
			return stop;
	} else {
		stop = tl->n;
	}
	for (int i = first; i < stop; i++) {
		if (op == SIM_PAINT_SET)
			tl->seg[i].value = value;
		else if (value)
			tl->seg[i].value = tl->seg[i].value ? tl->seg[i].value : value;
	}
	return 0;
}

int sim_timeline_paint_rule(struct sim_timeline *tl, const struct sim_rule *rule, int64_t value,
			    enum sim_paint op)
{
	int64_t end = rule->end_ns, on;
	int r;

	if (end == SIM_FOREVER && tl->period)
		end = tl->period;
	if (rule->duty >= 1.0)
		return sim_timeline_paint(tl, rule->start_ns, end, value, op);
	on = llround(rule->duty * (double)rule->cycle_ns);
	for (int64_t c = rule->start_ns; c < end && on > 0; c += rule->cycle_ns) {
		r = sim_timeline_paint(tl, c, c + on < end ? c + on : end, value, op);
		if (r < 0)
			return r;
	}
	return 0;
}

static int64_t seg_end(const struct sim_timeline *tl, int i)
{
	if (i + 1 < tl->n)
		return tl->seg[i + 1].start;
	return tl->period ? tl->period : SIM_FOREVER;
}

int sim_timeline_or_where(struct sim_timeline *tl, const struct sim_timeline *src,
			  int64_t threshold)
{
	for (int i = 0; i < src->n; i++) {
		int r;

		if (src->seg[i].value < threshold)
			continue;
		r = sim_timeline_paint(tl, src->seg[i].start, seg_end(src, i), 1, SIM_PAINT_OR);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool rise_at(const struct sim_timeline *tl, int i)
{
	return tl->seg[i].value && !tl->seg[i - 1].value;
}

void sim_timeline_finish(struct sim_timeline *tl)
{
	int n = 1;

	for (int i = 1; i < tl->n; i++) {
		if (tl->seg[i].value == tl->seg[n - 1].value)
			continue;
		tl->seg[n++] = tl->seg[i];
	}
	tl->n = n;
	tl->seg[0].integral = 0;
	tl->seg[0].rises = 0;
	for (int i = 1; i < n; i++) {
		struct sim_timeline_seg *prev = &tl->seg[i - 1];

		tl->seg[i].integral = prev->integral + (unsigned __int128)prev->value *
						       (uint64_t)(tl->seg[i].start - prev->start);
		tl->seg[i].rises = prev->rises + (i >= 2 && rise_at(tl, i - 1));
	}
}

int64_t sim_timeline_value_at(const struct sim_timeline *tl, int64_t t)
{
	if (t < 0)
		t = 0;
	if (tl->period)
		t %= tl->period;
	return tl->seg[find_seg(tl, t)].value;
}

/* Integral over [0, t) of one period, 0 <= t <= period. */
static unsigned __int128 local_integral(const struct sim_timeline *tl, int64_t t)
{
	const struct sim_timeline_seg *s = &tl->seg[find_seg(tl, t)];

	return s->integral + (unsigned __int128)s->value * (uint64_t)(t - s->start);
}

unsigned __int128 sim_timeline_integral(const struct sim_timeline *tl, int64_t t)
{
	if (t <= 0)
		return 0;
	if (!tl->period)
		return local_integral(tl, t);
	return (unsigned __int128)(uint64_t)(t / tl->period) * local_integral(tl, tl->period) +
	       local_integral(tl, t % tl->period);
}

/* Rises at segments 1.. with start < t, within one period, 0 < t <= period. */
static uint64_t local_inner_rises(const struct sim_timeline *tl, int64_t t)
{
	int i = find_seg(tl, t - 1);

	return tl->seg[i].rises + (i >= 1 && rise_at(tl, i));
}

uint64_t sim_timeline_rises(const struct sim_timeline *tl, int64_t t)
{
	bool v0 = tl->seg[0].value, wraps_on = v0 && tl->seg[tl->n - 1].value;
	uint64_t k, per_period, total;

	if (t <= 0)
		return 0;
	if (!tl->period)
		return v0 + local_inner_rises(tl, t);
	k = (uint64_t)(t / tl->period);
	t %= tl->period;
	per_period = local_inner_rises(tl, tl->period) + (v0 && !wraps_on);
	total = 0;
	if (k > 0)
		total = v0 + local_inner_rises(tl, tl->period) + (k - 1) * per_period;
	if (t > 0)
		total += (k == 0 ? v0 : v0 && !wraps_on) + local_inner_rises(tl, t);
	return total;
}
