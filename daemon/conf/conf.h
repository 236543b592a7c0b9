/*
 * The configuration file (SPEC §7): an ini file read with inih into a
 * plain struct conf.  Every error is collected with its file, line and key;
 * a file with any error is refused whole.  The key tables and value
 * parsers are conf.c, the reading and section walk conf_load.c, the
 * checks across keys conf_validate.c.
 */
#ifndef UNCORED_CONF_H
#define UNCORED_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define CONF_MAX_EVENTS 16
#define CONF_MAX_ERRORS 64

/*
 * Collectors with a settings block in struct conf, and the size of each
 * block (a multiple of 16): room for a PMU collector's CONF_MAX_EVENTS
 * events and its other keys.
 */
#define CONF_MAX_COLLECTORS 12
#define CONF_SETTINGS_BYTES 1088

enum conf_conflict_policy {
	CONF_CONFLICT_RECLAIM,  /* reprogram our counter and note the lost interval */
	CONF_CONFLICT_YIELD,    /* release the counter, report the event unavailable */
};

enum conf_log_level {
	CONF_LOG_ERROR, CONF_LOG_WARNING, CONF_LOG_NOTICE, CONF_LOG_INFO, CONF_LOG_DEBUG,
};

/* "reclaim", "yield": the names of enum conf_conflict_policy, NULL-terminated. */
extern const char *const conf_conflict_names[];

/* How a PMU collector counts (its engine key; engine.h, col_engine.h). */
enum conf_engine {
	CONF_ENGINE_AUTO,       /* the collector's default: see its conf_section */
	CONF_ENGINE_PERF,       /* the kernel's perf_event_open (engine_perf.h) */
	CONF_ENGINE_MSR,        /* direct programming through the msr driver (engine_msr.h) */
};

/* "auto", "perf", "msr": the names of enum conf_engine, NULL-terminated. */
extern const char *const conf_engine_names[];

struct conf_event {
	struct event_spec spec;
	int line;                     /* where it was configured */
};

struct conf {
	/* [daemon] */
	char listen[128];             /* "ADDR:PORT", "[V6ADDR]:PORT" */
	/*
	 * 0.05 .. 60.  The interval must stay far below the shortest counter
	 * wrap period (a counter may wrap at most once between two samples);
	 * 60 s is that bound for 48-bit counters (2^48 cycles at 5 GHz is
	 * about 15.6 h).  The collectors check the real widths (CPUID) at start.
	 */
	double interval_s;
	char root[PATH_MAX];          /* prefix for /dev and /sys */
	char user[64];                /* drop privileges to this user; "" or "root" = stay */
	char server_user[64];         /* the HTTP server's user (privsep_server_user()) */
	enum conf_log_level log_level;
	unsigned max_connections;
	unsigned max_connections_per_ip;
	unsigned request_timeout_s;
	unsigned write_timeout_s;     /* an answer making no progress this long is dropped */
	unsigned max_header_bytes;
	unsigned max_episodes;        /* bounded episode list length */
	char state_file[PATH_MAX];    /* the register ledger's state file, for crash recovery;
					 "none": no journal, registers programmed unjournaled */

	/*
	 * The settings of the collector registered at index i (collector.h)
	 * when its section has settings_size: its keys' offsets count from
	 * settings[i].  Read with collector_settings().
	 */
	_Alignas(16) unsigned char settings[CONF_MAX_COLLECTORS][CONF_SETTINGS_BYTES];
};

struct conf_error {
	char file[256];
	int line;                     /* 0 when the error is about the whole file */
	char key[64];                 /* "" when not about a key */
	char message[512];
};

struct conf_errors {
	int n;                        /* may exceed CONF_MAX_ERRORS; only that many are kept */
	struct conf_error list[CONF_MAX_ERRORS];
};

/*
 * Sections and keys.  [daemon] is conf.c's own; every other section is
 * declared by its collector (collector_ops.conf_section) as a table of
 * keys, and conf.c parses them all the same way.  Values live at the
 * offset each key names: in the collector's own settings block of struct
 * conf (conf_section.settings_size), [daemon]'s in struct conf itself.
 */
enum conf_kind {
	CONF_KIND_BOOL,
	CONF_KIND_SECONDS,    /* double, decimals allowed, min..max */
	CONF_KIND_UNSIGNED,   /* min..max */
	CONF_KIND_STRING,
	CONF_KIND_PATH,       /* absolute */
	CONF_KIND_ENUM,       /* names[] in enum order; the field is an int-sized enum */
	CONF_KIND_LISTEN,     /* listen_addr.h */
	CONF_KIND_EVENT,      /* repeatable: one event line in pmu's grammar (event.h), appended */
	CONF_KIND_COUNT,
};

struct conf_key {
	const char *name;
	enum conf_kind kind;
	size_t offset;                    /* of the field in struct conf */
	size_t size;                      /* of that field */
	double min, max;                  /* numeric kinds */
	const char *unit;                 /* "seconds", "bytes" or NULL, for messages */
	const char *const *names;         /* CONF_KIND_ENUM: value names, NULL-terminated;
					     CONF_KIND_PATH: words accepted besides a path */
	const char *def;                  /* default as written in the file; NULL = none */
	enum event_pmu pmu;               /* CONF_KIND_EVENT: whose grammar and built-ins */
	size_t count_offset;              /* CONF_KIND_EVENT: of the int counting the events */
	/*
	 * Used from start-up on: a reload that changes it logs "[SECTION] KEY
	 * changed: takes effect at restart" and keeps the running value.
	 */
	bool restart;
};

/* Offset and size of a member of struct conf, for a conf_key. */
#define CONF_FIELD(m) offsetof(struct conf, m), sizeof(((struct conf *)0)->m)

/* Offset and size of member m of a collector's settings struct type t. */
#define CONF_SETTING(t, m) offsetof(t, m), sizeof(((t *)0)->m)

/* Where the cross-checks of a section report (conf_validate.c's). */
struct conf_check;

struct conf_section {
	const char *name;                 /* "[name]" in the file */
	const struct conf_key *keys;
	size_t n_keys;
	/* Checks across the section's keys once the file is read; NULL when none. */
	void (*check)(const struct conf *conf, struct conf_check *chk);
	/*
	 * 0: the keys' offsets are into struct conf.  Otherwise the size of the
	 * collector's own settings struct (at most CONF_SETTINGS_BYTES), kept in
	 * its block of conf->settings, from which the offsets count.
	 */
	size_t settings_size;
};

/* Record an error of a cross-check at line (of the file being loaded) for key. */
void conf_check_error(struct conf_check *chk, int line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The checks every event list gets: a name counted twice (defaults
 * included when use_defaults) is an error at its line.  Returns the index
 * of the first event beyond capacity counters, or -1 when all fit; then
 * taken describes what took the counters ("the 5 default events and 3
 * configured events"), for the collector's own message.
 */
int conf_check_events(struct conf_check *chk, const struct conf_event *ev, int n,
		      enum event_pmu pmu, bool use_defaults, size_t capacity, char *taken,
		      size_t takenlen);

/*
 * The collectors' sections, in registration order: how many there are, and
 * collector i's section table (NULL: it has no keys), its name, and whether
 * conf enables it (a collector without an enabled key always is).
 * Declared here and implemented by the collector registry
 * (collectors/registry.c), so that this layer never includes the
 * collectors'.
 */
size_t conf_collector_count(void);
const struct conf_section *conf_collector_section(size_t i);
const char *conf_collector_name(size_t i);
bool conf_collector_enabled(size_t i, const struct conf *conf);

/* Fill conf with the built-in defaults (what an empty file means). */
void conf_defaults(struct conf *conf);

/*
 * Parse path into ret_conf (defaults first, then the file).  Returns 0, or
 * -EINVAL with every error in errs (ret_conf then holds nothing usable), or
 * -errno when the file cannot be read (also recorded in errs, line 0).
 * errs is reset first; errors come sorted by line.  Besides each value,
 * each section's check runs on the whole file (the collectors' event lists:
 * no name twice, defaults included, and within their counters).  ret_conf
 * is written only on success.
 */
int conf_load(const char *path, struct conf *ret_conf, struct conf_errors *errs);

/* Same, from a string; name is used as the file name in errors. */
int conf_load_string(const char *name, const char *text, struct conf *ret_conf,
		     struct conf_errors *errs);

/*
 * Whether two configured event lists count the same events in the same
 * order (where they were configured does not matter).
 */
bool conf_events_equal(const struct conf_event *a, int n_a, const struct conf_event *b, int n_b);

/*
 * Whether the keys of sec differ between the settings blocks old and new
 * (the offsets of sec's keys count from them): each key by its kind,
 * events as conf_events_equal() sees them.  Keys marked restart are not
 * asked about: a reload keeps their running value.  What a collector's
 * conf_changed (collector.h) answers.
 */
bool conf_settings_changed(const struct conf_section *sec, const void *old, const void *new);

/*
 * Format one error as "FILE:LINE: key: message" (line and key omitted when
 * absent) into buf.  Returns buf.
 */
const char *conf_error_format(const struct conf_error *e, char *buf, size_t len);

#endif
