/*
 * The configuration's keys and values.  A key table per section gives each
 * key its kind, place in struct conf, bounds and default, and one parse
 * function per kind turns the text into a value or a message saying what
 * was expected.  The [daemon] table is here; the collectors declare theirs
 * (collector.h), and conf.h asks for them through the conf_collector_*
 * calls.  Reading a file and walking its sections is conf_load.c's, the
 * checks across keys conf_validate.c's.  It does no logging; whether the
 * configured events fit the CPU actually found is for the collectors to
 * check.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_keys.h"
#include "listen_addr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const log_level_names[] = { "error", "warning", "notice", "info", "debug", NULL };

const char *const conf_conflict_names[] = { "reclaim", "yield", NULL };
const char *const conf_engine_names[] = { "auto", "perf", "msr", NULL };

/* What state_file accepts besides an absolute path: no journal, on purpose. */
static const char *const state_file_words[] = { "none", NULL };

/*
 * The interval bound: a counter must not wrap twice between two samples.
 * 60 s is far below the wrap period of a 48-bit counter (2^48 cycles at
 * 5 GHz is about 15.6 h); the collectors check the real widths at start.
 */
static const struct conf_key daemon_keys[] = {
	{ "listen", CONF_KIND_LISTEN, CONF_FIELD(listen), .def = "127.0.0.1:9796" },
	{ "interval", CONF_KIND_SECONDS, CONF_FIELD(interval_s), 0.05, 60, "seconds", .def = "1" },
	{ "root", CONF_KIND_PATH, CONF_FIELD(root), .def = "/" },
	{ "user", CONF_KIND_STRING, CONF_FIELD(user), .def = "uncored" },
	{ "server_user", CONF_KIND_STRING, CONF_FIELD(server_user), .def = "uncored-http" },
	{ "log_level", CONF_KIND_ENUM, CONF_FIELD(log_level), .names = log_level_names,
	  .def = "notice" },
	{ "max_connections", CONF_KIND_UNSIGNED, CONF_FIELD(max_connections), 1, 10000, NULL,
	  .def = "64" },
	{ "max_connections_per_ip", CONF_KIND_UNSIGNED, CONF_FIELD(max_connections_per_ip), 1, 1000,
	  NULL, .def = "8" },
	{ "request_timeout", CONF_KIND_UNSIGNED, CONF_FIELD(request_timeout_s), 1, 300, "seconds",
	  .def = "10" },
	{ "write_timeout", CONF_KIND_UNSIGNED, CONF_FIELD(write_timeout_s), 1, 60, "seconds",
	  .def = "2" },
	{ "max_header_size", CONF_KIND_UNSIGNED, CONF_FIELD(max_header_bytes), 1024, 65536, "bytes",
	  .def = "8192" },
	{ "max_episodes", CONF_KIND_UNSIGNED, CONF_FIELD(max_episodes), 1, 10000, NULL,
	  .def = "256" },
	{ "state_file", CONF_KIND_PATH, CONF_FIELD(state_file), .names = state_file_words,
	  .def = "/run/uncored/ledger" },
};

static const struct conf_section daemon_section = {
	.name = "daemon", .keys = daemon_keys, .n_keys = ARRAY_SIZE(daemon_keys),
};

const struct conf_section *conf_section_at(size_t i)
{
	if (i == 0)
		return &daemon_section;
	if (i - 1 < conf_collector_count())
		return conf_collector_section(i - 1);
	return NULL;
}

void *conf_section_base(struct conf *conf, size_t i)
{
	const struct conf_section *sec = conf_section_at(i);

	if (i == 0 || !sec->settings_size)
		return conf;
	return conf->settings[i - 1];
}

size_t conf_n_sections(void)
{
	size_t n = 1 + conf_collector_count();

	return n < CONF_MAX_SECTIONS ? n : CONF_MAX_SECTIONS;
}

void conf_copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

void conf_add_error(struct conf_errors *errs, const char *file, int line, const char *key,
		    const char *fmt, ...)
{
	struct conf_error *e;
	va_list ap;

	if (errs->n++ >= CONF_MAX_ERRORS)
		return;
	e = &errs->list[errs->n - 1];
	conf_copy_str(e->file, sizeof(e->file), file);
	e->line = line;
	conf_copy_str(e->key, sizeof(e->key), key);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/* "a, b, c<last>d", e.g. "reclaim or yield". */
static const char *join_names(const char *const *names, const char *last, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; names[i] && used < len; i++) {
		const char *sep = i == 0 ? "" : names[i + 1] ? ", " : last;

		used += (size_t)snprintf(buf + used, len - used, "%s%s", sep, names[i]);
	}
	return buf;
}

/* ---- one parse function per kind ---------------------------------------- */

/*
 * base is what the key's offset counts from: struct conf itself, or the
 * settings block of a section that has one (conf_section.settings_size).
 */
typedef int parse_fn(const struct conf_key *k, const char *value, void *base, int line,
		     char *err, size_t errlen);

static void *field_of(const struct conf_key *k, void *base)
{
	return (char *)base + k->offset;
}

static int parse_bool(const struct conf_key *k, const char *value, void *base, int line,
		      char *err, size_t errlen)
{
	static const char *const words[] = { "yes", "no", "true", "false", "on", "off", "1", "0" };

	(void)line;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++) {
		if (strcasecmp(value, words[i]) == 0) {
			*(bool *)field_of(k, base) = i % 2 == 0;
			return 0;
		}
	}
	snprintf(err, errlen, "expected yes/no, true/false, on/off or 1/0, got '%s'", value);
	return -EINVAL;
}

/* Digits with an optional fraction, parsed without the locale. */
static int parse_decimal(const char *s, double *ret)
{
	double int_part = 0, frac = 0, scale = 1;
	size_t n_int = strspn(s, "0123456789"), n_frac = 0;

	if (n_int > 9)
		return -ERANGE;
	for (size_t i = 0; i < n_int; i++)
		int_part = int_part * 10 + (s[i] - '0');
	if (s[n_int] == '.') {
		n_frac = strspn(s + n_int + 1, "0123456789");
		if (n_frac > 9)
			return -ERANGE;
		for (size_t i = 0; i < n_frac; i++) {
			frac = frac * 10 + (s[n_int + 1 + i] - '0');
			scale *= 10;
		}
		if (s[n_int + 1 + n_frac] != '\0')
			return -EINVAL;
	} else if (s[n_int] != '\0') {
		return -EINVAL;
	}
	if (n_int + n_frac == 0)
		return -EINVAL;
	*ret = int_part + frac / scale;
	return 0;
}

static int parse_seconds(const struct conf_key *k, const char *value, void *base, int line,
			 char *err, size_t errlen)
{
	double v;

	(void)line;
	if (parse_decimal(value, &v) < 0 || v < k->min || v > k->max) {
		snprintf(err, errlen, "expected a number of %s from %g to %g, got '%s'",
			 k->unit, k->min, k->max, value);
		return -EINVAL;
	}
	*(double *)field_of(k, base) = v;
	return 0;
}

/* Decimal digits only, no sign. */
static int parse_uint(const char *s, unsigned long *ret)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || s[n] != '\0')
		return -EINVAL;
	if (n > 9)
		return -ERANGE;
	*ret = strtoul(s, NULL, 10);
	return 0;
}

static int parse_unsigned(const struct conf_key *k, const char *value, void *base, int line,
			  char *err, size_t errlen)
{
	unsigned long v;

	(void)line;
	if (parse_uint(value, &v) < 0 || v < k->min || v > k->max) {
		snprintf(err, errlen, "expected a whole number%s%s from %g to %g, got '%s'",
			 k->unit ? " of " : "", k->unit ? k->unit : "", k->min, k->max, value);
		return -EINVAL;
	}
	*(unsigned *)field_of(k, base) = (unsigned)v;
	return 0;
}

static int check_length(const struct conf_key *k, const char *value, char *err, size_t errlen)
{
	size_t len = strlen(value);

	if (len < k->size)
		return 0;
	snprintf(err, errlen, "expected at most %zu characters, got %zu", k->size - 1, len);
	return -EINVAL;
}

static int parse_string(const struct conf_key *k, const char *value, void *base, int line,
			char *err, size_t errlen)
{
	(void)line;
	if (check_length(k, value, err, errlen) < 0)
		return -EINVAL;
	conf_copy_str(field_of(k, base), k->size, value);
	return 0;
}

static int parse_path(const struct conf_key *k, const char *value, void *base, int line,
		      char *err, size_t errlen)
{
	for (int i = 0; k->names && k->names[i]; i++)
		if (strcmp(value, k->names[i]) == 0)
			return parse_string(k, value, base, line, err, errlen);
	if (value[0] != '/') {
		snprintf(err, errlen, "expected an absolute path, got '%s'", value);
		return -EINVAL;
	}
	return parse_string(k, value, base, line, err, errlen);
}

static int parse_enum(const struct conf_key *k, const char *value, void *base, int line,
		      char *err, size_t errlen)
{
	char list[128];

	(void)line;
	for (int i = 0; k->names[i]; i++) {
		if (strcmp(value, k->names[i]) == 0) {
			/* Both config enums are int-sized, non-negative (static asserts below). */
			*(int *)field_of(k, base) = i;
			return 0;
		}
	}
	snprintf(err, errlen, "expected %s, got '%s'", join_names(k->names, " or ", list, sizeof(list)),
		 value);
	return -EINVAL;
}

_Static_assert(sizeof(enum conf_log_level) == sizeof(int), "enum stored as int");
_Static_assert(sizeof(enum conf_conflict_policy) == sizeof(int), "enum stored as int");

/* The one listen address parser (listen_addr.h); a configured port is never 0. */
static int parse_listen(const struct conf_key *k, const char *value, void *base, int line,
			char *err, size_t errlen)
{
	if (check_length(k, value, err, errlen) < 0)
		return -EINVAL;
	if (listen_addr_parse(value, 1, NULL, NULL, err, errlen) < 0)
		return -EINVAL;
	return parse_string(k, value, base, line, err, errlen);
}

static int add_event(enum event_pmu pmu, const char *value, struct conf_event *list, int *n,
		     int line, char *err, size_t errlen)
{
	struct event_spec spec;
	int r;

	r = event_parse(pmu, value, &spec, err, errlen);
	if (r < 0)
		return r;
	if (*n >= CONF_MAX_EVENTS) {
		snprintf(err, errlen, "more than %d event lines in this section", CONF_MAX_EVENTS);
		return -E2BIG;
	}
	list[*n] = (struct conf_event){ .spec = spec, .line = line };
	(*n)++;
	return 0;
}

static int parse_event(const struct conf_key *k, const char *value, void *base, int line,
		       char *err, size_t errlen)
{
	return add_event(k->pmu, value, field_of(k, base), (int *)((char *)base + k->count_offset),
			 line, err, errlen);
}

static parse_fn *const parsers[CONF_KIND_COUNT] = {
	[CONF_KIND_BOOL] = parse_bool,
	[CONF_KIND_SECONDS] = parse_seconds,
	[CONF_KIND_UNSIGNED] = parse_unsigned,
	[CONF_KIND_STRING] = parse_string,
	[CONF_KIND_PATH] = parse_path,
	[CONF_KIND_ENUM] = parse_enum,
	[CONF_KIND_LISTEN] = parse_listen,
	[CONF_KIND_EVENT] = parse_event,
};

int conf_parse_value(const struct conf_key *k, const char *value, void *base, int line,
		     char *err, size_t errlen)
{
	return parsers[k->kind](k, value, base, line, err, errlen);
}

bool conf_key_is_repeatable(const struct conf_key *k)
{
	return k->kind == CONF_KIND_EVENT;
}

void conf_defaults(struct conf *conf)
{
	char err[256];

	memset(conf, 0, sizeof(*conf));
	for (size_t i = 0; i < conf_n_sections(); i++) {
		const struct conf_section *sec = conf_section_at(i);

		for (size_t j = 0; sec && j < sec->n_keys; j++)
			if (sec->keys[j].def)
				parsers[sec->keys[j].kind](&sec->keys[j], sec->keys[j].def,
							   conf_section_base(conf, i), 0, err, sizeof(err));
	}
}

bool conf_settings_changed(const struct conf_section *sec, const void *old, const void *new)
{
	for (size_t k = 0; k < sec->n_keys; k++) {
		const struct conf_key *key = &sec->keys[k];
		const char *a = (const char *)old + key->offset, *b = (const char *)new + key->offset;
		bool same;

		if (key->restart)
			continue;
		switch (key->kind) {
		case CONF_KIND_EVENT: {
			int n_a, n_b;

			memcpy(&n_a, (const char *)old + key->count_offset, sizeof(n_a));
			memcpy(&n_b, (const char *)new + key->count_offset, sizeof(n_b));
			same = conf_events_equal((const struct conf_event *)(const void *)a, n_a,
						 (const struct conf_event *)(const void *)b, n_b);
			break;
		}
		case CONF_KIND_STRING:
		case CONF_KIND_PATH:
		case CONF_KIND_LISTEN:
			same = strcmp(a, b) == 0;
			break;
		default:
			same = memcmp(a, b, key->size) == 0;
			break;
		}
		if (!same)
			return true;
	}
	return false;
}

bool conf_events_equal(const struct conf_event *a, int n_a, const struct conf_event *b, int n_b)
{
	if (n_a != n_b)
		return false;
	for (int i = 0; i < n_a; i++) {
		const struct event_spec *x = &a[i].spec, *y = &b[i].spec;

		if (strcmp(x->name, y->name) || x->code != y->code || x->umask != y->umask ||
		    x->edge != y->edge || x->inv != y->inv || x->cmask != y->cmask)
			return false;
	}
	return true;
}
