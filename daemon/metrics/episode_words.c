/*
 * Episodes in words and what took part in them (episode.h): the place and
 * the condition as the log, the --once table and the page say them, the
 * slots and the DRAM levels of a channel's episode.
 */
#include <stdio.h>
#include <string.h>

#include "episode.h"
#include "metric.h"

/* Whether a part of e gives label name the value value. */
static bool part_has(const struct snapshot_episode *e, const char *name, const char *value)
{
	char buf[SNAPSHOT_EPISODE_PART_LABELS];

	for (int i = 0; i < e->n_parts; i++)
		if (metric_label_value(e->parts[i].family, e->parts[i].labels, name, buf, sizeof(buf)) &&
		    strcmp(buf, value) == 0)
			return true;
	return false;
}

uint32_t episode_slots(const struct snapshot_episode *e)
{
	uint32_t mask = 0;

	for (int i = 0; i < e->n_parts; i++) {
		int slot = metric_label_number(e->parts[i].family, e->parts[i].labels, "slot");

		if (slot >= 0 && slot < 32)
			mask |= 1u << slot;
	}
	return mask;
}

/* Append text to buf (len bytes, NUL-terminated), truncating. */
static void append(char *buf, size_t len, const char *text)
{
	size_t n = strlen(buf);

	if (n + 1 < len)
		snprintf(buf + n, len - n, "%s", text);
}

/* Append " (a and b)" of the words of the values of label name that e's parts give. */
static void append_values(char *buf, size_t len, const struct snapshot_episode *e,
			  const char *name, const char *const *values, const char *const *words)
{
	int n = 0;

	for (int i = 0; values[i]; i++) {
		if (!part_has(e, name, values[i]))
			continue;
		append(buf, len, n == 0 ? " " : " and ");
		append(buf, len, words[i]);
		n++;
	}
}

void episode_levels(const struct snapshot_episode *e, bool *ret_warning, bool *ret_critical)
{
	*ret_warning = *ret_critical = false;
	for (int i = 0; i < e->n_parts; i++) {
		bool critical = strcmp(e->parts[i].family->json_key,
				       "dram_critical_throttled_seconds") == 0;

		*ret_critical = *ret_critical || critical;
		*ret_warning = *ret_warning || !critical;
	}
}

static void describe_dram(const struct snapshot_episode *e, char *what, size_t len)
{
	static const char *const causes[] = { "thermal", "power", NULL };
	static const char *const cause_words[] = { "heat", "power" };
	bool warning, critical;

	episode_levels(e, &warning, &critical);
	snprintf(what, len, "DRAM throttled");
	if (part_has(e, "cause", "thermal") || part_has(e, "cause", "power")) {
		append(what, len, " for");
		append_values(what, len, e, "cause", causes, cause_words);
	} else if (part_has(e, "cause", "thermal_or_power")) {
		append(what, len, " for heat or power");
	}
	if (critical)
		append(what, len, ", critical level reached");
}

static void describe_prochot(const struct snapshot_episode *e, char *what, size_t len)
{
	static const char *const sources[] = { "external", "internal", NULL };
	size_t n;

	snprintf(what, len, "PROCHOT asserted");
	n = strlen(what);
	append_values(what, len, e, "source", sources, sources);
	if (strlen(what) > n) {
		/* " external and internal" → " (external and internal)" */
		char tail[64];

		snprintf(tail, sizeof(tail), "%s", what + n + 1);
		what[n] = '\0';
		append(what, len, " (");
		append(what, len, tail);
		append(what, len, ")");
	}
	if (part_has(e, "reason", "prochot"))
		append(what, len, ", frequency limited");
}

static void describe_frequency(const struct snapshot_episode *e, char *what, size_t len)
{
	char buf[SNAPSHOT_EPISODE_PART_LABELS];
	int n = 0;

	snprintf(what, len, "frequency limited");
	for (int i = 0; i < e->n_parts; i++) {
		if (!metric_label_value(e->parts[i].family, e->parts[i].labels, "reason", buf, sizeof(buf)))
			continue;
		for (char *c = buf; *c; c++)
			if (*c == '_')
				*c = ' ';
		append(what, len, n == 0 ? " by " : ", ");
		append(what, len, strcmp(buf, "thermal") == 0 ? "heat" : buf);
		n++;
	}
}

void episode_describe(const struct snapshot_episode *e, char *place, size_t place_len,
		      char *what, size_t what_len)
{
	static const struct { const char *kind, *words; } fixed[] = {
		{ "dram_thermal_throttling", "DRAM throttled for heat" },
		{ "prochot", "PROCHOT asserted" },
		{ "core_thermal_throttling", "core throttled for heat" },
		{ "package_thermal_throttling", "package throttled for heat" },
	};
	const char *kind = e->kind ? e->kind : "?";
	uint32_t slots = episode_slots(e);
	char part[32];

	snprintf(place, place_len, "socket %d", e->socket);
	if (e->die >= 0) {
		snprintf(part, sizeof(part), " die %d", e->die);
		append(place, place_len, part);
	}
	if (e->channel >= 0) {
		snprintf(part, sizeof(part), " channel %d", e->channel);
		append(place, place_len, part);
	}
	for (int i = 0, n = 0; i < 32; i++) {
		if (!(slots & (1u << i)))
			continue;
		snprintf(part, sizeof(part), "%s%d",
			 n > 0 ? ", " : (slots & (slots - 1)) ? " slots " : " slot ", i);
		append(place, place_len, part);
		n++;
	}
	if (e->core >= 0) {
		snprintf(part, sizeof(part), " core %d", e->core);
		append(place, place_len, part);
	}

	if (strcmp(kind, "dram_throttled_seconds") == 0) {
		describe_dram(e, what, what_len);
		return;
	}
	if (strcmp(kind, "prochot_seconds") == 0) {
		describe_prochot(e, what, what_len);
		return;
	}
	if (strcmp(kind, "frequency_limited_seconds") == 0) {
		describe_frequency(e, what, what_len);
		return;
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (strcmp(kind, fixed[i].kind) == 0) {
			snprintf(what, what_len, "%s", fixed[i].words);
			return;
		}
	}
	snprintf(what, what_len, "%s", kind);
}

