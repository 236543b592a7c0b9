/*
 * The generation-independent throttling families: see throttle_families.h.
 */
#include <string.h>

#include "snapshot.h"
#include "throttle_families.h"

#define DRAM_HELP "Seconds the memory was throttled, per socket and memory channel where the " \
	"hardware has channels; cause is what the hardware tells apart (thermal, power, " \
	"or thermal_or_power where it cannot)."
#define CRITICAL_HELP "Seconds a memory channel was critically throttled (part of its " \
	"throttled seconds)."
#define PROCHOT_HELP "Seconds PROCHOT was asserted, by source: external (an agent off the die: " \
	"a voltage regulator, the board, hot DRAM only where the board wires it so) or " \
	"internal (the die's own sensors)."
/* The --once table shows each on lines of their own (metric.h table_labels_titled). */
#define DRAM_TABLE .table_title = "DRAM throttled", .table_labels_titled = true
#define PROCHOT_TABLE .table_title = "PROCHOT", .table_labels_titled = true
#define FREQ_TABLE .table_title = "frequency limited", .table_labels_titled = true
#define FREQ_HELP "Seconds the maximum frequency was limited, by reason: thermal or power."

/* Every one is a socket's seconds, counted as a fraction of its clock. */
#define SOCKET_SECONDS .type = METRIC_COUNTER, .unit = "seconds", .scope = METRIC_SCOPE_SOCKET, \
	.kind = METRIC_DOUBLE, .signal = METRIC_SIGNAL_THROTTLE_SECONDS

/*
 * Each family once, with the label sets the generations give it (one
 * Prometheus family, one JSON field, whatever the labels).
 */
#define DRAM_FAMILY(labels) { \
	.name = "uncored_dram_throttled_seconds_total", .help = DRAM_HELP, SOCKET_SECONDS, \
	.label = labels, \
	.json_key = "dram_throttled_seconds", .json_order = METRIC_JSON_SOCKET_FIXED + 400, \
	DRAM_TABLE, \
}
#define CRITICAL_FAMILY(labels) { \
	.name = "uncored_dram_critical_throttled_seconds_total", .help = CRITICAL_HELP, \
	SOCKET_SECONDS, .label = labels, \
	.json_key = "dram_critical_throttled_seconds", .json_order = METRIC_JSON_SOCKET_FIXED + 410, \
}
#define PROCHOT_FAMILY(labels) { \
	.name = "uncored_prochot_seconds_total", .help = PROCHOT_HELP, SOCKET_SECONDS, \
	.label = labels, \
	.json_key = "prochot_seconds", .json_order = METRIC_JSON_SOCKET_FIXED + 420, \
	PROCHOT_TABLE, \
}
#define FREQ_FAMILY(labels) { \
	.name = "uncored_frequency_limited_seconds_total", .help = FREQ_HELP, SOCKET_SECONDS, \
	.label = labels, \
	.json_key = "frequency_limited_seconds", .json_order = METRIC_JSON_SOCKET_FIXED + 430, \
	FREQ_TABLE, \
}

const struct metric_family throttle_dram_channel_seconds = DRAM_FAMILY("channel,cause");
const struct metric_family throttle_dram_socket_seconds = DRAM_FAMILY("cause");
const struct metric_family throttle_dram_critical_seconds = CRITICAL_FAMILY("channel,cause");
const struct metric_family throttle_prochot_seconds = PROCHOT_FAMILY("source");
const struct metric_family throttle_frequency_limited_seconds = FREQ_FAMILY("reason");
const struct metric_family throttle_dram_slot_seconds = DRAM_FAMILY("channel,slot,cause");
const struct metric_family throttle_dram_bw_slot_seconds = {
	.name = "uncored_dram_throttled_seconds_total", .help = DRAM_HELP, SOCKET_SECONDS,
	.label = "channel,slot,cause",
	.json_key = "dram_slot_throttled_seconds", .json_order = METRIC_JSON_SOCKET_FIXED + 405,
	DRAM_TABLE,
};
const struct metric_family throttle_dram_slot_critical_seconds =
	CRITICAL_FAMILY("channel,slot,cause");
const struct metric_family throttle_dram_die_channel_seconds = DRAM_FAMILY("die,channel,cause");
const struct metric_family throttle_dram_die_critical_seconds =
	CRITICAL_FAMILY("die,channel,cause");
const struct metric_family throttle_prochot_die_seconds = PROCHOT_FAMILY("die,source");
const struct metric_family throttle_frequency_limited_die_seconds = FREQ_FAMILY("die,reason");

double throttle_seconds(uint64_t events, uint64_t clockticks, uint64_t wall_ns)
{
	double ratio;

	if (clockticks == 0)
		return 0.0;
	ratio = (double)events / (double)clockticks;
	if (ratio > 1.0)
		ratio = 1.0;
	return ratio * (double)wall_ns / 1e9;
}

/* The throttle_share f's values count toward, or -1. */
static int share_of(const struct metric_family *f)
{
	static const char *const keys[THROTTLE_SHARE_COUNT] = {
		[THROTTLE_SHARE_DRAM] = "dram_throttled_seconds",
		[THROTTLE_SHARE_PROCHOT] = "prochot_seconds",
		[THROTTLE_SHARE_FREQUENCY_LIMITED] = "frequency_limited_seconds",
	};

	if (f->signal != METRIC_SIGNAL_THROTTLE_SECONDS || !f->json_key)
		return -1;
	for (int k = 0; k < THROTTLE_SHARE_COUNT; k++)
		if (strcmp(f->json_key, keys[k]) == 0)
			return k;
	return -1;
}

/* Fold value v of f at socket (prev's the same, or NULL) into has[] and worst[]. */
static void fold_share(const struct metric_family *f, const struct metric_sample *v,
		       const struct metric_sample *was, bool has[THROTTLE_SHARE_COUNT],
		       double worst[THROTTLE_SHARE_COUNT])
{
	int k = share_of(f);

	if (k < 0)
		return;
	has[k] = true;
	if (was && v->value.d - was->value.d > worst[k])
		worst[k] = v->value.d - was->value.d;
}

void throttle_worst_shares(const struct snapshot *prev, const struct snapshot *s, int socket,
			   bool has[THROTTLE_SHARE_COUNT], double share[THROTTLE_SHARE_COUNT])
{
	double span = prev && s && s->mono > prev->mono ? s->mono - prev->mono : 0;
	double worst[THROTTLE_SHARE_COUNT] = { 0 };

	for (int i = 0; i < THROTTLE_SHARE_COUNT; i++)
		has[i] = false;
	/* The families' values at the socket: the labelled ones' chains, the others' one value. */
	for (int labelled = 0; s && labelled < 2; labelled++) {
		size_t n;
		const struct metric_family *const *fam = metric_families_with_signal(
			METRIC_SIGNAL_THROTTLE_SECONDS, METRIC_SCOPE_SOCKET, labelled, &n);

		for (size_t i = 0; i < n; i++) {
			const struct metric_sample *v = labelled
				? snapshot_first_labelled(s, fam[i], socket)
				: snapshot_find_sample(s, fam[i], socket, NULL);

			for (; v; v = labelled ? snapshot_next_labelled(s, v) : NULL)
				fold_share(fam[i], v,
					   span > 0 ? snapshot_find_sample(prev, fam[i], socket,
									   v->label_value)
						    : NULL,
					   has, worst);
		}
	}
	for (int i = 0; i < THROTTLE_SHARE_COUNT; i++)
		share[i] = span > 0 && worst[i] < span ? worst[i] / span : span > 0 ? 1 : 0;
}
