/*
 * The checks across keys after a configuration is parsed: each section's
 * own (conf_section.check, with conf_check_error() and
 * conf_check_events() for the event lists) and that some collector is
 * enabled.  What a value alone must be is checked by its key's parser
 * (conf.c); what start-up must find on the machine, by conf_check.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conf.h"
#include "conf_keys.h"

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
	conf_add_error(chk->errs, chk->file, line, key, "%s", message);
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

void conf_validate(const struct conf *conf, const char *file, struct conf_errors *errs)
{
	struct conf_check chk = { .errs = errs, .file = file };

	for (size_t i = 0; i < conf_n_sections(); i++)
		if (conf_section_at(i)->check)
			conf_section_at(i)->check(conf, &chk);
	check_some_collector_enabled(conf, &chk);
}
