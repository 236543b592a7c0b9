/*
 * The HTTP endpoint: libmicrohttpd with an internal thread pool, a table
 * of routes, and responses built from the current published snapshot.
 * Handlers take a snapshot reference, format (or reuse the cached
 * /metrics text) and hand the bytes to libmicrohttpd without a copy; they
 * never touch hardware and never wait for the sampler.  Limits on
 * connections, per-address connections, idle time and header size are
 * libmicrohttpd's.  It does not choose the listen address or where the
 * socket comes from: main passes one from http_bind() or from systemd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "gzip.h"
#include "http.h"
#include "log.h"
#include "render.h"
#include "snapshot.h"
#include "strbuf.h"

#define HTTP_THREAD_POOL_SIZE 2u
#define HTTP_DEFAULT_HEADER_BYTES (16u * 1024u)
/* Room in the per-connection pool beyond the request headers: response
 * headers and the write buffer come out of the same pool. */
#define HTTP_POOL_SLACK (8u * 1024u)
#define HTTP_LOG_EVERY_S 60

struct http_server {
	struct MHD_Daemon *mhd;
	int listen_fd;
	struct http_options opt;
};

typedef enum MHD_Result (*route_fn)(const struct http_server *srv, struct MHD_Connection *c);

static const char builtin_index[] =
	"<!DOCTYPE html>\n"
	"<html><head><meta charset=\"utf-8\"><title>uncored</title></head>\n"
	"<body><h1>uncored</h1><ul>\n"
	"<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n"
	"<li><a href=\"/api/v1/snapshot\">/api/v1/snapshot</a> (JSON)</li>\n"
	"<li><a href=\"/api/v1/episodes\">/api/v1/episodes</a> (JSON)</li>\n"
	"<li><a href=\"/api/v1/history\">/api/v1/history</a> (JSON)</li>\n"
	"<li><a href=\"/healthz\">/healthz</a></li>\n"
	"</ul></body></html>\n";

/* libmicrohttpd reports per-connection trouble; keep at most one line a minute. */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	static atomic_llong last_s;
	long long now = (long long)time(NULL);
	long long prev = atomic_load(&last_s);
	char buf[256];
	size_t len;

	(void)cls;
	if (now - prev < HTTP_LOG_EVERY_S || !atomic_compare_exchange_strong(&last_s, &prev, now))
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	log_info("http: %s (further messages suppressed for %d s)", buf, HTTP_LOG_EVERY_S);
}

/* Queue resp with status and drop our reference to it. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *resp,
			     const char *content_type, int no_store)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	if (content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	if (no_store)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A short text/plain answer from a static string. */
static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_PERSISTENT);

	return queue(c, status, resp, "text/plain; charset=utf-8", 1);
}

/* A text/plain answer from a formatted string (copied). */
static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		strlen(text), (void *)(uintptr_t)text, MHD_RESPMEM_MUST_COPY);

	return queue(c, status, resp, "text/plain; charset=utf-8", 1);
}

static enum MHD_Result reply_method_not_allowed(struct MHD_Connection *c)
{
	static const char text[] = "method not allowed\n";
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		sizeof(text) - 1, (void *)(uintptr_t)text, MHD_RESPMEM_PERSISTENT);

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	return queue(c, MHD_HTTP_METHOD_NOT_ALLOWED, resp, "text/plain; charset=utf-8", 1);
}

static void release_snapshot_cb(void *cls)
{
	snapshot_release(cls);
}

/*
 * One document of the latest snapshot, gzip-compressed when the client
 * accepts it.  Zero copy: the bytes live as long as the snapshot, and the
 * response holds our reference until libmicrohttpd is done with it.
 */
static enum MHD_Result serve_doc(struct MHD_Connection *c, enum render_doc doc)
{
	struct snapshot *s = snapshot_acquire();
	const char *ae = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	bool gzip = gzip_accepted(ae);
	struct MHD_Response *resp;
	const char *body;
	size_t len;
	int r;

	if (!s)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
	r = render_get(s, doc, gzip, &body, &len);
	if (r < 0) {
		snapshot_release(s);
		if (r == -ENOENT)
			return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no history: out of memory at start\n");
		return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    r == -ENOMEM ? "out of memory\n" : "compression failed\n");
	}
	resp = MHD_create_response_from_buffer_with_free_callback_cls(
		len, (void *)(uintptr_t)body, release_snapshot_cb, s);
	if (!resp) {
		snapshot_release(s);
		return MHD_NO;
	}
	/* Caches must keep the two encodings apart. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gzip)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	return queue(c, MHD_HTTP_OK, resp, render_content_type(doc), 1);
}

static enum MHD_Result serve_metrics(const struct http_server *srv, struct MHD_Connection *c)
{
	(void)srv;
	return serve_doc(c, RENDER_METRICS);
}

static enum MHD_Result serve_snapshot(const struct http_server *srv, struct MHD_Connection *c)
{
	(void)srv;
	return serve_doc(c, RENDER_SNAPSHOT);
}

static enum MHD_Result serve_episodes(const struct http_server *srv, struct MHD_Connection *c)
{
	(void)srv;
	return serve_doc(c, RENDER_EPISODES);
}

static enum MHD_Result serve_history(const struct http_server *srv, struct MHD_Connection *c)
{
	(void)srv;
	return serve_doc(c, RENDER_HISTORY);
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static enum MHD_Result serve_healthz(const struct http_server *srv, struct MHD_Connection *c)
{
	struct snapshot *s = snapshot_acquire();
	double interval_s, age_s, limit_s;
	char text[160];

	if (!s)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
	/* The snapshot's own interval follows a reloaded config. */
	interval_s = s->interval_s > 0 ? s->interval_s : srv->opt.interval_s;
	age_s = wall_now() - s->time;
	snapshot_release(s);
	limit_s = snapshot_stale_limit_s(interval_s);
	if (age_s <= limit_s)
		return reply_static(c, MHD_HTTP_OK, "ok\n");
	snprintf(text, sizeof(text), "stale: last sample %.1f s ago, limit %.1f s (%d intervals)\n",
		 age_s, limit_s, SNAPSHOT_STALE_INTERVALS);
	return reply_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, text);
}

static const struct route {
	const char *path;
	route_fn fn;
} routes[] = {
	{ "/metrics", serve_metrics },
	{ "/api/v1/snapshot", serve_snapshot },
	{ "/api/v1/episodes", serve_episodes },
	{ "/api/v1/history", serve_history },
	{ "/healthz", serve_healthz },
};

static const struct http_asset *find_asset(const struct http_server *srv, const char *path)
{
	for (size_t i = 0; i < srv->opt.n_assets; i++)
		if (strcmp(srv->opt.assets[i].path, path) == 0)
			return &srv->opt.assets[i];
	return NULL;
}

static enum MHD_Result serve_asset(const struct http_server *srv, struct MHD_Connection *c,
				   const char *url)
{
	const struct http_asset *a;
	struct MHD_Response *resp;

	a = find_asset(srv, strcmp(url, "/") == 0 ? "/index.html" : url);
	if (!a && strcmp(url, "/") == 0) {
		resp = MHD_create_response_from_buffer(sizeof(builtin_index) - 1,
						       (void *)(uintptr_t)builtin_index,
						       MHD_RESPMEM_PERSISTENT);
		return queue(c, MHD_HTTP_OK, resp, "text/html; charset=utf-8", 0);
	}
	if (!a)
		return reply_static(c, MHD_HTTP_NOT_FOUND, "not found\n");
	resp = MHD_create_response_from_buffer(a->len, (void *)(uintptr_t)a->data,
					       MHD_RESPMEM_PERSISTENT);
	return queue(c, MHD_HTTP_OK, resp, a->content_type, 0);
}

/*
 * Every request is answered on the first call, before any body is read:
 * nothing here takes a body, and libmicrohttpd closes the connection
 * instead of reading one it was not asked for.
 */
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	const struct http_server *srv = cls;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	*upload_data_size = 0;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply_method_not_allowed(c);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(url, routes[i].path) == 0)
			return routes[i].fn(srv, c);
	return serve_asset(srv, c, url);
}

/* Split "A.B.C.D:PORT" or "[V6]:PORT" into a socket address. */
static int parse_listen(const char *address, struct sockaddr_storage *ret_sa, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(address, ':');
	char *end;
	unsigned long port;
	size_t hlen;

	if (!colon || colon == address || colon[1] == '\0')
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port > 65535 || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	hlen = (size_t)(colon - address);
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, address, hlen);
	host[hlen] = '\0';
	memset(ret_sa, 0, sizeof(*ret_sa));
	if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret_sa;

		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*sin6);
		return 0;
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)ret_sa;

	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return -EINVAL;
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	*ret_len = sizeof(*sin);
	return 0;
}

/* After a failed socket call: write "listen 'ADDR': what: why" to err and return -errno. */
static int step_failed(const char *address, const char *what, char *err, size_t errlen)
{
	int r = -errno;

	snprintf(err, errlen, "listen '%s': %s: %s", address, what, strerror(-r));
	return r;
}

int http_bind(const char *address, int *ret_fd, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t sa_len;
	int one = 1, zero = 0, fd, r;

	if (parse_listen(address, &sa, &sa_len) < 0) {
		snprintf(err, errlen, "listen '%s': expected A.B.C.D:PORT or [IPV6]:PORT "
			 "with a numeric address and a port from 0 to 65535", address);
		return -EINVAL;
	}
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return step_failed(address, "socket", err, errlen);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		r = step_failed(address, "SO_REUSEADDR", err, errlen);
		goto fail;
	}
	/* "[::]" is meant to serve IPv4 too, whatever the sysctl default says. */
	if (sa.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) {
		r = step_failed(address, "IPV6_V6ONLY", err, errlen);
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0) {
		r = step_failed(address, "bind", err, errlen);
		goto fail;
	}
	if (listen(fd, SOMAXCONN) < 0) {
		r = step_failed(address, "listen", err, errlen);
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

static size_t pool_bytes(const struct http_options *opt)
{
	size_t header = opt->max_header_bytes ? opt->max_header_bytes : HTTP_DEFAULT_HEADER_BYTES;

	return header + HTTP_POOL_SLACK;
}

struct http_server *http_start(const struct http_options *opt, char *err, size_t errlen)
{
	struct http_server *srv;
	unsigned pool = HTTP_THREAD_POOL_SIZE;

	if (opt->listen_fd < 0) {
		snprintf(err, errlen, "http: no listening socket given");
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, errlen, "http: out of memory");
		return NULL;
	}
	srv->opt = *opt;
	srv->listen_fd = opt->listen_fd;
	/* libmicrohttpd splits the connection limit over the pool threads. */
	if (opt->max_connections && opt->max_connections < pool)
		pool = 1;
	srv->mhd = MHD_start_daemon(
		MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG,
		0, NULL, NULL, handle_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)opt->listen_fd,
		MHD_OPTION_THREAD_POOL_SIZE, pool,
		MHD_OPTION_CONNECTION_LIMIT,
		opt->max_connections ? opt->max_connections : (unsigned)(FD_SETSIZE - 4),
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, opt->max_connections_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, opt->request_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool_bytes(opt),
		MHD_OPTION_END);
	if (!srv->mhd) {
		snprintf(err, errlen, "http: libmicrohttpd refused to start on fd %d "
			 "(check the connection limits)", opt->listen_fd);
		free(srv);
		return NULL;
	}
	return srv;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	/* Quiescing first stops accepting at once and keeps libmicrohttpd
	 * from closing the fd, so it is closed exactly once, here. */
	MHD_quiesce_daemon(s->mhd);
	MHD_stop_daemon(s->mhd);
	close(s->listen_fd);
	free(s);
}
