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
	[SIM_RULE_PACKAGE_SLEEP] = "package-sleep",
	[SIM_RULE_FREQ_LIMIT] = "frequency-limit",
	[SIM_RULE_DIMM_TEMP] = "dimm-temperature",
};

/*
 * [frequency-limit.N] reason = by HSMP GET_SOCKET_FREQ_LIMIT source bit
 * (hardware-amd.md §1.4; opn_max is bit 4, the part's rated maximum).
 */
static const char *const limit_reasons[] = {
	"thermal", "prochot", "current", "power", "opn_max", "reliability", "bmc", "host_software",
	"vr_hot",
};

#define K(kind) (1u << (kind))
#define K_DRAM (K(SIM_RULE_DRAM_THROTTLE) | K(SIM_RULE_DRAM_CRITICAL))
#define K_AMD (K(SIM_RULE_FREQ_LIMIT) | K(SIM_RULE_DIMM_TEMP))
#define K_WINDOWED (K_DRAM | K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_PROCHOT) | \
		    K(SIM_RULE_CORE_THROTTLE) | K(SIM_RULE_POWER_LIMIT) | K(SIM_RULE_OFFLINE) | \
		    K(SIM_RULE_LOAD) | K_PERF | K(SIM_RULE_PACKAGE_SLEEP) | K_AMD)
#define K_PERF (K(SIM_RULE_PERF_CORE) | K(SIM_RULE_PERF_UNCORE) | K(SIM_RULE_GLOBAL_DISABLE))
#define K_SOCKET (K_DRAM | K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_PROCHOT) | \
		  K(SIM_RULE_CORE_THROTTLE) | K(SIM_RULE_POWER_LIMIT) | K(SIM_RULE_PRESET) | \
		  K(SIM_RULE_REWRITE) | K(SIM_RULE_PERF_UNCORE) | K(SIM_RULE_GLOBAL_DISABLE) | \
		  K(SIM_RULE_PACKAGE_SLEEP) | K_AMD)
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
	KEY_REASON,        /* int: a frequency-limit source bit, by limit_reasons[] name */
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
	{ "channel", K_DRAM | K(SIM_RULE_DIMM_TEMP), K(SIM_RULE_DIMM_TEMP), KEY_ID_OR_ALL,
	  OFF(channel), 0, 0 },
	{ "slot", K(SIM_RULE_DIMM_TEMP), K(SIM_RULE_DIMM_TEMP), KEY_ID_OR_ALL, OFF(slot), 0, 0 },
	{ "reason", K(SIM_RULE_FREQ_LIMIT), K(SIM_RULE_FREQ_LIMIT), KEY_REASON, OFF(bit), 0, 0 },
	{ "start", K_WINDOWED, 0, KEY_SECONDS, OFF(start_ns), 0, 0 },
	{ "end", K_WINDOWED, 0, KEY_SECONDS, OFF(end_ns), 0, 0 },
	{ "duty", K_WINDOWED, 0, KEY_REAL, OFF(duty), 0, 1 },
	{ "cycle", K_WINDOWED, 0, KEY_SECONDS, OFF(cycle_ns), 0, 0 },
	{ "celsius", K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_DIMM_TEMP),
	  K(SIM_RULE_TEMPERATURE) | K(SIM_RULE_DIMM_TEMP), KEY_CELSIUS, OFF(celsius), -40, 150 },
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
	int cap_rules;                   /* room in scn->rules */
	int *by_name;                    /* hash of section names: rule index + 1, 0 empty */
	size_t by_name_size;             /* a power of two, over twice n_rules */
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
	case KEY_REASON:
		*ret_expect = "expected thermal, prochot, current, power, opn_max, reliability, bmc, "
			      "host_software or vr_hot";
		for (size_t i = 0; i < sizeof(limit_reasons) / sizeof(limit_reasons[0]); i++)
			if (strcmp(value, limit_reasons[i]) == 0) {
				*(int *)field = (int)i;
				return true;
			}
		return false;
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

/*
 * The rules' section names in an open-addressing hash, so that a file of
 * many sections loads in linear time ("section given twice" is asked once
 * per section).
 */
static size_t name_hash(const char *name)
{
	size_t h = 14695981039346656037ull;   /* FNV-1a */

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h;
}

/* The index of the rule of section name, or -1. */
static int find_section(const struct parse_ctx *ctx, const char *name)
{
	if (!ctx->by_name_size)
		return -1;
	for (size_t i = name_hash(name) & (ctx->by_name_size - 1);; i = (i + 1) & (ctx->by_name_size - 1)) {
		int k = ctx->by_name[i];

		if (k == 0)
			return -1;
		if (strcmp(ctx->scn->rules[k - 1].section, name) == 0)
			return k - 1;
	}
}

/* Put rule index (its section name) in the hash, growing it to stay under half full. */
static int index_section(struct parse_ctx *ctx, const char *name, int index)
{
	if (2 * ((size_t)index + 1) >= ctx->by_name_size) {
		size_t size = ctx->by_name_size ? 2 * ctx->by_name_size : 64;
		int *slots = calloc(size, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < ctx->by_name_size; i++) {
			int k = ctx->by_name[i];
			size_t j;

			if (!k)
				continue;
			for (j = name_hash(ctx->scn->rules[k - 1].section) & (size - 1); slots[j];
			     j = (j + 1) & (size - 1))
				;
			slots[j] = k;
		}
		free(ctx->by_name);
		ctx->by_name = slots;
		ctx->by_name_size = size;
	}
	{
		size_t j;

		for (j = name_hash(name) & (ctx->by_name_size - 1); ctx->by_name[j];
		     j = (j + 1) & (ctx->by_name_size - 1))
			;
		ctx->by_name[j] = index + 1;
	}
	return 0;
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
			    "global-disable, dram-critical, package-sleep, frequency-limit, dimm-temperature");
	if (find_section(ctx, section) >= 0)
		return fail(ctx, ctx->section_line, key, "section given twice");
	if (ctx->scn->n_rules == ctx->cap_rules) {
		int cap = ctx->cap_rules ? 2 * ctx->cap_rules : 16;

		rules = realloc(ctx->scn->rules, sizeof(*rules) * (size_t)cap);
		if (!rules)
			return fail(ctx, ctx->line, name, "out of memory");
		ctx->scn->rules = rules;
		ctx->cap_rules = cap;
	}
	if (index_section(ctx, section, ctx->scn->n_rules) < 0)
		return fail(ctx, ctx->line, name, "out of memory");
	rules = ctx->scn->rules;
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
					     "kernel_thermal_throttle", "uncore_pmu_names",
					     "perf_event_paranoid", "proc_subset", "pcu_clock_stopped" };
	const unsigned n_names = sizeof(names) / sizeof(names[0]);
	struct sim_scenario *scn = ctx->scn;
	unsigned i;

	for (i = 0; i < n_names && strcmp(names[i], name); i++)
		;
	if (i == n_names)
		return fail(ctx, ctx->line, name, "unknown key in [scenario], expected description, "
			    "period, writes, kernel_thermal_throttle, uncore_pmu_names, "
			    "perf_event_paranoid, proc_subset or pcu_clock_stopped");
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
	} else if (i == 4) {
		if (strcmp(value, "table") && strcmp(value, "discovery"))
			return fail(ctx, ctx->line, name, "expected 'table' or 'discovery'");
		scn->discovery_names = strcmp(value, "discovery") == 0;
	} else if (i == 5) {
		long level;

		if (!parse_int(value, -1, 4, &level))
			return fail(ctx, ctx->line, name, "expected a level from -1 to 4");
		scn->perf_event_paranoid = (int)level;
	} else if (i == 6) {
		if (strcmp(value, "all") && strcmp(value, "pid"))
			return fail(ctx, ctx->line, name, "expected 'all' or 'pid'");
		scn->proc_subset_pid = strcmp(value, "pid") == 0;
	} else if (i == 7) {
		long index;

		if (!parse_int(value, 0, 15, &index))
			return fail(ctx, ctx->line, name, "expected a PCU instance from 0 to 15");
		scn->pcu_clock_stopped = (int)index;
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
	scn->perf_event_paranoid = 2;   /* the kernel's default since 4.6 */
	scn->pcu_clock_stopped = -1;
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
	free(ctx.by_name);
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
