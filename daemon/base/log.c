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

void log_episode_change(const struct log_episode *e)
{
	char message[320];

	if (LOG_LEVEL_NOTICE > max_level)
		return;
	if (e->started)
		snprintf(message, sizeof(message), "%s: %s", e->place, e->what);
	else
		snprintf(message, sizeof(message), "%s: %s ended after %.1f s", e->place, e->what,
			 e->duration_s);
	if (!use_prefix) {
		log_notice("%s", message);
		return;
	}
	sd_journal_send("MESSAGE=%s", message,
			"MESSAGE_ID=" EPISODE_MESSAGE_ID,
			"PRIORITY=%d", LOG_LEVEL_NOTICE,
			"KIND=%s", e->kind,
			"EVENT=%s", e->started ? "start" : "end",
			"SOCKET=%d", e->socket,
			"CORE=%d", e->core,
			"DIE=%d", e->die,
			"CHANNEL=%d", e->channel,
			"START_USEC=%llu", (unsigned long long)(e->start * 1e6),
			"DURATION_SEC=%.3f", e->started ? 0.0 : e->duration_s,
			NULL);
}
