/*
 * The HTTP endpoint (SPEC §6): libmicrohttpd serving /metrics, the JSON
 * API, /healthz and the embedded web page from published snapshots only.
 *
 * Routes, all GET/HEAD (anything else: 405 with "Allow: GET, HEAD"):
 *   /metrics            Prometheus text (PROM_CONTENT_TYPE)
 *   /api/v1/snapshot    JSON snapshot
 *   /api/v1/episodes    JSON episodes
 *   /api/v1/history     JSON history of the last hour (history.h)
 *   /healthz            200 "ok" when the latest sample is at most three
 *                       intervals old, 503 with the reason otherwise
 *   /, assets           the web page ("/" is "/index.html" when present,
 *                       a small built-in page otherwise)
 * Before the first snapshot the dynamic routes answer 503 "no sample yet".
 *
 * No client can keep the others out (SPEC §6):
 *   - An acceptor thread takes every connection off the listen queue at
 *     once, so no one waits in the kernel behind connections that never
 *     send a request, and keeps the newcomers it cannot place yet aside
 *     (at most 64; a full parking closes first one that has sent nothing
 *     for 100 ms, then one from the address that costs the most: holding
 *     the most connections, held and parked, and having had the most
 *     pushed out lately).  A connection over max_connections_per_ip is
 *     closed at once; an IPv6 client counts by its /64.  When
 *     max_connections are open, a newcomer that asked takes the place of
 *     one that costs the others: waiting for its request with none in its
 *     socket, or answering a client that does not read (the socket takes
 *     no more), and holding its place at least 100 ms; the longest-waiting
 *     of the address that holds the most.  So at most max_connections
 *     places are given up each 100 ms, however fast clients reconnect.  A
 *     request in flight is never given up: one in the socket, one being
 *     answered to a client that reads, or one on a connection accepted,
 *     answered or sent a request line a moment ago (libmicrohttpd may hold
 *     the request's bytes before it is complete).  Newcomers from the addresses holding the
 *     fewest connections and having had the fewest pushed out lately
 *     (evicted, dropped, refused, closed at the deadline; each second
 *     counts half the next) are placed first.
 *   - request_timeout is a deadline, not an idle timer: a request must be
 *     complete that many seconds after the connection was accepted (or
 *     after the previous response on a kept-alive connection), however
 *     the bytes trickle in; then the connection is closed.
 *   - write_timeout: an answer whose writing makes no progress that long
 *     (the client does not read) is dropped with its connection.
 *   - After 16 answers in a row to a client that asked ahead of reading
 *     them (pipelined requests it does not take), the connection closes.
 *   - What a client that does not read leaves in the kernel is bounded:
 *     each accepted socket's send buffer is capped (SO_SNDBUF 64 KiB,
 *     128 KiB as the kernel counts it), the next pipelined request is read
 *     only once the socket takes more, a connection dropped for not
 *     reading (the write deadline, or its place given up) is reset so the
 *     kernel frees its memory at once, and TCP_USER_TIMEOUT (write_timeout)
 *     has the kernel reset a closed one whose last bytes make no progress.
 *   - A client that sends a request and hangs up at once frees its
 *     connection at once (libmicrohttpd polls with poll(), which sees the
 *     end of the stream; its epoll mode misses a FIN behind the data).
 *   - A request whose request line and header fields (each line with its
 *     CRLF, each field counted as "Name: value", and the empty line) add
 *     up to more than max_header_bytes gets 431 and the connection closes.
 *     A request announcing a body gets 413, any method but GET and HEAD 405.
 *   - Only HTTP/1.0 and HTTP/1.1 are served (others: 505); a target with
 *     a control character, sent or percent-encoded ("%00", "%0a"), gets
 *     400.  What libmicrohttpd logs of a request is quoted: control
 *     characters escaped, its length bounded.
 *   - HTTP/1.1 connections stay open for further requests unless the client
 *     sends "Connection: close" (HTTP/1.0: only with "Connection:
 *     keep-alive"); pipelined requests are answered in order.
 */
#ifndef UNCORED_HTTP_H
#define UNCORED_HTTP_H

#include <stddef.h>

/* One embedded file of the web page. */
struct http_asset {
	const char *path;              /* "/index.html", "/app.js", ... */
	const char *content_type;      /* "text/html; charset=utf-8", ... */
	const unsigned char *data;     /* static, never freed */
	size_t len;
};

struct http_options {
	int listen_fd;                 /* bound and listening; see http_start() */
	unsigned max_connections;      /* open at most; 0: 64 */
	unsigned max_connections_per_ip; /* 0: no per-address limit */
	unsigned request_timeout_s;    /* deadline for a complete request; 0: 10 s */
	unsigned write_timeout_s;      /* an answer making no progress this long; 0: 2 s */
	unsigned max_header_bytes;     /* request line and headers; 0: 16 KiB */
	double interval_s;             /* sampling interval, for /healthz */
	const struct http_asset *assets; /* static table, may be NULL */
	size_t n_assets;
};

struct http_server;

/*
 * Create a TCP socket for address ("A.B.C.D:PORT" or "[V6ADDR]:PORT", port
 * 0 = any free port), bind it and listen on it.  An IPv6 socket also
 * accepts IPv4 (IPV6_V6ONLY off), so "[::]:9796" serves both.  The fd is
 * close-on-exec and non-blocking.  Returns 0 and the fd in *ret_fd (the
 * caller owns it), or -EINVAL for a malformed address or -errno from the
 * socket calls, with a sentence naming the address in err.
 */
int http_bind(const char *address, int *ret_fd, char *err, size_t errlen);

/*
 * File descriptors the server needs for max_connections beyond those the
 * process already holds: two per connection (max_connections open and as
 * many being closed after they gave up their place) and a fixed reserve.
 */
unsigned long http_fds_needed(unsigned max_connections);

/*
 * Check max_connections against RLIMIT_NOFILE (soft, hard) with in_use
 * descriptors already open.  Returns 0 and in *ret_soft the soft limit to
 * set (soft itself, or raised up to hard when that is needed and enough),
 * or -EMFILE with a sentence in err that names the numbers and what to
 * change (max_connections, or LimitNOFILE= / ulimit -n).
 */
int http_check_fd_limit(unsigned max_connections, unsigned long in_use, unsigned long soft,
			unsigned long hard, unsigned long *ret_soft, char *err, size_t errlen);

/*
 * Start serving on opt->listen_fd (from http_bind() or socket activation):
 * an acceptor thread and a small libmicrohttpd thread pool, so a slow
 * client cannot hold up the others.  Checks the connection limits against
 * RLIMIT_NOFILE first (http_check_fd_limit(), raising the soft limit when
 * needed).  opt and the asset table are copied/referenced: the table must
 * outlive the server.  On success the server owns listen_fd (http_stop()
 * closes it); on failure the caller still owns it.  Returns the server, or
 * NULL with a sentence in err.
 */
struct http_server *http_start(const struct http_options *opt, char *err, size_t errlen);

/*
 * Stop accepting, finish or drop open connections, join the threads,
 * close the listen fd and free s.  NULL is allowed.
 */
void http_stop(struct http_server *s);

#endif
