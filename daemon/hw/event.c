/*
 * Performance events: the one-line grammar used by the config file, the
 * tables of built-in uncore and core events, and the PERFEVTSEL encodings.
 * It owns no state and does no I/O; whether a counter is free, and what to
 * do when it is not, is decided by the collectors.  Error texts name the
 * field that was wrong and what was expected there, so the config module
 * can pass them on unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "event.h"
#include "msr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Longer lines cannot come from the config (inih stops at 200 bytes). */
#define EVENT_LINE_MAX 512

/*
 * Westmere uncore thermal events, hardware.md §2.1.  0x67 and 0x82 use umask
 * 0x01 as recommended there (the current libpfm4 table says 0x00).
 */
#define UNC(n, c, u, e) { .name = (n), .code = (c), .umask = (u), .edge = (e), \
			  .needs_uncore_thermal = true }

static const struct event_spec uncore_builtins[] = {
	UNC(EVENT_DRAM_THERMAL_THROTTLED, 0x67, 0x01, false),
	/*
	 * Edge detect with cmask 1, as every Intel edge-detected event is
	 * encoded (hardware-linux.md §2, correcting hardware.md §2.1).
	 */
	{ .name = "dram_thermal_throttle_episodes", .code = 0x67, .umask = 0x01, .edge = true,
	  .cmask = 1, .needs_uncore_thermal = true },
	UNC(EVENT_PROCHOT_ASSERTIONS, 0x82, 0x01, false),
	UNC("thermal_throttling_prochot_core0", 0x83, 0x01, false),
	UNC("thermal_throttling_prochot_core1", 0x83, 0x02, false),
	UNC("thermal_throttling_prochot_core2", 0x83, 0x04, false),
	UNC("thermal_throttling_prochot_core3", 0x83, 0x08, false),
	UNC("thermal_throttling_temp_core0", 0x80, 0x01, false),
	UNC("thermal_throttling_temp_core1", 0x80, 0x02, false),
	UNC("thermal_throttling_temp_core2", 0x80, 0x04, false),
	UNC("thermal_throttling_temp_core3", 0x80, 0x08, false),
	UNC("thermal_throttled_temp_core0", 0x81, 0x01, false),
	UNC("thermal_throttled_temp_core1", 0x81, 0x02, false),
	UNC("thermal_throttled_temp_core2", 0x81, 0x04, false),
	UNC("thermal_throttled_temp_core3", 0x81, 0x08, false),
};

/* Seven of the eight uncore counters, leaving one for a configured event. */
static const struct event_spec *const uncore_defaults[] = {
	&uncore_builtins[0], &uncore_builtins[1], &uncore_builtins[2],
	&uncore_builtins[11], &uncore_builtins[12], &uncore_builtins[13],
	&uncore_builtins[14],
};

/* Architectural events, hardware.md §5.2; arch_event is the CPUID.0AH:EBX bit + 1. */
static const struct event_spec core_builtins[] = {
	{ .name = "llc_references", .code = 0x2e, .umask = 0x4f, .arch_event = 3 + 1 },
	{ .name = "llc_misses", .code = 0x2e, .umask = 0x41, .arch_event = 4 + 1 },
	{ .name = "branch_instructions", .code = 0xc4, .umask = 0x00, .arch_event = 5 + 1 },
	{ .name = "branch_misses", .code = 0xc5, .umask = 0x00, .arch_event = 6 + 1 },
};

static const struct event_spec *const core_defaults[] = {
	&core_builtins[0], &core_builtins[1], &core_builtins[3],
};

/*
 * AMD's generic events on the core PMU (hardware-amd.md §3.3): perf's
 * cache-references and cache-misses count L2 requests (0xFF60) and L2
 * misses (0x0964) on AMD, not the last-level cache, so they carry L2
 * names; branches 0xC2, mispredicted 0xC3.  All four are defaults.
 */
static const struct event_spec amd_core_builtins[] = {
	{ .name = "l2_cache_requests", .code = 0x60, .umask = 0xff },
	{ .name = "l2_cache_misses", .code = 0x64, .umask = 0x09 },
	{ .name = "branch_instructions", .code = 0xc2, .umask = 0x00 },
	{ .name = "branch_misses", .code = 0xc3, .umask = 0x00 },
};

static const struct event_spec *const amd_core_defaults[] = {
	&amd_core_builtins[0], &amd_core_builtins[1], &amd_core_builtins[2], &amd_core_builtins[3],
};

static const struct pmu_tables {
	const char *name;
	const struct event_spec *builtins;
	size_t n_builtins;
	const struct event_spec *const *defaults;
	size_t n_defaults;
} pmus[] = {
	[EVENT_PMU_UNCORE] = { "uncore", uncore_builtins, ARRAY_SIZE(uncore_builtins),
			       uncore_defaults, ARRAY_SIZE(uncore_defaults) },
	[EVENT_PMU_CORE] = { "core", core_builtins, ARRAY_SIZE(core_builtins),
			     core_defaults, ARRAY_SIZE(core_defaults) },
	[EVENT_PMU_AMD_CORE] = { "AMD core", amd_core_builtins, ARRAY_SIZE(amd_core_builtins),
				 amd_core_defaults, ARRAY_SIZE(amd_core_defaults) },
};

/* The key=value fields of a custom event; flags take no value. */
enum field_id { FIELD_EVENT, FIELD_UMASK, FIELD_EDGE, FIELD_CMASK, FIELD_INV };

static const struct field {
	const char *name;
	bool is_flag;
	size_t offset;             /* uint8_t for values, bool for flags */
	const char *range;         /* shown in errors */
} fields[] = {
	[FIELD_EVENT] = { "event", false, offsetof(struct event_spec, code), "0x00..0xff" },
	[FIELD_UMASK] = { "umask", false, offsetof(struct event_spec, umask), "0x00..0xff" },
	[FIELD_EDGE] = { "edge", true, offsetof(struct event_spec, edge), NULL },
	[FIELD_CMASK] = { "cmask", false, offsetof(struct event_spec, cmask), "0..255" },
	[FIELD_INV] = { "inv", true, offsetof(struct event_spec, inv), NULL },
};

static bool pmu_valid(enum event_pmu pmu)
{
	return (unsigned)pmu < ARRAY_SIZE(pmus);
}

const struct event_spec *event_builtins(enum event_pmu pmu, size_t *ret_n)
{
	if (!pmu_valid(pmu)) {
		*ret_n = 0;
		return NULL;
	}
	*ret_n = pmus[pmu].n_builtins;
	return pmus[pmu].builtins;
}

const struct event_spec *const *event_defaults(enum event_pmu pmu, size_t *ret_n)
{
	if (!pmu_valid(pmu)) {
		*ret_n = 0;
		return NULL;
	}
	*ret_n = pmus[pmu].n_defaults;
	return pmus[pmu].defaults;
}

const struct event_spec *event_builtin_own(enum event_pmu pmu, const char *name)
{
	size_t n;
	const struct event_spec *t = event_builtins(pmu, &n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

const struct event_spec *event_builtin(enum event_pmu pmu, const char *name)
{
	const struct event_spec *b = event_builtin_own(pmu, name);

	if (!b && pmu == EVENT_PMU_CORE)
		b = event_builtin_own(EVENT_PMU_AMD_CORE, name);
	return b;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return s;
}

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int check_name(const char *name, char *err, size_t errlen)
{
	size_t len = strlen(name);

	if (!is_lower(name[0]) || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != len) {
		snprintf(err, errlen, "name: expected [a-z][a-z0-9_]*, got '%s'", name);
		return -EINVAL;
	}
	if (len >= EVENT_NAME_MAX) {
		snprintf(err, errlen, "name: expected at most %d characters, got %zu",
			 EVENT_NAME_MAX - 1, len);
		return -EINVAL;
	}
	return 0;
}

/* "0xNN" hex or decimal, 0..255; nothing else (no sign, no spaces). */
static int parse_u8(const char *s, uint8_t *ret)
{
	unsigned base = 10, v = 0;
	const char *p = s;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!*p)
		return -EINVAL;
	for (; *p; p++) {
		const char *hex = "0123456789abcdef", *d;
		char c = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);

		d = c ? strchr(hex, c) : NULL;
		if (!d || (unsigned)(d - hex) >= base)
			return -EINVAL;
		v = v * base + (unsigned)(d - hex);
		if (v > 0xff)
			return -ERANGE;
	}
	*ret = (uint8_t)v;
	return 0;
}

static const struct field *find_field(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

/* One "key=value" or "flag" field of a custom event; *seen tracks repeats. */
static int parse_field(char *text, struct event_spec *ev, unsigned *seen,
		       char *err, size_t errlen)
{
	char *eq = strchr(text, '='), *value = NULL, *key;
	const struct field *f;

	if (eq) {
		*eq = '\0';
		value = trim(eq + 1);
	}
	key = trim(text);
	if (!*key && !value) {
		snprintf(err, errlen, "empty field (expected event, umask, edge, cmask, inv)");
		return -EINVAL;
	}
	f = find_field(key);
	if (!f) {
		snprintf(err, errlen, "unknown field '%s' (expected event, umask, edge, cmask, inv)", key);
		return -EINVAL;
	}
	if (*seen & (1u << (f - fields))) {
		snprintf(err, errlen, "'%s' given twice", key);
		return -EINVAL;
	}
	*seen |= 1u << (f - fields);
	if (f->is_flag) {
		if (value) {
			snprintf(err, errlen, "'%s' takes no value", key);
			return -EINVAL;
		}
		*(bool *)((char *)ev + f->offset) = true;
		return 0;
	}
	if (!value || parse_u8(value, (uint8_t *)((char *)ev + f->offset)) < 0) {
		snprintf(err, errlen, "%s: expected %s, got '%s'", key, f->range, value ? value : "");
		return -EINVAL;
	}
	return 0;
}

/* Append "stem0..3"-style runs of the built-in names of pmu to err. */
static void list_builtins(enum event_pmu pmu, char *err, size_t errlen)
{
	const struct pmu_tables *t = &pmus[pmu];
	size_t used = strlen(err);

	for (size_t i = 0; i < t->n_builtins && used < errlen; ) {
		const char *name = t->builtins[i].name;
		size_t stem = strlen(name) - 1, j = i + 1;

		while (is_digit(name[stem]) && j < t->n_builtins &&
		       strncmp(t->builtins[j].name, name, stem) == 0 &&
		       t->builtins[j].name[stem] == name[stem] + (char)(j - i) &&
		       t->builtins[j].name[stem + 1] == '\0')
			j++;
		if (j - i > 1)
			used += (size_t)snprintf(err + used, errlen - used, "%s%s..%c",
						 i ? ", " : "", name, t->builtins[j - 1].name[stem]);
		else
			used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", name);
		i = j;
	}
	if (used < errlen)
		snprintf(err + used, errlen - used, ")");
}

static int parse_builtin(enum event_pmu pmu, const char *name, struct event_spec *ret_spec,
			 char *err, size_t errlen)
{
	const struct event_spec *b = event_builtin(pmu, name);

	if (!b) {
		snprintf(err, errlen, "unknown built-in %s event '%s' (known: ", pmus[pmu].name, name);
		list_builtins(pmu, err, errlen);
		return -EINVAL;
	}
	*ret_spec = *b;
	return 0;
}

static int parse_custom(enum event_pmu pmu, const char *name, char *rest,
			struct event_spec *ret_spec, char *err, size_t errlen)
{
	struct event_spec ev = { 0 };
	unsigned seen = 0;
	char *field;

	if (event_builtin(pmu, name)) {
		snprintf(err, errlen, "name: '%s' is a built-in %s event; give the custom event another name",
			 name, pmus[pmu].name);
		return -EINVAL;
	}
	while ((field = strsep(&rest, ",")))
		if (parse_field(field, &ev, &seen, err, errlen) < 0)
			return -EINVAL;
	for (enum field_id f = FIELD_EVENT; f <= FIELD_UMASK; f++) {
		if (!(seen & (1u << f))) {
			snprintf(err, errlen, "%s: missing (a custom event needs event=0xNN and umask=0xNN)",
				 fields[f].name);
			return -EINVAL;
		}
	}
	snprintf(ev.name, sizeof(ev.name), "%s", name);
	*ret_spec = ev;
	return 0;
}

int event_parse(enum event_pmu pmu, const char *line, struct event_spec *ret_spec,
		char *err, size_t errlen)
{
	char buf[EVENT_LINE_MAX], *rest, *name;
	int r;

	if (!pmu_valid(pmu)) {
		snprintf(err, errlen, "unknown performance monitoring unit");
		return -EINVAL;
	}
	if (strlen(line) >= sizeof(buf)) {
		snprintf(err, errlen, "event line longer than %zu characters", sizeof(buf) - 1);
		return -EINVAL;
	}
	strcpy(buf, line);
	rest = buf;
	name = trim(strsep(&rest, ","));
	r = check_name(name, err, errlen);
	if (r < 0)
		return r;
	if (!rest)
		return parse_builtin(pmu, name, ret_spec, err, errlen);
	return parse_custom(pmu, name, rest, ret_spec, err, errlen);
}

static uint64_t common_bits(const struct event_spec *ev, uint64_t inv, uint64_t edge,
			    unsigned cmask_shift, unsigned umask_shift)
{
	return (ev->inv ? inv : 0) | (ev->edge ? edge : 0) |
	       (uint64_t)ev->cmask << cmask_shift |
	       (uint64_t)ev->umask << umask_shift | ev->code;
}

/* hardware.md §1.4: no USR/OS bits in the uncore select; PMI and OCC_CTR_RST stay clear. */
uint64_t event_uncore_evtsel(const struct event_spec *ev)
{
	return UNC_EVTSEL_EN | common_bits(ev, UNC_EVTSEL_INV, UNC_EVTSEL_EDGE,
					   UNC_EVTSEL_CMASK_SHIFT, UNC_EVTSEL_UMASK_SHIFT);
}

/* hardware.md §5.4: count in user and kernel mode, no PMI, no AnyThread. */
uint64_t event_core_evtsel(const struct event_spec *ev)
{
	return PERFEVTSEL_EN | PERFEVTSEL_USR | PERFEVTSEL_OS |
	       common_bits(ev, PERFEVTSEL_INV, PERFEVTSEL_EDGE,
			   PERFEVTSEL_CMASK_SHIFT, PERFEVTSEL_UMASK_SHIFT);
}

bool event_is_default(enum event_pmu pmu, const struct event_spec *ev)
{
	size_t n;
	const struct event_spec *const *d = event_defaults(pmu, &n);

	for (size_t i = 0; i < n; i++)
		if (d[i] == ev)
			return true;
	return false;
}

const char *event_encoding(const struct event_spec *ev, char *buf, size_t len)
{
	char cmask[16] = "";

	if (ev->cmask)
		snprintf(cmask, sizeof(cmask), " cmask=%u", ev->cmask);
	snprintf(buf, len, "event=0x%02x umask=0x%02x%s%s%s", ev->code, ev->umask,
		 ev->edge ? " edge" : "", cmask, ev->inv ? " inv" : "");
	return buf;
}

void event_list_builtins(enum event_pmu pmu, struct strbuf *out,
			 const char *(*why_unavailable)(const struct event_spec *ev, const void *arg),
			 const void *arg)
{
	size_t n;
	const struct event_spec *ev = event_builtins(pmu, &n);
	char enc[96];

	strbuf_append(out, "  events for 'event =' lines, by name (* counted by default):\n");
	for (size_t i = 0; i < n; i++) {
		const char *why = why_unavailable ? why_unavailable(&ev[i], arg) : NULL;

		strbuf_printf(out, "  %c %-34s %s%s%s%s\n", event_is_default(pmu, &ev[i]) ? '*' : ' ',
			      ev[i].name, event_encoding(&ev[i], enc, sizeof(enc)), why ? "  (" : "",
			      why ? why : "", why ? ")" : "");
	}
	strbuf_append(out, "  or 'event = NAME, event=0xNN, umask=0xNN[, edge][, cmask=N][, inv]'\n");
}
