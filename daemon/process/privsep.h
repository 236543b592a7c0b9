/*
 * Privilege separation (SPEC §8), in the manner of OpenBSD's daemons: the
 * process that parses HTTP holds nothing that can touch the hardware.
 *
 * The daemon is two processes.  The hardware side (the process started)
 * holds the msr and perf fds, the state file and the instance lock,
 * samples, and formats a document (render.h), in the encoding asked, when
 * the server asks for it.  The server, forked from it after the listening
 * socket is bound but before the hardware is opened (it shares none of the
 * machine's memory) and before any thread starts,
 * keeps only the listening socket, its end of the transport and a
 * read-only mapping of the sample page (below), leaves
 * the daemon's session and terminal (setsid(); standard input from
 * /dev/null, standard output and error into a pipe the hardware side
 * copies to its log), becomes a user other than the hardware side's
 * (privsep_server_user()), so that no signal of its own and no F_SETOWN
 * reaches the hardware side, sets no-new-privs, starts the HTTP server and
 * then locks itself in a seccomp filter (sandbox.h).  It serves the latest bytes it received
 * and nothing else: it can read no file, open no socket, signal no
 * process, and a system call outside its filter kills it.
 *
 * Transport: a socketpair (AF_UNIX, SOCK_STREAM) and the sample page
 * (sample_page.h).  After each sample the hardware side writes a small
 * header (the sample's number, time and interval, for /healthz) to the
 * page, nothing more: no document is formatted for clients that may
 * never ask, and nothing is sent, so the server is not woken.  It reads
 * the page when an HTTP request acquires the snapshot
 * (snapshot_set_refresh_hook) and publishes the newer sample's header
 * then; with no client it does not run at all between samples (and keeps
 * the sample a client last asked for, with its documents, until a
 * request finds a newer one on the page).  The page
 * is a memfd the hardware side alone maps writable (MADV_DONTFORK), sealed
 * before the fork against any new writable mapping, write(2) or change of
 * size (under a file size limit below a page, a System V segment marked
 * for removal, the starting user's alone): the server maps it
 * read-only before it changes user and installs its sandbox, and cannot
 * make that mapping writable.  When a client asks the server for a
 * document of a sample whose copy it lacks, the server sends a request
 * (sample, document, encoding) and the thread waits; the hardware side's
 * main loop, which polls the socket for the server's death anyway, reads
 * it, formats (and compresses) the document, keeps it with the sample so
 * that it is made once, and sends it.  The server keeps the answer with
 * its sample too, so a second client within the interval costs a lookup;
 * a second client asking while the first waits waits for the same answer.
 * The hardware side keeps only the sample last published (no sample is
 * held longer for the server's sake): a request for an older one is
 * answered "stale", and the server asks again for the newest sample's
 * document, which it serves to that client.  Documents travel as copies rather than
 * through a shared mapping: the server owns what it serves, the hardware
 * side never waits for a reader to let go of a buffer, and the server
 * cannot see a document half written.  A document kind is a render.h
 * entry; the transport names it by number and needs no change for a new
 * one.  The socket also carries
 * each side's death: the hardware side reads end-of-file when the server
 * dies (it then restores every register and exits non-zero, so systemd
 * restarts the service), and the server reads end-of-file when the
 * hardware side goes away, and exits.  A server that stops reading the
 * answers it asked for is taken for dead after 10 s of a full socket.  A
 * server that hangs without dying is found by the liveness check: every
 * PRIVSEP_PING_EVERY_MS the hardware side's main loop sends a ping, which
 * the server's reading thread answers at once; a ping unanswered after
 * PRIVSEP_PONG_DEADLINE_MS (a stopped server, a deadlocked reader) counts
 * as the server's death.
 *
 * The server is not the hardware side's child but its grandchild: its
 * parent is the keeper (privsep_keeper.c), a process of the hardware
 * side's user that does nothing but wait for it.  The server runs as
 * another user, so once the hardware side has dropped root it cannot
 * signal the server; the server dies with its keeper (the kernel's
 * parent-death signal), and the hardware side can always kill the keeper.
 * So a server that does not end when the transport closes is ended within
 * PRIVSEP_STOP_WAIT_MS, stopped or not, and the hardware side's stop never
 * waits on it longer.  The server
 * says, once, when it serves (its page mapped, HTTP started, its sandbox
 * installed); the hardware side publishes its first sample to the page
 * before it waits for that word, so that READY=1 is sent only when a
 * client could be answered.
 *
 * The server ignores the stop signals (they stay blocked, as the hardware
 * side left them): it ends when the hardware side, having restored the
 * registers, closes the socket.
 */
#ifndef UNCORED_PRIVSEP_H
#define UNCORED_PRIVSEP_H

#include <stdbool.h>
#include <signal.h>
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

/* The liveness check: a ping this often, its pong due within the deadline. */
#define PRIVSEP_PING_EVERY_MS 2000
#define PRIVSEP_PONG_DEADLINE_MS 7000
/* How long a stop waits for the server to end by itself before it kills it. */
#define PRIVSEP_STOP_WAIT_MS 1000

/*
 * Fork the server, through its keeper.  It serves on ho->listen_fd with
 * ho's limits, as user (from privsep_server_user(); "" or "root" as root:
 * "nobody"); the keeper runs as hw_user, the user the hardware side drops
 * to (the configuration's user: "" stays).  Call while the process has a
 * single thread.  In the hardware side: returns 0 and the handle in *ret;
 * the caller still owns ho->listen_fd and should close it.  Neither child
 * returns from here.  A negative errno with a sentence in err when a fork,
 * the socketpair or a pipe failed.
 */
int privsep_start(const struct http_options *ho, const char *user, const char *hw_user,
		  struct privsep **ret, char *err, size_t errlen);

/*
 * The snapshot publish hook (snapshot_set_publish_hook, arg = the
 * handle): write sample s's header to the sample page, where the server
 * finds it when a client asks, and keep s, in place of the sample
 * before, to answer its requests.  Sends nothing and never blocks on
 * the server.
 */
void privsep_publish(struct snapshot *s, void *arg);

/*
 * A fd for poll(): readable when the server asks for a document (call
 * privsep_check()) or is gone (end-of-file).
 */
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
 * Wait up to timeout_ms for the server to say it serves, answering what
 * it asks meanwhile.  Publish the first sample before: the server serves
 * what the page holds, "no sample yet" while it holds none.  Returns 0,
 * -EPIPE when the server went away, or -ETIMEDOUT.
 */
int privsep_wait_first(struct privsep *p, int timeout_ms);

/*
 * After privsep_fd() polled readable: read the server's request and
 * answer it (formatting the document in this thread); true when the
 * server is still there, false when it is gone or spoke out of turn.
 */
bool privsep_check(struct privsep *p);

/*
 * The liveness check, from the thread that calls privsep_check(), when
 * privsep_tick_due_ms() says: send a ping when one is due, and take the
 * server for gone when the last one is unanswered past
 * PRIVSEP_PONG_DEADLINE_MS.  False when the server is gone (then
 * privsep_hung() says whether it was this check that found it).
 */
bool privsep_tick(struct privsep *p);
bool privsep_hung(const struct privsep *p);
/* In ms, when privsep_tick() has something to do next (a ping or a deadline); 0: now. */
int privsep_tick_due_ms(const struct privsep *p);

/*
 * The signals that stop this process (stop_signal_set()): while one is
 * pending, a write to the server gives up at once, and the transport is
 * abandoned (privsep_check() and privsep_tick() then do nothing until the
 * stop), so that a server that does not read never holds a stop up for
 * the write's 10 s.  None until called.
 */
void privsep_stop_on(struct privsep *p, const sigset_t *stop);

/* False once the server is known to be gone. */
bool privsep_alive(const struct privsep *p);

/* The server's process id. */
pid_t privsep_pid(const struct privsep *p);

/*
 * Close the transport, wait up to PRIVSEP_STOP_WAIT_MS (1 s) for the server
 * to exit (not at all when it hung: privsep_hung()), then kill it with its
 * keeper, reap the keeper and free p.  Call when no thread can publish any more.
 * Writes how the server ended to how ("exited with status 0", "killed by
 * signal 9 (Killed)", ...).  Returns true when it ended as asked (status
 * 0 after the transport was closed).  NULL p: true.
 */
bool privsep_stop(struct privsep *p, char *how, size_t howlen);

#endif
