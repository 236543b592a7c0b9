/*
 * Logging to stderr, with journald priority prefixes when stderr is the
 * journal.  Thread-safe: each message is written with one write(2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#include "log.h"

static enum log_level max_level = LOG_LEVEL_NOTICE;
static int use_prefix;

void log_set_level(enum log_level level)
{
	max_level = level;
}

void log_init(void)
{
	/* systemd sets JOURNAL_STREAM when stderr is connected to journald. */
	use_prefix = getenv("JOURNAL_STREAM") != NULL;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char buf[1024];
	int n = 0;
	va_list ap;

	if (level > max_level)
		return;
	if (use_prefix)
		n = snprintf(buf, sizeof(buf), "<%d>", (int)level);
	else
		n = snprintf(buf, sizeof(buf), "uncored: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

/* Fixed id of episode records, so they can be selected with journalctl MESSAGE_ID=. */
#define EPISODE_MESSAGE_ID "7b3c1f6e2a9d4c58b0e1d2f3a4b5c6d7"

static void format_place(char *buf, size_t len, int socket, int core)
{
	if (core >= 0)
		snprintf(buf, len, "socket %d core %d", socket, core);
	else
		snprintf(buf, len, "socket %d", socket);
}

void log_episode_change(bool started, const char *kind, int socket, int core, double start,
			double duration_s)
{
	char place[64];

	if (LOG_LEVEL_NOTICE > max_level)
		return;
	format_place(place, sizeof(place), socket, core);
	if (!use_prefix) {
		if (started)
			log_notice("%s: %s started", place, kind);
		else
			log_notice("%s: %s ended after %.1f s", place, kind, duration_s);
		return;
	}
	sd_journal_send("MESSAGE=%s: %s %s", place, kind, started ? "started" : "ended",
			"MESSAGE_ID=" EPISODE_MESSAGE_ID,
			"PRIORITY=%d", LOG_LEVEL_NOTICE,
			"KIND=%s", kind,
			"EVENT=%s", started ? "start" : "end",
			"SOCKET=%d", socket,
			"CORE=%d", core,
			"START_USEC=%llu", (unsigned long long)(start * 1e6),
			"DURATION_SEC=%.3f", started ? 0.0 : duration_s,
			NULL);
}
