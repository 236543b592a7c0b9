/*
 * Privilege separation (SPEC §8), in the manner of OpenBSD's daemons: the
 * process that parses HTTP holds nothing that can touch the hardware.
 *
 * The daemon is two processes.  The hardware side (the process started)
 * holds the msr and perf fds, the state file and the instance lock,
 * samples, and after each sample formats every document once, in each
 * encoding (render.h).  The server, forked from it after the listening
 * socket is bound and the hardware opened but before any thread starts,
 * keeps only the listening socket and its end of the transport, leaves
 * the daemon's session and terminal (setsid(); standard input from
 * /dev/null, standard output and error into a pipe the hardware side
 * copies to its log), becomes a user other than the hardware side's
 * (privsep_server_user()), so that no signal of its own and no F_SETOWN
 * reaches the hardware side, sets no-new-privs, starts the HTTP server and
 * then locks itself in a seccomp filter (sandbox.h).  It serves the latest bytes it received
 * and nothing else: it can read no file, open no socket, signal no
 * process, and a system call outside its filter kills it.
 *
 * Transport: a socketpair (AF_UNIX, SOCK_STREAM) carrying, per sample, a
 * fixed header (the sample's time and interval, for /healthz, and each
 * document's length) followed by the documents.  A copy per sample costs
 * little (a few hundred kilobytes on a 224-CPU machine, once per
 * interval, against the formatting and compression that made them), and
 * it is chosen over a shared read-only mapping because the server then
 * owns what it serves: the hardware side never waits for a reader to let
 * go of a buffer, no generation counter or seqlock is needed, and the
 * server cannot see a document half written.  The socket also carries
 * each side's death: the hardware side reads end-of-file when the server
 * dies (it then restores every register and exits non-zero, so systemd
 * restarts the service), and the server reads end-of-file when the
 * hardware side goes away, and exits.  The server writes one byte back,
 * once, when its first documents are published, so that READY=1 is sent
 * only when a client could be answered.
 *
 * The server ignores the stop signals (they stay blocked, as the hardware
 * side left them): it ends when the hardware side, having restored the
 * registers, closes the socket.
 */
#ifndef UNCORED_PRIVSEP_H
#define UNCORED_PRIVSEP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "http.h"
#include "snapshot.h"

struct privsep;

/*
 * The user the server runs as, in ret: server_user, or "nobody" when
 * server_user is empty or does not exist (a build not installed by the
 * package, which creates it); "" when the process is not root (nothing is
 * dropped, by either side).  Refused (-EINVAL, -ENOENT, a sentence in err)
 * when that user is root, does not exist, or has the uid the hardware side
 * drops to (user): the server must not be able to signal it.
 */
int privsep_server_user(const char *user, const char *server_user, char *ret, size_t retlen,
			char *err, size_t errlen);

/*
 * Fork the server.  It serves on ho->listen_fd with ho's limits, as user
 * (from privsep_server_user(); "" or "root" as root: "nobody").  Call while the process has a single
 * thread.  In the hardware side: returns 0 and the handle in *ret; the
 * caller still owns ho->listen_fd and should close it.  The server never
 * returns from here.  A negative errno with a sentence in err when the
 * fork or the socketpair failed.
 */
int privsep_start(const struct http_options *ho, const char *user, struct privsep **ret,
		  char *err, size_t errlen);

/*
 * The snapshot publish hook (snapshot_set_publish_hook, arg = the
 * handle): format every document of s and send them to the server.  When
 * the server cannot take them (gone, or not reading for 10 s) the handle
 * is marked dead and privsep_fd() becomes readable.
 */
void privsep_publish(struct snapshot *s, void *arg);

/* A fd that becomes readable (end-of-file) when the server is gone; for poll(). */
int privsep_fd(const struct privsep *p);

/*
 * The pipe of the server's standard output and error, for poll(); -1 once
 * it reached end-of-file.  When it polls readable, privsep_relay_log()
 * copies what is there, whole lines, to this process's standard error.
 * privsep_wait_first() and privsep_stop() relay it themselves.
 */
int privsep_log_fd(const struct privsep *p);
void privsep_relay_log(struct privsep *p);

/*
 * Wait up to timeout_ms for the server to say it published its first
 * documents.  Returns 0, -EPIPE when the server went away, or -ETIMEDOUT.
 */
int privsep_wait_first(struct privsep *p, int timeout_ms);

/*
 * After privsep_fd() polled readable: true when the server is still
 * there (nothing to do), false when it is gone.
 */
bool privsep_check(struct privsep *p);

/* False once the server is known to be gone. */
bool privsep_alive(const struct privsep *p);

/* The server's process id. */
pid_t privsep_pid(const struct privsep *p);

/*
 * Close the transport, wait up to 5 s for the server to exit (then kill
 * it), reap it and free p.  Call when no thread can publish any more.
 * Writes how the server ended to how ("exited with status 0", "killed by
 * signal 9 (Killed)", ...).  Returns true when it ended as asked (status
 * 0 after the transport was closed).  NULL p: true.
 */
bool privsep_stop(struct privsep *p, char *how, size_t howlen);

#endif
