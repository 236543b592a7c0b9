/*
 * The configuration file.  inih splits the file into sections and
 * "key = value" pairs; a key table per section gives each key its kind,
 * place in struct conf, bounds and default, and one parse function per kind
 * turns the text into a value or a message saying what was expected.  The
 * [daemon] table is here; the collectors declare theirs (collector.h), and conf.h
 * asks for them through the conf_collector_* calls.  Every error
 * is collected with its file, line and key, and a file with any error is
 * refused whole.  It does no logging; whether the configured events fit the
 * CPU actually found is for the collectors to check.
 */
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_file.h"
#include "listen_addr.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Read buffer of the line reader; longer lines are read in pieces and refused. */
#define RAW_LINE_CHUNK 512

#define SYNTAX_MESSAGE "expected 'key = value' or '[section]'"

/* Section name standing in for a malformed header; reader lines never hold a newline. */
#define BROKEN_SECTION "[\n]"

/* At most this many sections ([daemon] included) and keys in one section. */
#define MAX_SECTIONS 16
#define MAX_SECTION_KEYS 32

static const char *const log_level_names[] = { "error", "warning", "notice", "info", "debug", NULL };

const char *const conf_conflict_names[] = { "reclaim", "yield", NULL };
const char *const conf_engine_names[] = { "auto", "perf", "msr", NULL };

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
	{ "state_file", CONF_KIND_PATH, CONF_FIELD(state_file), .def = "/run/uncored/ledger" },
};

static const struct conf_section daemon_section = {
	.name = "daemon", .keys = daemon_keys, .n_keys = ARRAY_SIZE(daemon_keys),
};

/* Section i: [daemon], then each registered collector's, in registration order. */
static const struct conf_section *section_at(size_t i)
{
	if (i == 0)
		return &daemon_section;
	if (i - 1 < conf_collector_count())
		return conf_collector_section(i - 1);
	return NULL;
}

/* Where the offsets of section i's keys count from in conf. */
static void *section_base(struct conf *conf, size_t i)
{
	const struct conf_section *sec = section_at(i);

	if (i == 0 || !sec->settings_size)
		return conf;
	return conf->settings[i - 1];
}

static size_t n_sections(void)
{
	size_t n = 1 + conf_collector_count();

	return n < MAX_SECTIONS ? n : MAX_SECTIONS;
}

struct parse_ctx {
	FILE *f;
	const char *file;
	int line;                         /* physical line last handed to inih */
	int read_errno;
	struct conf conf;
	struct conf_errors *errs;
	/* Where each key was first set, 0 = not yet; by section and key index. */
	int set_line[MAX_SECTIONS][MAX_SECTION_KEYS];
};

/* Copy with truncation, always terminated. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

__attribute__((format(printf, 5, 6)))
static void add_error(struct conf_errors *errs, const char *file, int line, const char *key,
		      const char *fmt, ...)
{
	struct conf_error *e;
	va_list ap;

	if (errs->n++ >= CONF_MAX_ERRORS)
		return;
	e = &errs->list[errs->n - 1];
	copy_str(e->file, sizeof(e->file), file);
	e->line = line;
	copy_str(e->key, sizeof(e->key), key);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

static bool has_error_at(const struct conf_errors *errs, int line)
{
	for (int i = 0; i < errs->n && i < CONF_MAX_ERRORS; i++)
		if (errs->list[i].line == line)
			return true;
	return false;
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
	copy_str(field_of(k, base), k->size, value);
	return 0;
}

static int parse_path(const struct conf_key *k, const char *value, void *base, int line,
		      char *err, size_t errlen)
{
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

static bool is_repeatable(const struct conf_key *k)
{
	return k->kind == CONF_KIND_EVENT;
}

void conf_defaults(struct conf *conf)
{
	char err[256];

	memset(conf, 0, sizeof(*conf));
	for (size_t i = 0; i < n_sections(); i++) {
		const struct conf_section *sec = section_at(i);

		for (size_t j = 0; sec && j < sec->n_keys; j++)
			if (sec->keys[j].def)
				parsers[sec->keys[j].kind](&sec->keys[j], sec->keys[j].def,
							   section_base(conf, i), 0, err, sizeof(err));
	}
}

/* ---- the inih handler ---------------------------------------------------- */

/* The index of section name, or -1. */
static int find_section(const char *name)
{
	for (size_t i = 0; i < n_sections(); i++)
		if (section_at(i) && strcmp(section_at(i)->name, name) == 0)
			return (int)i;
	return -1;
}

/* "[daemon], [a], [b] or [c]": every section, for messages. */
static const char *sections_text(char *buf, size_t len)
{
	size_t used = 0, n = n_sections();

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 < n ? ", " : " or ";

		used += (size_t)snprintf(buf + used, len - used, "%s[%s]", sep, section_at(i)->name);
	}
	return buf;
}

static const char *keys_of(const struct conf_section *sec, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sec->n_keys && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 sec->keys[i].name);
	return buf;
}

static int find_key(const struct conf_section *sec, const char *name)
{
	for (size_t i = 0; i < sec->n_keys && i < MAX_SECTION_KEYS; i++)
		if (strcmp(sec->keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Always returns 1 (go on): errors are collected, not signalled to inih. */
static int handle_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	char err[sizeof(ctx->errs->list[0].message)], list[192];
	const struct conf_section *sec;
	const struct conf_key *k;
	int si, i;

	if (!*section) {
		add_error(ctx->errs, ctx->file, ctx->line, name,
			  "key outside any section (put it under %s)", sections_text(list, sizeof(list)));
		return 1;
	}
	si = find_section(section);
	if (si < 0)
		return 1;   /* reported once, at the section line */
	sec = section_at((size_t)si);
	i = find_key(sec, name);
	if (i < 0) {
		add_error(ctx->errs, ctx->file, ctx->line, name, "unknown key in [%s] (expected %s)",
			  section, keys_of(sec, list, sizeof(list)));
		return 1;
	}
	k = &sec->keys[i];
	if (ctx->set_line[si][i] && !is_repeatable(k)) {
		add_error(ctx->errs, ctx->file, ctx->line, name, "duplicate key, first set on line %d",
			  ctx->set_line[si][i]);
		return 1;
	}
	if (!ctx->set_line[si][i])
		ctx->set_line[si][i] = ctx->line;
	if (parsers[k->kind](k, value, section_base(&ctx->conf, (size_t)si), ctx->line, err,
			     sizeof(err)) < 0)
		add_error(ctx->errs, ctx->file, ctx->line, name, "%s", err);
	return 1;
}

/*
 * ---- the line reader -------------------------------------------------------
 *
 * inih as packaged (header defaults) gives the handler no line number, lets
 * an indented line continue the previous value, and cuts lines at
 * INI_MAX_LINE.  So the reader counts lines, refuses over-long and malformed
 * lines itself (so that every one is reported, not only the first), and
 * strips leading blanks, which means indentation is allowed and multi-line
 * values are not.
 */

/*
 * Like inih's own scan: the first of chars, or the start of an inline
 * comment (';' after a blank), or the end of s.
 */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
	bool was_blank = false;

	while (*s && !strchr(chars, *s) && !(was_blank && *s == ';')) {
		was_blank = *s == ' ' || *s == '\t';
		s++;
	}
	return s;
}

/* Report a section header naming no section of ours; name runs from s to end. */
static void check_section(struct parse_ctx *ctx, const char *s, const char *end)
{
	char section[64], list[192];
	size_t len = (size_t)(end - s);

	copy_str(section, len < sizeof(section) ? len + 1 : sizeof(section), s);
	if (find_section(section) < 0)
		add_error(ctx->errs, ctx->file, ctx->line, "", "unknown section '[%s]' (expected %s)",
			  section, sections_text(list, sizeof(list)));
}

/*
 * Check one line (leading blanks already gone) the way inih will read it.
 * Returns false for a line inih would refuse; reports unknown sections.
 */
static bool check_line(struct parse_ctx *ctx, const char *s)
{
	const char *end;

	if (!*s || *s == ';' || *s == '#')
		return true;
	if (*s != '[') {
		end = find_chars_or_comment(s, "=:");
		return *end == '=' || *end == ':';
	}
	end = find_chars_or_comment(s + 1, "]");
	if (*end != ']')
		return false;
	check_section(ctx, s + 1, end);
	return true;
}

/* Read the rest of a line longer than the buffer; returns its length without the line end. */
static size_t line_length(FILE *f, const char *first)
{
	char chunk[RAW_LINE_CHUNK];
	size_t len = strlen(first);

	if (len == 0 || first[len - 1] == '\n')
		return strcspn(first, "\r\n");
	while (fgets(chunk, sizeof(chunk), f)) {
		size_t n = strlen(chunk);

		if (chunk[n - 1] == '\n')
			return len + strcspn(chunk, "\r\n");
		len += n;
	}
	return len;
}

/*
 * The ini_reader: one physical line per call, with leading blanks removed.
 * Over-long and malformed lines are reported here and handed to inih as
 * empty lines, so inih never splits or refuses a line itself.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	char raw[RAW_LINE_CHUNK], *s = raw;
	size_t len;

	if (!fgets(raw, sizeof(raw), ctx->f)) {
		if (ferror(ctx->f))
			ctx->read_errno = errno ? errno : EIO;
		return NULL;
	}
	ctx->line++;
	len = line_length(ctx->f, raw);
	raw[strcspn(raw, "\r\n")] = '\0';
	str[0] = '\0';
	if (len > (size_t)num - 1) {
		add_error(ctx->errs, ctx->file, ctx->line, "",
			  "line too long (%zu characters, at most %d)", len, num - 1);
		return str;
	}
	if (ctx->line == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	s += strspn(s, " \t");
	if (!check_line(ctx, s)) {
		add_error(ctx->errs, ctx->file, ctx->line, "", SYNTAX_MESSAGE);
		/*
		 * A broken section header opens a section no file can name, so
		 * the keys below it are not reported again as misplaced.
		 */
		if (*s == '[')
			copy_str(str, (size_t)num, BROKEN_SECTION);
		return str;
	}
	copy_str(str, (size_t)num, s);
	return str;
}

/* ---- cross-checks after parsing ----------------------------------------- */

struct conf_check {
	struct conf_errors *errs;
	const char *file;
};

void conf_check_error(struct conf_check *chk, int line, const char *key, const char *fmt, ...)
{
	char message[sizeof(chk->errs->list[0].message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	add_error(chk->errs, chk->file, line, key, "%s", message);
}

static const char *describe_taken(size_t n_defaults, int n_configured, char *buf, size_t len)
{
	if (n_defaults && n_configured)
		snprintf(buf, len, "the %zu default events and %d configured event%s", n_defaults,
			 n_configured, n_configured == 1 ? "" : "s");
	else if (n_defaults)
		snprintf(buf, len, "the %zu default events", n_defaults);
	else
		snprintf(buf, len, "%d configured events", n_configured);
	return buf;
}

static bool is_default(const struct event_spec *const *defaults, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(defaults[i]->name, name) == 0)
			return true;
	return false;
}

/* A name may be counted once per PMU, whether it comes from the defaults or a line. */
static void check_duplicates(struct conf_check *chk, const struct conf_event *ev, int n,
			     const struct event_spec *const *defaults, size_t n_defaults)
{
	for (int i = 0; i < n; i++) {
		const char *name = ev[i].spec.name;

		if (is_default(defaults, n_defaults, name)) {
			conf_check_error(chk, ev[i].line, "event",
					 "duplicate event name '%s': already counted as a default "
					 "event (set default_events = no to list it yourself)", name);
			continue;
		}
		for (int j = 0; j < i; j++) {
			if (strcmp(ev[j].spec.name, name) == 0) {
				conf_check_error(chk, ev[i].line, "event",
						 "duplicate event name '%s', first configured on line %d",
						 name, ev[j].line);
				break;
			}
		}
	}
}

int conf_check_events(struct conf_check *chk, const struct conf_event *ev, int n,
		      enum event_pmu pmu, bool use_defaults, size_t capacity, char *taken,
		      size_t takenlen)
{
	size_t n_defaults = 0;
	const struct event_spec *const *defaults = event_defaults(pmu, &n_defaults);

	if (!use_defaults)
		n_defaults = 0;
	check_duplicates(chk, ev, n, defaults, n_defaults);
	for (int i = 0; i < n; i++) {
		if (n_defaults + (size_t)i < capacity)
			continue;
		describe_taken(n_defaults, i, taken, takenlen);
		return i;
	}
	return -1;
}

/* A configuration that turns every collector off would run a daemon that collects nothing. */
static void check_some_collector_enabled(const struct conf *conf, struct conf_check *chk)
{
	char names[256] = "";
	size_t len = 0;

	size_t n = conf_collector_count();

	for (size_t i = 0; i < n; i++) {
		if (conf_collector_enabled(i, conf))
			return;
		len += (size_t)snprintf(names + len, len < sizeof(names) ? sizeof(names) - len : 0,
					"%s[%s]", i == 0 ? "" : i + 1 == n ? " or " : ", ",
					conf_collector_name(i));
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	conf_check_error(chk, 0, "", "every collector is disabled, so uncored would collect nothing; "
			 "set enabled = yes in %s", names);
}

static void validate(struct parse_ctx *ctx)
{
	struct conf_check chk = { .errs = ctx->errs, .file = ctx->file };

	for (size_t i = 0; i < n_sections(); i++)
		if (section_at(i)->check)
			section_at(i)->check(&ctx->conf, &chk);
	check_some_collector_enabled(&ctx->conf, &chk);
}

/* ---- loading -------------------------------------------------------------- */

/* Stable, by line, so the operator reads the errors top to bottom. */
static void sort_errors(struct conf_errors *errs)
{
	int n = errs->n < CONF_MAX_ERRORS ? errs->n : CONF_MAX_ERRORS;

	for (int i = 1; i < n; i++) {
		struct conf_error e = errs->list[i];
		int j = i;

		for (; j > 0 && errs->list[j - 1].line > e.line; j--)
			errs->list[j] = errs->list[j - 1];
		errs->list[j] = e;
	}
}

static int load_stream(const char *name, FILE *f, struct conf *ret_conf, struct conf_errors *errs)
{
	struct parse_ctx *ctx = calloc(1, sizeof(*ctx));
	int r;

	if (!ctx) {
		add_error(errs, name, 0, "", "out of memory");
		return -ENOMEM;
	}
	*ctx = (struct parse_ctx){ .f = f, .file = name, .errs = errs };
	conf_defaults(&ctx->conf);
	r = ini_parse_stream(read_line, ctx, handle_key, ctx);
	if (ctx->read_errno) {
		r = -ctx->read_errno;
		add_error(errs, name, 0, "", "cannot read: %s", strerror(ctx->read_errno));
		goto out;
	}
	if (r > 0 && !has_error_at(errs, r))
		add_error(errs, name, r, "", SYNTAX_MESSAGE);
	else if (r < 0)
		add_error(errs, name, 0, "", "out of memory");
	validate(ctx);
	sort_errors(errs);
	r = errs->n ? -EINVAL : 0;
	if (r == 0)
		*ret_conf = ctx->conf;
out:
	free(ctx);
	return r;
}

int conf_load(const char *path, struct conf *ret_conf, struct conf_errors *errs)
{
	char *text, err[sizeof(errs->list[0].message)];
	size_t len;
	int line, r;
	FILE *f;

	errs->n = 0;
	/* The bytes are checked first: type, size, NUL bytes, lone CRs (conf_file.h). */
	r = conf_file_read(path, &text, &len, &line, err, sizeof(err));
	if (r < 0) {
		add_error(errs, path, line, "", "%s", err);
		return r;
	}
	f = fmemopen(text, len, "r");
	if (!f) {
		r = -errno;
		add_error(errs, path, 0, "", "cannot open: %s", strerror(-r));
		free(text);
		return r;
	}
	r = load_stream(path, f, ret_conf, errs);
	fclose(f);
	free(text);
	return r;
}

int conf_load_string(const char *name, const char *text, struct conf *ret_conf,
		     struct conf_errors *errs)
{
	size_t len = strlen(text);
	char *copy = malloc(len + 1);
	FILE *f;
	int r;

	errs->n = 0;
	f = copy ? fmemopen(copy, len, "r") : NULL;
	if (!f) {
		r = copy ? -errno : -ENOMEM;
		add_error(errs, name, 0, "", "cannot open: %s", strerror(-r));
		free(copy);
		return r;
	}
	memcpy(copy, text, len + 1);
	r = load_stream(name, f, ret_conf, errs);
	fclose(f);
	free(copy);
	return r;
}

const char *conf_error_format(const struct conf_error *e, char *buf, size_t len)
{
	char line[16] = "";

	if (e->line > 0)
		snprintf(line, sizeof(line), ":%d", e->line);
	snprintf(buf, len, "%s%s: %s%s%s", e->file, line, e->key, *e->key ? ": " : "", e->message);
	return buf;
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
