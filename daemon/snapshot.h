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
 * Absent hardware is recorded as has_* = false, never as zero values, so
 * formatters can omit it (SPEC §5).
 */
#ifndef UNCORED_SNAPSHOT_H
#define UNCORED_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNAPSHOT_MAX_EVENTS 16
#define SNAPSHOT_MAX_CORE_CPUS 8

enum snapshot_collector_id {
	SNAPSHOT_COLLECTOR_UNCORE,
	SNAPSHOT_COLLECTOR_THERMAL,
	SNAPSHOT_COLLECTOR_CORE,
	SNAPSHOT_COLLECTOR_COUNT
};

struct snapshot_collector {
	const char *name;          /* "uncore", "thermal", "core" (static strings) */
	bool enabled;              /* configured on; a disabled collector is still listed */
	bool up;
	char reason[192];          /* why not up, or a degradation note; "" when none */
	uint64_t errors;           /* failed hardware reads since start */
};

/*
 * One counted event: a total since start, or unavailable with a reason.
 * Both strings belong to the snapshot (see snapshot_set_event), so one
 * copy of each distinct text serves every CPU.
 */
struct snapshot_event {
	const char *name;
	const char *reason;        /* why unavailable, "" otherwise */
	uint64_t total;
	bool available;
};

struct snapshot_core {
	int core;                  /* physical core id */
	int n_cpus;
	int cpus[SNAPSHOT_MAX_CORE_CPUS];
	bool has_temperature;      /* reading-valid bit was set */
	int temperature_c;
	bool has_status;           /* IA32_THERM_STATUS read this sample */
	bool thermal_throttling;
	bool prochot_active;
	bool has_kernel_throttles;
	uint64_t kernel_throttles;
};

struct snapshot_socket {
	int socket;

	bool has_tjmax;
	int tjmax_c;
	bool has_package_status;   /* IA32_PACKAGE_THERM_STATUS read this sample */
	bool has_package_temperature;
	int package_temperature_c;
	bool package_thermal_throttling;
	bool package_prochot_active;
	bool has_kernel_package_throttles;
	uint64_t kernel_package_throttles;

	bool has_rapl;
	double rapl_package_throttled_s;
	double rapl_dram_throttled_s;

	bool has_uncore;           /* the uncore collector counts on this socket */
	bool has_uncore_clockticks;
	uint64_t uncore_clockticks;
	int n_uncore_events;
	struct snapshot_event *uncore_events;   /* owned by the snapshot */
	uint64_t uncore_conflicts;

	int n_cores;
	struct snapshot_core *cores;
};

struct snapshot_cpu {
	int cpu;
	int socket;
	int core;
	bool online;
	bool has_core_pmu;         /* the core collector counts on this CPU */
	bool has_instructions, has_cycles, has_ref_cycles;
	uint64_t instructions, cycles, ref_cycles;
	int n_events;
	struct snapshot_event *events;          /* owned by the snapshot */
	uint64_t conflicts;
};

struct snapshot_episode {
	const char *kind;          /* "dram_thermal_throttling", "prochot", "core_thermal_throttling",
				      "package_thermal_throttling" (static strings) */
	int socket;
	int core;                  /* -1 when not per core */
	double start;              /* unix time, seconds */
	double end;                /* 0 while ongoing */
};

/* A formatted document: len bytes, NUL-terminated (render.c). */
struct snapshot_bytes {
	size_t len;
	char data[];
};

#define SNAPSHOT_N_RENDERED 8

struct snapshot_cpu_id {
	char vendor[13];
	unsigned family, model, stepping;
	char microarch[32];
};

struct snapshot {
	atomic_int refs;

	double time;               /* unix time of the sample */
	double interval_s;
	uint64_t samples;          /* samples taken since start, this one included */
	double last_sample_duration_s;
	char version[32];

	struct snapshot_cpu_id cpu_id;
	struct snapshot_collector collectors[SNAPSHOT_COLLECTOR_COUNT];

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

	/* Storage for events and their strings, freed with the snapshot. */
	bool is_short_of_memory;   /* some events were left out: no memory for them */
	struct snapshot_block *blocks;
	struct snapshot_string *strings;
};

struct cpu_topology;
struct cpu_info;

/*
 * Allocate a snapshot shaped after topo: one socket entry per socket with
 * its cores (cpus filled in), one cpu entry per logical CPU, everything
 * else zero and has_* false.  refs = 1 (the caller's).  NULL on ENOMEM.
 * The cpu identity is copied from info (left empty when info is NULL), the
 * collector names are set and version is the build's version string.
 */
struct snapshot *snapshot_new(const struct cpu_topology *topo, const struct cpu_info *info);

/* The socket entry for socket id, or NULL. */
struct snapshot_socket *snapshot_socket(struct snapshot *s, int socket);

/* The core entry for (socket, core), or NULL. */
struct snapshot_core *snapshot_core(struct snapshot *s, int socket, int core);

/* The cpu entry for logical CPU cpu, or NULL. */
struct snapshot_cpu *snapshot_cpu(struct snapshot *s, int cpu);

/*
 * n zeroed events owned by s and freed with it, for a socket's
 * uncore_events or a CPU's events; NULL on ENOMEM (or n = 0).  Only while
 * s is being filled.  Every ENOMEM here or in snapshot_set_event sets
 * s->is_short_of_memory, so that the caller may leave the events out.
 */
struct snapshot_event *snapshot_alloc_events(struct snapshot *s, size_t n);

/*
 * Set *ev.  name and reason (NULL means "") are copied into s, once per
 * distinct text however many events use it.  -ENOMEM leaves *ev as it
 * was.  Only while s is being filled.
 */
int snapshot_set_event(struct snapshot *s, struct snapshot_event *ev, const char *name,
		       bool available, uint64_t total, const char *reason);

/*
 * Add (sign > 0) or subtract (sign < 0) the counter totals that collector
 * id exports in src to those in dst, matching sockets and CPUs by id and
 * events by name (an event unavailable in src adds nothing).  Uncore: the
 * clockticks, conflicts and events; thermal: the RAPL throttled times;
 * core: the fixed counters, conflicts and events.  Gauges, kernel counts
 * and collector error counts are left alone.  Only for a snapshot nobody
 * else can see yet (or any more).
 */
void snapshot_add_totals(struct snapshot *dst, const struct snapshot *src,
			 enum snapshot_collector_id id, int sign);

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

/* The current snapshot with a new reference, or NULL before the first publish. */
struct snapshot *snapshot_acquire(void);

/* Drop a reference; frees the snapshot on the last one.  NULL is allowed. */
void snapshot_release(struct snapshot *s);

/* Drop the current snapshot (at exit). */
void snapshot_clear(void);

#endif
