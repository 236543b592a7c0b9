/*
 * The snapshot: every value one sample produced, as a plain immutable
 * value once published.
 *
 * The sampler allocates a snapshot shaped after the topology
 * (snapshot_new), the collectors fill their parts, the sampler publishes
 * it (snapshot_publish) and from then on nobody writes it.  Readers (HTTP
 * threads, --once) take a reference with snapshot_acquire() and drop it with
 * snapshot_release(); the last release frees it.  Publishing never waits
 * for readers and readers never wait for the sampler beyond a pointer swap.
 *
 * The collectors' values are added through the sample API (metric.h);
 * absent hardware is recorded by not adding its value, never as zero
 * values, so formatters can omit it (SPEC §5).
 */
#ifndef UNCORED_SNAPSHOT_H
#define UNCORED_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAPSHOT_MAX_CORE_CPUS 8

#define SNAPSHOT_MAX_COLLECTORS 12

struct snapshot_collector {
	const char *name;          /* the collector's name (a static string) */
	bool enabled;              /* configured on; a disabled collector is still listed */
	bool not_applicable;       /* enabled, but this machine lacks its facility (never "down") */
	bool up;                   /* counting on all its units */
	unsigned units;            /* the units it counts on (CPUs, sockets); 0: none reported */
	unsigned units_counting;   /* of which it counts on this many: partial when some */
	unsigned throttle_signals; /* what it delivers on this CPU when up (throttle_signal.h) */
	const char *reason;        /* why not up, then the degradations, "; "-separated (collector.h);
				      "" when none; owned by the snapshot */
	uint64_t errors;           /* failed hardware reads since start */
	const char *engine;        /* a PMU collector's counter engine ("perf", "msr", static);
				      NULL for a collector without one */
	const char *engine_why;    /* why that engine; owned by the snapshot */
};

struct snapshot_core {
	int core;                  /* physical core id */
	int n_cpus;
	int cpus[SNAPSHOT_MAX_CORE_CPUS];   /* ascending; cpus[0] is where a core's values are
					       (METRIC_SCOPE_CORE) */
};

struct snapshot_socket {
	int socket;
	int n_cores;
	struct snapshot_core *cores;
};

struct snapshot_cpu {
	int cpu;
	int socket;
	int core;
	bool online;
};

struct metric_family;

/* The series one episode records, and the room for each one's label value. */
#define SNAPSHOT_EPISODE_PARTS 12
#define SNAPSHOT_EPISODE_PART_LABELS 32

/* A throttle family's series that took part in an episode. */
struct snapshot_episode_part {
	const struct metric_family *family;
	char labels[SNAPSHOT_EPISODE_PART_LABELS];  /* its whole label value (METRIC_LABEL_SEP-separated) */
};

/*
 * One condition at one place (episode.h): DRAM throttled on a channel,
 * PROCHOT on a socket, a core throttled.  It runs from the stamp of the
 * first sample that saw the condition to the stamp of the last.
 */
struct snapshot_episode {
	/*
	 * "dram_thermal_throttling", "prochot", "core_thermal_throttling",
	 * "package_thermal_throttling" from the thermal bits and events, or
	 * for the throttle families the JSON key of the condition's family:
	 * "dram_throttled_seconds" (every DRAM family: channel, slot,
	 * critical), "prochot_seconds" (with AMD's frequency limited by
	 * PROCHOT), "frequency_limited_seconds"; static strings.
	 */
	const char *kind;
	int socket;
	int core;                  /* -1 when not per core */
	int die;                   /* -1 when the place has no die */
	int channel;               /* -1 when the place is no memory channel */
	double start;              /* unix time of the first sample that saw it, seconds */
	double end;                /* unix time of the last; 0 while ongoing */
	double running_s;          /* from the first sample that saw it to the newest that did */
	uint64_t id;               /* 1, 2, ... in start order, since the daemon started */
	double mono_start;         /* CLOCK_MONOTONIC, seconds */
	double mono_end;           /* 0 while ongoing */
	/* The condition's family (throttle_families.h); NULL for the bits and events. */
	const struct metric_family *family;
	int n_parts;               /* the series that took part, in the order they joined */
	bool parts_dropped;        /* more took part than SNAPSHOT_EPISODE_PARTS */
	struct snapshot_episode_part parts[SNAPSHOT_EPISODE_PARTS];
	bool has_peak;             /* a temperature of the socket was read during it */
	int peak_celsius;          /* the socket's hottest temperature read during it */
	double throttled_s;        /* per sample, the most seconds one of its series counted */
	double sampled_s;          /* the sample intervals it covered */
};

/* A formatted document: len bytes, NUL-terminated (render.c). */
struct snapshot_bytes {
	size_t len;
	char data[];
};

#define SNAPSHOT_N_RENDERED 10

struct snapshot_cpu_id {
	char vendor[13];
	unsigned family, model, stepping;
	char microarch[32];
};

enum { SNAPSHOT_JOURNAL_DOWN = 1, SNAPSHOT_JOURNAL_UP = 2 };

struct snapshot {
	atomic_int refs;

	double time;               /* unix time of the sample */
	/*
	 * The hardware's clock at the sample, in seconds (hw_now_ns():
	 * CLOCK_MONOTONIC on a host, the simulator's own clock on it): what
	 * the time between two samples is measured on, never the wall clock,
	 * which NTP may step and which a simulator's stepped clock leaves.
	 */
	double mono;
	double interval_s;
	uint64_t samples;          /* samples taken since start, this one included */
	double last_sample_duration_s;
	uint64_t cpus_went_offline;   /* CPUs seen going offline since start (hotplug.h) */
	uint64_t cpus_came_online;    /* and coming online */
	/*
	 * Whether register changes are journaled to the state file: 0 not
	 * reported (a simulated machine), SNAPSHOT_JOURNAL_DOWN (no journal:
	 * state_file = none, or the msr engine programs nothing since the
	 * file could not be set up), SNAPSHOT_JOURNAL_UP.
	 */
	int journal;
	char version[32];

	struct snapshot_cpu_id cpu_id;
	int n_collectors;          /* in registration order (collector.h) */
	struct snapshot_collector collectors[SNAPSHOT_MAX_COLLECTORS];

	int n_sockets;
	struct snapshot_socket *sockets;
	int n_cpus;
	struct snapshot_cpu *cpus;

	int n_episodes;            /* newest first */
	struct snapshot_episode *episodes;

	/* The history document current at this sample (history.h); may be NULL. */
	struct history_doc *history;

	/* Documents as HTTP sends them, made once on first use by render.c. */
	_Atomic(struct snapshot_bytes *) rendered[SNAPSHOT_N_RENDERED];

	/* Values added through the sample API (metric.h), in the order added. */
	int source;                /* who adds values now (collector.c): registry index + 1, or 0 */
	int n_values, cap_values;
	struct metric_sample *values;
	int *value_index;          /* metric.c's hash of values: index + 1, 0 for free */
	int cap_value_index;       /* a power of two, at least twice cap_values */

	/* Storage for texts, freed with the snapshot. */
	bool is_short_of_memory;   /* some values were left out: no memory for them */
	struct snapshot_block *blocks;
	struct snapshot_string **string_buckets;   /* snapshot.c's hash table of texts */
};

/*
 * The one staleness rule (SPEC §6): the sampler is healthy while its last
 * sample is at most SNAPSHOT_STALE_INTERVALS sampling intervals old.
 * /healthz and the systemd watchdog both judge by it.
 */
#define SNAPSHOT_STALE_INTERVALS 3

/* The oldest a last sample may be, in seconds, at sampling interval interval_s. */
static inline double snapshot_stale_limit_s(double interval_s)
{
	return SNAPSHOT_STALE_INTERVALS * interval_s;
}

struct cpu_topology;
struct cpu_info;

/*
 * Allocate a snapshot shaped after topo: one socket entry per socket with
 * its cores (cpus filled in), one cpu entry per logical CPU, no values.  refs = 1 (the caller's).  NULL on ENOMEM.
 * The cpu identity is copied from info (left empty when info is NULL), and
 * version is the build's version string.  No collector is listed yet.
 */
struct snapshot *snapshot_new(const struct cpu_topology *topo, const struct cpu_info *info);

/* The socket entry for socket id, or NULL. */
struct snapshot_socket *snapshot_socket(struct snapshot *s, int socket);

/* The core entry for (socket, core), or NULL. */
struct snapshot_core *snapshot_core(struct snapshot *s, int socket, int core);

/* The cpu entry for logical CPU cpu, or NULL. */
struct snapshot_cpu *snapshot_cpu(struct snapshot *s, int cpu);

/*
 * s's copy of text (copied once per distinct text), or NULL on ENOMEM
 * (which sets s->is_short_of_memory).  Only while s is being filled.
 */
const char *snapshot_intern(struct snapshot *s, const char *text);

/*
 * The entry of collector name, listed after the others on first use (all
 * zero but the name, reason ""); NULL when SNAPSHOT_MAX_COLLECTORS are
 * listed.  name must outlive s.  Only while s is being filled.
 */
struct snapshot_collector *snapshot_add_collector(struct snapshot *s, const char *name);

/*
 * What c's entry says, as one word for every output: "disabled" (by the
 * configuration), "not_applicable" (this machine lacks the facility),
 * "up", or "down" (it should work and does not).
 */
const char *snapshot_collector_state(const struct snapshot_collector *c);

/* Whether c is expected to work here: enabled and applicable (uncored_collector_up lists it). */
static inline bool snapshot_collector_applies(const struct snapshot_collector *c)
{
	return c->enabled && !c->not_applicable;
}

/* The entry of collector name, or NULL. */
const struct snapshot_collector *snapshot_find_collector(const struct snapshot *s,
							 const char *name);

/*
 * Make s the current snapshot, taking over the caller's reference.  The
 * previous one is released.
 */
void snapshot_publish(struct snapshot *s);

/*
 * Call hook(s, arg) after every snapshot_publish() of a snapshot s, in the
 * publishing thread, while it holds a reference to s (the privilege
 * separation hands the formatted documents to the server from here).
 * hook NULL removes it.  Set it before the publishing thread starts.
 */
void snapshot_set_publish_hook(void (*hook)(struct snapshot *s, void *arg), void *arg);

/*
 * Call hook() at the start of every snapshot_acquire(), in the acquiring
 * thread, before the current snapshot is taken: the privilege
 * separation's server publishes the hardware side's newest sample from
 * there, when a client asks, rather than being woken for each sample.
 * hook may publish (never acquire: it would call itself); several threads
 * may call it at once.  NULL (the default) removes it.  Set it before
 * any thread acquires.
 */
void snapshot_set_refresh_hook(void (*hook)(void));

/*
 * The current snapshot with a new reference, or NULL before the first
 * publish.  Runs the refresh hook first, when one is set.
 */
struct snapshot *snapshot_acquire(void);

/* Drop a reference; frees the snapshot on the last one.  NULL is allowed. */
void snapshot_release(struct snapshot *s);

/* Drop the current snapshot (at exit). */
void snapshot_clear(void);

#endif
