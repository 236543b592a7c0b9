/*
 * The HTTP front's requests and answers: what is served where, the checks
 * a request passes first, and libmicrohttpd's log lines, quoted
 * (http_internal.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#include "gzip.h"
#include "json.h"
#include "http_internal.h"
#include "log.h"
#include "render.h"
#include "snapshot.h"
#include "strbuf.h"
#include "text.h"

/* In the URI log callback's value: the target carries a control character. */
#define HTTP_URI_BAD ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))

/* A control character in the target, as sent or percent-encoded ("%00", "%0a"). */
static bool has_control(const char *uri)
{
	for (const char *p = uri; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 || c == 0x7f)
			return true;
		if (c == '%' && p[1] && p[2] && (p[1] == '0' || p[1] == '1' ||
						 (p[1] == '7' && (p[2] == 'f' || p[2] == 'F'))) &&
		    strchr("0123456789abcdefABCDEF", p[2]))
			return true;
	}
	return false;
}

/*
 * The request line is in: the connection has begun a request
 * (http_mark_begun); remember the target's raw length for the header
 * count, and whether it carries a control character (answered 400: after
 * decoding, "/metrics%00" would read as "/metrics", and "%0a" forge a line
 * wherever the path is written).
 */
void *http_uri_logged(void *cls, const char *uri, struct MHD_Connection *mc)
{
	http_mark_begun(cls, mc);
	return (void *)(uintptr_t)(((strlen(uri) + 1) & ~HTTP_URI_BAD) |
				   (has_control(uri) ? HTTP_URI_BAD : 0));
}

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

/*
 * Text a client chose (a path, a header), quoted for the log: at most
 * HTTP_LOG_QUOTE_MAX bytes of it, each control character, backslash and
 * byte outside ASCII as \xNN (text_escape), and "..." when it was cut, so
 * that no client can write a line of its own or an escape sequence into
 * the log.
 */
static void quote_client(const char *in, char *out, size_t outlen)
{
	size_t len = strnlen(in, HTTP_LOG_QUOTE_MAX + 1);
	size_t shown = text_escape(in, len < HTTP_LOG_QUOTE_MAX ? len : HTTP_LOG_QUOTE_MAX, out,
				   outlen - 3);

	if (shown < len)
		strcat(out, "...");
}

/*
 * libmicrohttpd reports per-connection trouble, which can quote what a
 * client sent; quoted (quote_client) and at most one line a minute.
 */
void http_mhd_logger(void *cls, const char *fmt, va_list ap)
{
	static atomic_llong last_s;
	long long now = (long long)time(NULL);
	long long prev = atomic_load(&last_s);
	char buf[HTTP_LOG_QUOTE_MAX + 8], quoted[4 * HTTP_LOG_QUOTE_MAX + 8];
	size_t len;

	(void)cls;
	if (now - prev < HTTP_LOG_EVERY_S || !atomic_compare_exchange_strong(&last_s, &prev, now))
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	quote_client(buf, quoted, sizeof(quoted));
	log_info("http: %s (further messages suppressed for %d s)", quoted, HTTP_LOG_EVERY_S);
}

/* Set by http_handle_request for the answer it is about to queue on this thread:
 * the connection closes after it (HTTP_PIPELINE_MAX). */
static _Thread_local bool close_after_answer;

/* Queue resp with status and drop our reference to it. */
static enum MHD_Result queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *resp,
			     const char *content_type, int no_store)
{
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	if (close_after_answer)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
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
		/* Formatted by the hardware side on request (privsep.h): it did not answer in time. */
		if (r == -ESTALE || r == -ETIMEDOUT || r == -EPIPE)
			return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "sample not available, retry\n");
		return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				    r == -ENOMEM ? "out of memory\n" : "compression failed\n");
	}
	resp = MHD_create_response_from_buffer_with_free_callback_cls(
		len, (void *)(uintptr_t)body, release_snapshot_cb, s);
	if (!resp) {
		snapshot_release(s);
		return MHD_NO;
	}
	/* Caches must keep the two encodings (and /metrics's two formats) apart. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
				doc == RENDER_METRICS || doc == RENDER_OPENMETRICS ?
				MHD_HTTP_HEADER_ACCEPT_ENCODING ", " MHD_HTTP_HEADER_ACCEPT :
				MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gzip)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	return queue(c, MHD_HTTP_OK, resp, render_content_type(doc), 1);
}

/*
 * Whether the Accept header asks for OpenMetrics: names
 * application/openmetrics-text with no q=0 (what Prometheus sends when it
 * scrapes for exemplars); otherwise /metrics is the text format 0.0.4.
 */
static bool openmetrics_accepted(const char *accept)
{
	static const char type[] = "application/openmetrics-text";

	for (const char *p = accept; p && *p;) {
		size_t len = strcspn(p, ",");
		const char *q;

		while (len > 0 && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		if (len >= sizeof(type) - 1 && strncasecmp(p, type, sizeof(type) - 1) == 0) {
			q = p + sizeof(type) - 1;
			while (q < p + len && (q = strstr(q, "q=")) && q < p + len) {
				if (strtod(q + 2, NULL) <= 0)
					return false;
				q += 2;
			}
			return true;
		}
		p += len + (p[len] == ',');
	}
	return false;
}

static enum MHD_Result serve_metrics(const struct http_server *srv, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	(void)srv;
	return serve_doc(c, openmetrics_accepted(accept) ? RENDER_OPENMETRICS : RENDER_METRICS);
}

/*
 * /api/v1/episodes?id=N: the episode whose id is N, picked from the
 * rendered document (this process has no snapshot but its documents);
 * 404 when the bounded list no longer holds it, 400 for an id that is no
 * positive decimal number.
 */
static enum MHD_Result serve_episode_id(struct MHD_Connection *c, const char *id_text)
{
	struct snapshot *s;
	struct strbuf sb;
	const char *body;
	char *end = NULL;
	unsigned long long id;
	size_t len;
	enum MHD_Result ret;
	int r;

	errno = 0;
	id = *id_text >= '0' && *id_text <= '9' ? strtoull(id_text, &end, 10) : 0;
	if (errno || id == 0 || !end || *end)
		return reply_static(c, MHD_HTTP_BAD_REQUEST,
				    "/api/v1/episodes: id must be an episode id, a positive decimal "
				    "number\n");
	s = snapshot_acquire();
	if (!s)
		return reply_static(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
	r = render_get(s, RENDER_EPISODES, false, &body, &len);
	strbuf_init(&sb);
	if (r == 0)
		r = json_episodes_pick(body, len, id, &sb);
	snapshot_release(s);
	if (r < 0) {
		strbuf_free(&sb);
		return reply_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	ret = queue(c, strcmp(sb.buf, "{\"episodes\": []}\n") == 0 ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK,
		    MHD_create_response_from_buffer(sb.len, sb.buf, MHD_RESPMEM_MUST_COPY),
		    JSON_CONTENT_TYPE, 1);
	strbuf_free(&sb);
	return ret;
}

static enum MHD_Result serve_episodes(const struct http_server *srv, struct MHD_Connection *c)
{
	const char *id = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "id");

	(void)srv;
	if (id)
		return serve_episode_id(c, id);
	return serve_doc(c, RENDER_EPISODES);
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

/* A path and what answers it: a document of the snapshot, or fn. */
static const struct route {
	const char *path;
	enum render_doc doc;
	route_fn fn;                   /* NULL: serve_doc() of doc */
} routes[] = {
	{ "/metrics", RENDER_METRICS, serve_metrics },
	{ "/api/v1/snapshot", RENDER_SNAPSHOT, NULL },
	{ "/api/v1/episodes", RENDER_EPISODES, serve_episodes },
	{ "/api/v1/history", RENDER_HISTORY, NULL },
	{ "/healthz", .fn = serve_healthz },
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

/* One header field as the request carried it: "Name: value\r\n". */
static enum MHD_Result add_header_bytes(void *cls, enum MHD_ValueKind kind, const char *key,
					const char *value)
{
	size_t *sum = cls;

	(void)kind;
	*sum += strlen(key) + 2 + (value ? strlen(value) : 0) + 2;
	return MHD_YES;
}

/*
 * Bytes of the request line and header fields, each with its CRLF, and the
 * empty line that ends them.  libmicrohttpd keeps no raw copy, so this is
 * counted from what it parsed, each field as "Name: value": whitespace a
 * client adds around a value beyond one space is not counted.  raw_uri_len
 * is the request-target as sent (the URI log callback saw it).
 */
static size_t header_bytes(struct MHD_Connection *c, const char *method, const char *version,
			   size_t raw_uri_len)
{
	size_t sum = strlen(method) + 1 + raw_uri_len + 1 + strlen(version) + 2 + 2;

	MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_bytes, &sum);
	return sum;
}

/* A request that announces a body: nothing here takes one. */
static bool has_body(struct MHD_Connection *c)
{
	const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (len && strspn(len, "0") != strlen(len)) ||
	       MHD_lookup_connection_value(c, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
}

/* The route's answer to a checked request. */
static enum MHD_Result route(const struct http_server *srv, struct MHD_Connection *c,
			     const char *url)
{
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(url, routes[i].path) == 0)
			return routes[i].fn ? routes[i].fn(srv, c) : serve_doc(c, routes[i].doc);
	return serve_asset(srv, c, url);
}

/*
 * Answer a checked request.  The answer has the write deadline: libmicrohttpd
 * drops the connection when writing it makes no progress for write_timeout
 * (http_request_completed gives the next request its own deadline back, and
 * makes the drop a reset).  A pipelined request is not answered while the
 * socket takes no more: libmicrohttpd (0.9.75, Debian 12) finishes an
 * answer whose last byte the kernel took only on the socket's next
 * POLLOUT, and only then reads on, so with the send buffer capped
 * (HTTP_SNDBUF_BYTES) a client that asks ahead of reading has no more than
 * that buffer's worth of answers in the kernel.  After HTTP_PIPELINE_MAX
 * answers in a row to a client that asked ahead of reading (small ones, that
 * its socket took), the connection closes after this one.
 */
static enum MHD_Result answer(struct http_server *srv, struct MHD_Connection *c, const char *url)
{
	struct conn *cn = http_conn_of(c);
	enum MHD_Result r;
	bool close = false;

	if (cn) {
		pthread_mutex_lock(&srv->lock);
		close = cn->streak >= HTTP_PIPELINE_MAX;
		if (close)
			srv->n_pipelined++;
		pthread_mutex_unlock(&srv->lock);
	}
	MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, srv->write_timeout_s);
	close_after_answer = close;
	r = route(srv, c, url);
	close_after_answer = false;
	return r;
}

/* Marks a request whose first call has passed (see http_handle_request). */
static char request_accepted;

/*
 * libmicrohttpd calls this once when the headers are complete and again
 * when the (empty) body has been read.  A response queued on the first
 * call makes it close the connection, so the first call only checks the
 * request and answers the ones that must end the connection: a method or
 * a body not served here, or headers over the limit.  Good requests are
 * answered on the second call, which keeps the connection open for the
 * next (kept-alive or pipelined) request.
 */
enum MHD_Result http_handle_request(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	struct http_server *srv = cls;

	(void)upload_data;
	if (*con_cls != &request_accepted) {
		/* First call: *con_cls holds the raw target length + 1 (http_uri_logged). */
		uintptr_t logged = (uintptr_t)*con_cls;
		size_t raw_uri_len = logged ? (size_t)(logged & ~HTTP_URI_BAD) - 1 : strlen(url);

		http_mark_busy(srv, c);
		if (strcmp(version, MHD_HTTP_VERSION_1_1) != 0 &&
		    strcmp(version, MHD_HTTP_VERSION_1_0) != 0)
			return reply_static(c, MHD_HTTP_HTTP_VERSION_NOT_SUPPORTED,
					    "HTTP version not supported\n");
		if ((logged & HTTP_URI_BAD) || has_control(url))
			return reply_static(c, MHD_HTTP_BAD_REQUEST,
					    "control character in the request target\n");
		if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
		    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
			return reply_method_not_allowed(c);
		if (header_bytes(c, method, version, raw_uri_len) > srv->header_limit)
			return reply_static(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
					    "request header fields too large\n");
		if (has_body(c))
			return reply_static(c, MHD_HTTP_CONTENT_TOO_LARGE,
					    "no request body is accepted here\n");
		*con_cls = &request_accepted;
		return MHD_YES;
	}
	*upload_data_size = 0;
	return answer(srv, c, url);
}
