/*
 * systemd glue: thin wrappers over sd_notify(), sd_watchdog_enabled() and
 * sd_listen_fds() so the rest of the daemon speaks in its own terms
 * (ready, status, watchdog, stopping, reloading, listen socket).  It
 * decides nothing about when to notify; main and the sampler's progress
 * counter do.  Without NOTIFY_SOCKET every notification is a silent no-op.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "service.h"

int service_ready(void)
{
	return sd_notify(0, "READY=1");
}

int service_status(const char *fmt, ...)
{
	char text[256];
	char msg[sizeof(text) + 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* A newline would start a new assignment in the notification. */
	text[strcspn(text, "\n")] = '\0';
	snprintf(msg, sizeof(msg), "STATUS=%s", text);
	return sd_notify(0, msg);
}

int service_watchdog_ping(void)
{
	return sd_notify(0, "WATCHDOG=1");
}

bool service_notifying(void)
{
	const char *path = getenv("NOTIFY_SOCKET");

	return path && path[0];
}

int service_stopping(void)
{
	return sd_notify(0, "STOPPING=1");
}

int service_reloading(void)
{
	struct timespec ts;
	uint64_t usec;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	usec = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	return sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, usec);
}

uint64_t service_watchdog_interval_usec(void)
{
	uint64_t usec = 0;

	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}

int service_listen_fd(int *ret_fd, char *err, size_t errlen)
{
	int n = sd_listen_fds(1);
	int fd = SD_LISTEN_FDS_START;

	if (n < 0) {
		snprintf(err, errlen, "socket activation: LISTEN_FDS unusable: %s", strerror(-n));
		return n;
	}
	if (n == 0)
		return -ENOENT;
	if (n > 1) {
		snprintf(err, errlen, "socket activation: %d sockets passed, expected exactly one "
			 "listening TCP socket (one ListenStream= in uncored.socket)", n);
		return -EINVAL;
	}
	if (sd_is_socket_inet(fd, AF_UNSPEC, SOCK_STREAM, 1, 0) <= 0) {
		snprintf(err, errlen, "socket activation: fd %d is not a listening TCP socket, "
			 "expected ListenStream= with an address or port", fd);
		return -EINVAL;
	}
	*ret_fd = fd;
	return 0;
}
