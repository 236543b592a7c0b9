/*
 * systemd glue (sd-daemon): readiness and status notifications, the
 * watchdog, and socket activation.  Every notification is a no-op
 * returning 0 when NOTIFY_SOCKET is unset (not started by systemd, tests,
 * simulation runs).
 */
#ifndef UNCORED_SERVICE_H
#define UNCORED_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Send READY=1.  Each notification below returns > 0 when sent, 0 when
 * there is no notification socket, or a negative errno from sd_notify();
 * callers may ignore the result (systemd notices a missing READY=1).
 */
int service_ready(void);

/* Send STATUS=<formatted text> (one line; a newline in it ends the text). */
int service_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Send WATCHDOG=1.  Call only when the sampler made progress (SPEC §8). */
int service_watchdog_ping(void);

/* Whether notifications go anywhere (NOTIFY_SOCKET is set). */
bool service_notifying(void);

/* Send STOPPING=1 at the start of shutdown. */
int service_stopping(void);

/*
 * Send RELOADING=1 with MONOTONIC_USEC=<now>, as systemd 253+ expects for
 * Type=notify-reload; older versions ignore the extra field.  Follow with
 * service_ready() when the reload is done.
 */
int service_reloading(void);

/*
 * The watchdog interval systemd asked for (WatchdogSec=) in microseconds,
 * or 0 when the watchdog is off or meant for another process.  Ping at
 * about half of it.
 */
uint64_t service_watchdog_interval_usec(void);

/*
 * Take the socket passed by socket activation (LISTEN_FDS/LISTEN_PID;
 * the variables are removed from the environment).  Returns 0 with the fd
 * in *ret_fd (the caller owns it) when exactly one listening TCP socket
 * was passed; -ENOENT when none was passed (bind one yourself); -EINVAL
 * with a sentence in err when more than one fd, or one that is not a
 * listening TCP socket, was passed; another negative errno from
 * sd_listen_fds() with a sentence in err.
 */
int service_listen_fd(int *ret_fd, char *err, size_t errlen);

#endif
