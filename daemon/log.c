/*
 * Logging to stderr, with journald priority prefixes when stderr is the
 * journal.  Thread-safe: each message is written with one write(2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
