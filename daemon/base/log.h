/*
 * Logging.  Messages go to stderr; when stderr is the journal (systemd
 * sets JOURNAL_STREAM) each line carries a <N> priority prefix that
 * journald understands.  Throttle episodes are structured journal records
 * (log_episode).
 *
 * Message shape: lower-case start, no trailing period, place first, then
 * what, why and the hint.
 */
#ifndef UNCORED_LOG_H
#define UNCORED_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum log_level {
	LOG_LEVEL_ERROR = 3,    /* syslog priorities */
	LOG_LEVEL_WARNING = 4,
	LOG_LEVEL_NOTICE = 5,
	LOG_LEVEL_INFO = 6,
	LOG_LEVEL_DEBUG = 7,
};

/* Messages above level are dropped. Default LOG_LEVEL_NOTICE. */
void log_set_level(enum log_level level);

/* Decide once whether stderr is the journal (call at start). */
void log_init(void);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...)   log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_LEVEL_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

/* A throttle episode's start or end, as log_episode_change() records it. */
struct log_episode {
	bool started;              /* false: ended */
	const char *kind;          /* "dram_throttled_seconds", "prochot", ... */
	const char *place;         /* in words: "socket 1 channel 4 slot 0" */
	const char *what;          /* in words: "DRAM throttled for heat" */
	int socket, die, channel, core;   /* -1 where the place has none */
	double start;              /* unix seconds */
	double duration_s;         /* ended: its length */
};

/*
 * Log the start or the end of a throttle episode: "PLACE: WHAT" and
 * "PLACE: WHAT ended after N s".  Under journald this is one structured
 * record with MESSAGE_ID, KIND, EVENT, SOCKET, DIE, CHANNEL, CORE (-1
 * where the place has none), START_USEC and DURATION_SEC fields; otherwise one
 * notice line.
 */
void log_episode_change(const struct log_episode *e);

#endif
