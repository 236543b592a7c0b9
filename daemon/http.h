/*
 * The HTTP endpoint (SPEC §6): libmicrohttpd serving /metrics, the JSON
 * API, /healthz and the embedded web page from published snapshots only.
 *
 * Routes, all GET/HEAD (anything else: 405 with "Allow: GET, HEAD"):
 *   /metrics            Prometheus text (FMT_PROM_CONTENT_TYPE)
 *   /api/v1/snapshot    JSON snapshot
 *   /api/v1/episodes    JSON episodes
 *   /api/v1/history     JSON history of the last hour (history.h)
 *   /healthz            200 "ok" when the latest sample is at most three
 *                       intervals old, 503 with the reason otherwise
 *   /, assets           the web page ("/" is "/index.html" when present,
 *                       a small built-in page otherwise)
 * Before the first snapshot the dynamic routes answer 503 "no sample yet".
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
	unsigned max_connections;      /* 0: libmicrohttpd's default */
	unsigned max_connections_per_ip; /* 0: no per-address limit */
	unsigned request_timeout_s;    /* idle time before a connection is dropped; 0: none */
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
 * Start serving on opt->listen_fd (from http_bind() or socket activation)
 * with a small internal thread pool, so a slow client cannot hold up the
 * others.  opt and the asset table are copied/referenced: the table must
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
