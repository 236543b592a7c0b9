/*
 * The HTTP endpoint: libmicrohttpd with an internal thread pool, a table
 * of routes, and responses built from the current published snapshot.
 * Handlers take a snapshot reference, format (or reuse the cached
 * /metrics text) and hand the bytes to libmicrohttpd without a copy; they
 * never touch hardware and never wait for the sampler.
 *
 * Connections do not reach libmicrohttpd by its own listening socket: an
 * acceptor thread here accepts them, keeps a table of them (address,
 * whether a request is being answered, since when it waits for one) and
 * hands them over with MHD_add_connection().  The table is what enforces
 * the per-address limit, the request deadline and who gives up a place
 * when all are taken; libmicrohttpd's notify callbacks keep it current.
 * The acceptor ends a connection early with shutdown(), never close(): it
 * stays libmicrohttpd's to close, and the table's lock, taken by the CLOSED
 * callback too, guarantees the fd is still that connection's.  It does not
 * choose the listen address or where the socket comes from: main passes
 * one from http_bind() or from systemd.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
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
#define HTTP_DEFAULT_CONNECTIONS 64u
#define HTTP_DEFAULT_TIMEOUT_S 10u
/* File descriptors beyond the connections: libmicrohttpd's wake-up fds,
 * the acceptor's, and what the rest of the daemon opens on a reload. */
#define HTTP_FD_RESERVE 32u
/* fd numbers the table can index; more are refused (and never needed below
 * the limit http_start() sets). */
#define HTTP_FD_INDEX_MAX (1ul << 20)
#define HTTP_ACCEPTOR_TICK_MS 1000
#define HTTP_ACCEPT_BATCH 64
#define HTTP_ACCEPT_BACKOFF_MS 100
#define HTTP_PARKED_RETRY_MS 5
#define HTTP_PARKED_MAX 64
/* A connection libmicrohttpd has not announced this long after its
 * deadline was dropped by it unannounced; its slot is forgotten. */
#define HTTP_UNANNOUNCED_MS 1000u
/* How long a newcomer that has sent nothing is kept aside while all places
 * are taken, before it may take a waiting connection's place all the same. */
#define HTTP_INPUT_GRACE_MS 100
/* A connection gives up its place only after it held it this long: one
 * accepted a moment ago, or answered a moment ago, may have its request on
 * the way (a scraper's bytes can reach the socket well after accept() on a
 * busy host). */
#define HTTP_EVICT_MIN_AGE_MS 100u
#define HTTP_DEFAULT_WRITE_TIMEOUT_S 2u
/* Requests answered in a row while the client had not taken the previous
 * answer (or had sent the next request already): the last one closes. */
#define HTTP_PIPELINE_MAX 16u
/* Longest client text quoted in the log, before escaping. */
#define HTTP_LOG_QUOTE_MAX 120u
#define HTTP_DEFAULT_HEADER_BYTES (16u * 1024u)
/* Room in the per-connection pool beyond the request headers: response
 * headers and the write buffer come out of the same pool. */
#define HTTP_POOL_SLACK (8u * 1024u)
#define HTTP_LOG_EVERY_S 60

/* One accepted connection, from accept() until libmicrohttpd closes it;
 * guarded by http_server.lock. */
struct conn {
	int fd;                        /* -1: slot free */
	bool started;                  /* libmicrohttpd announced it: the fd stays open
					* until our CLOSED callback returns */
	bool busy;                     /* a complete request is being answered */
	bool doomed;                   /* shut down here; libmicrohttpd will close it */
	uint64_t since_ms;             /* accepted, its last response finished, or (busy)
					* its request complete */
	unsigned streak;               /* requests answered in a row with the next one
					* already sent or the last answer not taken */
	unsigned char addr[16];        /* client address, IPv4 as ::ffff:a.b.c.d */
};

/* Open connections of one client address (count 0: empty entry). */
struct addr_count {
	unsigned char addr[16];
	unsigned count;
};

struct http_server {
	struct MHD_Daemon *mhd;
	int listen_fd;
	int wake_fd;                   /* eventfd: stop, or a slot came free */
	pthread_t acceptor;
	bool acceptor_running;
	atomic_bool stopping;
	struct http_options opt;
	unsigned max_live;             /* max_connections */
	size_t header_limit;           /* max_header_bytes */
	uint64_t timeout_ms;           /* request_timeout */
	unsigned idle_timeout_s;       /* libmicrohttpd's idle limit between answers */
	unsigned write_timeout_s;      /* no progress writing an answer for this long: closed */

	pthread_mutex_t lock;
	struct conn *conns;            /* n_slots: max_live open + as many closing */
	unsigned n_slots, n_used, n_live;
	unsigned *free_slots;          /* stack of free indices, n_slots - n_used deep */
	unsigned *slot_of_fd;          /* fd -> index + 1, 0: none; n_fd_index entries */
	size_t n_fd_index;
	struct addr_count *addrs;      /* open addressing, addr_cap a power of two */
	size_t addr_cap;
	uint64_t next_deadline_ms;     /* earliest deadline of a waiting connection; 0: none */
	unsigned n_deadline, n_evicted, n_refused, n_pipelined; /* since the last report */
	bool full;                     /* every slot taken: the acceptor waits for CLOSED */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* --- per-address counts --------------------------------------------------- */

static size_t addr_hash(const unsigned char *a, size_t cap)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < 16; i++)
		h = (h ^ a[i]) * 1099511628211ull;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/* The entry for a (found, or the empty one where it would go). */
static struct addr_count *addr_find(struct http_server *srv, const unsigned char *a)
{
	size_t i = addr_hash(a, srv->addr_cap);

	while (srv->addrs[i].count && memcmp(srv->addrs[i].addr, a, 16) != 0)
		i = (i + 1) & (srv->addr_cap - 1);
	return &srv->addrs[i];
}

static unsigned addr_count(struct http_server *srv, const unsigned char *a)
{
	return addr_find(srv, a)->count;
}

static void addr_inc(struct http_server *srv, const unsigned char *a)
{
	struct addr_count *e = addr_find(srv, a);

	memcpy(e->addr, a, 16);
	e->count++;
}

/* Decrement; an entry that falls to 0 is removed by shifting its cluster back. */
static void addr_dec(struct http_server *srv, const unsigned char *a)
{
	size_t mask = srv->addr_cap - 1;
	struct addr_count *e = addr_find(srv, a);
	size_t hole, j;

	if (!e->count || --e->count)
		return;
	hole = (size_t)(e - srv->addrs);
	for (j = (hole + 1) & mask; srv->addrs[j].count; j = (j + 1) & mask) {
		size_t home = addr_hash(srv->addrs[j].addr, srv->addr_cap);

		/* Move j into the hole unless its home lies cyclically in (hole, j]. */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			srv->addrs[hole] = srv->addrs[j];
			srv->addrs[j].count = 0;
			hole = j;
		}
	}
}

/*
 * Whom a connection counts against, as 16 bytes: an IPv4 address (plain or
 * mapped) as ::ffff:a.b.c.d, an IPv6 address by its /64, the smallest
 * block one client is given: a host has a whole /64 to connect from.
 */
static void addr_key(const struct sockaddr *sa, unsigned char out[16])
{
	static const unsigned char v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(out, 0, 16);
	if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		if (memcmp(out, v4mapped, sizeof(v4mapped)) != 0)
			memset(out + 8, 0, 8);
		return;
	}
	out[10] = 0xff;
	out[11] = 0xff;
	if (sa->sa_family == AF_INET)
		memcpy(out + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
}

/* --- the connection table (callers hold srv->lock) ------------------------ */

static void slot_free(struct http_server *srv, struct conn *c)
{
	if (c->fd >= 0 && (size_t)c->fd < srv->n_fd_index)
		srv->slot_of_fd[c->fd] = 0;
	addr_dec(srv, c->addr);
	if (!c->doomed)
		srv->n_live--;
	srv->n_used--;
	c->fd = -1;
	srv->free_slots[srv->n_slots - srv->n_used - 1] = (unsigned)(c - srv->conns);
	if (srv->full) {
		uint64_t one = 1;

		srv->full = false;
		(void)!write(srv->wake_fd, &one, sizeof(one));
	}
}

/*
 * Close a waiting connection early: shutdown() makes libmicrohttpd see the
 * end of the stream at once and close it.  Only started connections: their
 * fd cannot have been closed and reused, because CLOSED takes the lock.
 */
static void doom(struct http_server *srv, struct conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
	c->doomed = true;
	srv->n_live--;
}

/*
 * Close connections past their request deadline, forget ones libmicrohttpd
 * never announced (it closed them on an error of its own), and find the
 * next deadline.  An answer being written has libmicrohttpd's own write
 * deadline instead (no progress for write_timeout: closed).
 */
static void sweep(struct http_server *srv, uint64_t now)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < srv->n_slots; i++) {
		struct conn *c = &srv->conns[i];
		uint64_t deadline = c->since_ms + srv->timeout_ms;

		if (c->fd < 0 || c->busy || c->doomed)
			continue;
		if (!c->started) {
			deadline += HTTP_UNANNOUNCED_MS;
			if (now >= deadline)
				slot_free(srv, c);
			else if (!next || deadline < next)
				next = deadline;
			continue;
		}
		if (now >= deadline) {
			doom(srv, c);
			srv->n_deadline++;
		} else if (!next || deadline < next)
			next = deadline;
	}
	srv->next_deadline_ms = next;
}

/* Bytes have arrived that libmicrohttpd has not read yet: likely a request. */
static bool input_pending(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* The socket takes no more bytes: an answer waits for its client to read. */
static bool blocked_on_reader(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 0;
}

/*
 * Whether c may give its place to a newcomer: it has held it at least
 * HTTP_EVICT_MIN_AGE_MS since it was accepted or last answered, and it is
 * either waiting for a request with none in its socket, or answering one
 * to a client that does not read (the socket takes no more).  Never a
 * request in flight: one in the socket, or one being answered to a client
 * that reads.
 */
static bool evictable(const struct conn *c, uint64_t now, bool young_too)
{
	if (c->fd < 0 || !c->started || c->doomed)
		return false;
	if (now - c->since_ms < HTTP_EVICT_MIN_AGE_MS && !(young_too && !c->busy))
		return false;
	if (c->busy)
		return blocked_on_reader(c->fd);
	return !input_pending(c->fd);
}

/*
 * The connection to give up for a new one when all are taken: by cost to
 * the others, one from the address (IPv6: the /64) holding the most
 * connections, and of those the one that has waited longest for its
 * request, or for its client to read.  A scraper that connects, asks and
 * reads never qualifies (evictable()), and rarely holds many, so the ones
 * that go are the ones that hold places without asking or without reading.
 *
 * When none has held its place HTTP_EVICT_MIN_AGE_MS, a younger waiting
 * one may go, but only from an address holding more than one connection:
 * a client's only connection, just accepted, is never taken (its request
 * may be on the way), while a flood from many connections of one address
 * does not make every asker wait for its connections to age.
 */
static struct conn *pick_victim(struct http_server *srv, uint64_t now)
{
	for (int pass = 0; pass < 2; pass++) {
		struct conn *best = NULL;
		unsigned best_n = pass ? 1 : 0;

		for (unsigned i = 0; i < srv->n_slots; i++) {
			struct conn *c = &srv->conns[i];
			unsigned n;

			if (c->fd < 0 || !c->started || c->doomed)
				continue;
			n = addr_count(srv, c->addr);
			if (n < best_n || (best && n == best_n && c->since_ms >= best->since_ms))
				continue;
			if (pass && n < 2)
				continue;
			if (!evictable(c, now, pass == 1))
				continue;
			best = c;
			best_n = n;
		}
		if (best)
			return best;
	}
	return NULL;
}

/* --- libmicrohttpd callbacks on the connection's life ---------------------- */

static void notify_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	const union MHD_ConnectionInfo *info;
	struct conn *c;

	pthread_mutex_lock(&srv->lock);
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		info = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = NULL;
		if (info && info->connect_fd >= 0 && (size_t)info->connect_fd < srv->n_fd_index &&
		    srv->slot_of_fd[info->connect_fd]) {
			c = &srv->conns[srv->slot_of_fd[info->connect_fd] - 1];
			c->started = true;
			*socket_context = c;
		}
	} else if (*socket_context) {
		slot_free(srv, *socket_context);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&srv->lock);
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* A complete request arrived: no deadline while it is answered. */
static void mark_busy(struct http_server *srv, struct MHD_Connection *mc)
{
	struct conn *c = conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&srv->lock);
	c->busy = true;
	c->since_ms = mono_ms();
	pthread_mutex_unlock(&srv->lock);
}

/*
 * The response is done: the next request's deadline starts now.  One more
 * in a streak when the client has sent the next request already, or has
 * not taken this answer (the socket takes no more): a client pipelining
 * requests it does not read.
 */
static void request_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct conn *c = conn_of(mc);

	(void)con_cls;
	(void)toe;
	if (!c)
		return;
	pthread_mutex_lock(&srv->lock);
	MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, srv->idle_timeout_s);
	c->busy = false;
	c->since_ms = mono_ms();
	if (!c->doomed && (input_pending(c->fd) || blocked_on_reader(c->fd)))
		c->streak++;
	else
		c->streak = 0;
	if (!srv->next_deadline_ms)
		srv->next_deadline_ms = c->since_ms + srv->timeout_ms;
	pthread_mutex_unlock(&srv->lock);
}

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
 * The request line is in: remember the target's raw length for the header
 * count, and whether it carries a control character (answered 400: after
 * decoding, "/metrics%00" would read as "/metrics", and "%0a" forge a line
 * wherever the path is written).
 */
static void *uri_logged(void *cls, const char *uri, struct MHD_Connection *mc)
{
	(void)cls;
	(void)mc;
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
 * byte outside ASCII as \xNN, and "..." when it was cut, so that no
 * client can write a line of its own or an escape sequence into the log.
 */
static void quote_client(const char *in, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	for (i = 0; in[i] && i < HTTP_LOG_QUOTE_MAX && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c < 0x20 || c >= 0x7f || c == '\\') {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	if (in[i] && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/*
 * libmicrohttpd reports per-connection trouble, which can quote what a
 * client sent; quoted (quote_client) and at most one line a minute.
 */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
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

/* Set by handle_request for the answer it is about to queue on this thread:
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
			return routes[i].fn(srv, c);
	return serve_asset(srv, c, url);
}

/*
 * Answer a checked request.  The answer has the write deadline: libmicrohttpd
 * drops the connection when writing it makes no progress for write_timeout
 * (request_completed gives the next request its own deadline back).  After
 * HTTP_PIPELINE_MAX answers in a row to a client that asked ahead of reading,
 * the connection closes after this one.
 */
static enum MHD_Result answer(struct http_server *srv, struct MHD_Connection *c, const char *url)
{
	struct conn *cn = conn_of(c);
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

/* Marks a request whose first call has passed (see handle_request). */
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
static enum MHD_Result handle_request(void *cls, struct MHD_Connection *c, const char *url,
				      const char *method, const char *version,
				      const char *upload_data, size_t *upload_data_size,
				      void **con_cls)
{
	struct http_server *srv = cls;

	(void)upload_data;
	if (*con_cls != &request_accepted) {
		/* First call: *con_cls holds the raw target length + 1 (uri_logged). */
		uintptr_t logged = (uintptr_t)*con_cls;
		size_t raw_uri_len = logged ? (size_t)(logged & ~HTTP_URI_BAD) - 1 : strlen(url);

		mark_busy(srv, c);
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

/* --- accepting ------------------------------------------------------------ */

/* What became of a connection offered to admit(). */
enum admit_result {
	ADMITTED,       /* in the table and with libmicrohttpd, or refused and closed */
	ADMITTED_FULL,  /* the same, and no slot is left for another */
	ADMIT_NO_INPUT, /* all places taken and it has sent nothing yet: the caller keeps it */
	ADMIT_LATER,    /* all places taken and none can be given up: the caller keeps it */
};

/*
 * Take one accepted socket into the table and hand it to libmicrohttpd, or
 * close it when its address is over the per-address limit.  When all
 * places are taken, a waiting connection gives its place up (pick_victim)
 * to a newcomer that has sent its request, or that has been kept
 * (may_wait false) long enough; none being waiting, the newcomer waits.
 */
static enum admit_result admit(struct http_server *srv, int fd, const struct sockaddr *sa,
			       socklen_t sa_len, bool may_wait)
{
	unsigned char key[16];
	struct conn *c;
	unsigned idx;
	bool room;

	addr_key(sa, key);
	pthread_mutex_lock(&srv->lock);
	/* accept() handed out this number, so a slot still holding it is one
	 * libmicrohttpd closed without announcing it. */
	if ((size_t)fd < srv->n_fd_index && srv->slot_of_fd[fd])
		slot_free(srv, &srv->conns[srv->slot_of_fd[fd] - 1]);
	if ((size_t)fd >= srv->n_fd_index ||
	    (srv->opt.max_connections_per_ip &&
	     addr_count(srv, key) >= srv->opt.max_connections_per_ip))
		goto refuse;
	if (srv->n_live >= srv->max_live && may_wait && !input_pending(fd)) {
		pthread_mutex_unlock(&srv->lock);
		return ADMIT_NO_INPUT;
	}
	if (srv->n_used >= srv->n_slots)
		goto later;
	if (srv->n_live >= srv->max_live) {
		struct conn *victim = pick_victim(srv, mono_ms());

		if (!victim)
			goto later;
		doom(srv, victim);
		srv->n_evicted++;
	}
	idx = srv->free_slots[srv->n_slots - srv->n_used - 1];
	c = &srv->conns[idx];
	*c = (struct conn){ .fd = fd, .since_ms = mono_ms() };
	memcpy(c->addr, key, 16);
	addr_inc(srv, key);
	srv->slot_of_fd[fd] = idx + 1;
	srv->n_used++;
	srv->n_live++;
	if (!srv->next_deadline_ms)
		srv->next_deadline_ms = c->since_ms + srv->timeout_ms;
	pthread_mutex_unlock(&srv->lock);
	if (MHD_add_connection(srv->mhd, fd, sa, sa_len) != MHD_YES) {
		/* libmicrohttpd has closed the socket already. */
		pthread_mutex_lock(&srv->lock);
		if (c->fd == fd && !c->started)
			slot_free(srv, c);
		pthread_mutex_unlock(&srv->lock);
	}
	pthread_mutex_lock(&srv->lock);
	room = srv->n_used < srv->n_slots;
	pthread_mutex_unlock(&srv->lock);
	return room ? ADMITTED : ADMITTED_FULL;
refuse:
	srv->n_refused++;
	room = srv->n_used < srv->n_slots;
	pthread_mutex_unlock(&srv->lock);
	close(fd);
	return room ? ADMITTED : ADMITTED_FULL;
later:
	pthread_mutex_unlock(&srv->lock);
	return ADMIT_LATER;
}

/* An accepted connection the acceptor keeps until it can have a place. */
struct parked {
	int fd;
	socklen_t sa_len;
	uint64_t since_ms;
	unsigned char key[16];         /* addr_key() */
	struct sockaddr_storage sa;
};

struct acceptor {
	struct parked parked[HTTP_PARKED_MAX];
	unsigned n_parked;
	bool blocked;           /* admit() said ADMIT_LATER: no place can be had for now */
};

static void unpark(struct acceptor *a, unsigned i)
{
	a->n_parked--;
	memmove(&a->parked[i], &a->parked[i + 1], (a->n_parked - i) * sizeof(a->parked[0]));
}

/* Offer parked[i] a place again; true when it is gone from the list. */
static bool retry_parked(struct http_server *srv, struct acceptor *a, unsigned i, uint64_t now)
{
	struct parked *p = &a->parked[i];
	enum admit_result r = admit(srv, p->fd, (struct sockaddr *)&p->sa, p->sa_len,
				    now - p->since_ms < HTTP_INPUT_GRACE_MS);

	if (r == ADMIT_LATER)
		a->blocked = true;
	if (r == ADMIT_LATER || r == ADMIT_NO_INPUT)
		return false;
	unpark(a, i);
	return true;
}

/*
 * Offer the parked connections a place, the cheapest first: the ones that
 * have sent their request, then the ones from the addresses that hold the
 * fewest connections, and of those the longest-parked.  A scraper that
 * connects while attackers hold every place and fill the parking goes in
 * ahead of them.
 */
static void retry_all_parked(struct http_server *srv, struct acceptor *a, uint64_t now)
{
	unsigned order[HTTP_PARKED_MAX], held[HTTP_PARKED_MAX], n = a->n_parked;
	int fds[HTTP_PARKED_MAX];

	pthread_mutex_lock(&srv->lock);
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;

		/* Asked: ahead of every one that has not. */
		held[i] = addr_count(srv, a->parked[i].key) +
			  (input_pending(a->parked[i].fd) ? 0 : 1u << 30);
		/* Insertion sort by held count; parked[] is in arrival order already. */
		while (j > 0 && held[order[j - 1]] > held[i]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	pthread_mutex_unlock(&srv->lock);
	for (unsigned k = 0; k < n; k++)
		fds[k] = a->parked[order[k]].fd;
	for (unsigned k = 0; k < n && !a->blocked; k++) {
		/* Indices shift as entries leave: find it by its fd. */
		for (unsigned i = 0; i < a->n_parked; i++) {
			if (a->parked[i].fd == fds[k]) {
				retry_parked(srv, a, i, now);
				break;
			}
		}
	}
}

/*
 * The parking is full: close the entry that costs the others most.  Never
 * one whose request is in its socket while another has none; of those, one
 * that has sent nothing for HTTP_INPUT_GRACE_MS first; then one from the
 * address with the most connections (held and parked), the longest-parked
 * of those: one address's flood cannot push out a newcomer from another.
 */
static void drop_parked(struct http_server *srv, struct acceptor *a, uint64_t now)
{
	unsigned best = 0;
	uint64_t best_key = 0;

	pthread_mutex_lock(&srv->lock);
	for (unsigned i = 0; i < a->n_parked; i++) {
		const struct parked *p = &a->parked[i];
		uint64_t n = addr_count(srv, p->key), key;

		for (unsigned j = 0; j < a->n_parked; j++)
			n += memcmp(a->parked[j].key, p->key, 16) == 0;
		/* Higher goes first: no request, then idle past the grace, then count. */
		key = ((uint64_t)!input_pending(p->fd) << 40) |
		      ((uint64_t)(now - p->since_ms >= HTTP_INPUT_GRACE_MS) << 39) | n;
		if (key > best_key) {
			best = i;
			best_key = key;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	close(a->parked[best].fd);
	unpark(a, best);
}

/*
 * Accept what the listen queue holds (a batch at most).  When all places
 * are taken, a newcomer that has not sent its request yet is kept aside
 * for HTTP_INPUT_GRACE_MS rather than given a place at once: under a flood
 * of connections that send nothing, the kept ones push each other out
 * (closed), cheaply, while one that asks is let in at once.  Accepting
 * goes on while no place can be had (blocked): the parking, not the
 * kernel's queue, is where newcomers wait, and a full parking drops its
 * costliest entry (drop_parked), so a newcomer is never stuck in the
 * kernel's queue behind connections parked here.
 */
static void accept_batch(struct http_server *srv, struct acceptor *a)
{
	for (int i = 0; i < HTTP_ACCEPT_BATCH; i++) {
		struct parked *p;
		enum admit_result r;
		int fd;

		if (a->n_parked == HTTP_PARKED_MAX) {
			/* Make room: the oldest goes in (request sent), or the costliest is closed. */
			if (a->blocked || !retry_parked(srv, a, 0, mono_ms()))
				drop_parked(srv, a, mono_ms());
		}
		p = &a->parked[a->n_parked];
		p->sa_len = sizeof(p->sa);
		fd = accept4(srv->listen_fd, (struct sockaddr *)&p->sa, &p->sa_len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				log_warning("http: accept: %s; not accepting for %d ms",
					    strerror(errno), HTTP_ACCEPT_BACKOFF_MS);
				usleep(HTTP_ACCEPT_BACKOFF_MS * 1000);
			}
			return;
		}
		p->fd = fd;
		p->since_ms = mono_ms();
		addr_key((struct sockaddr *)&p->sa, p->key);
		r = a->blocked ? ADMIT_LATER : admit(srv, fd, (struct sockaddr *)&p->sa, p->sa_len, true);
		if (r == ADMIT_NO_INPUT || r == ADMIT_LATER)
			a->n_parked++;
		if (r == ADMIT_LATER)
			a->blocked = true;
		if (r == ADMITTED_FULL)
			return;
	}
}

/* At most once a minute, what the limits did to clients (lock held). */
static void report(struct http_server *srv)
{
	if (srv->n_deadline || srv->n_evicted || srv->n_refused || srv->n_pipelined)
		log_info("http: in the last %d s, %u connections closed at their request deadline, "
			 "%u gave their place to a client that asked, %u refused over "
			 "max_connections_per_ip, %u closed after %u pipelined answers not read",
			 HTTP_LOG_EVERY_S, srv->n_deadline, srv->n_evicted, srv->n_refused,
			 srv->n_pipelined, HTTP_PIPELINE_MAX);
	srv->n_deadline = srv->n_evicted = srv->n_refused = srv->n_pipelined = 0;
}

/*
 * The acceptor thread: accepts every connection at once (none waits in the
 * kernel's queue behind connections that never send a request), admits
 * it, and closes waiting connections at their deadline.
 */
static void *acceptor_main(void *arg)
{
	struct http_server *srv = arg;
	struct pollfd pfd[2] = {
		{ .fd = srv->wake_fd, .events = POLLIN },
		{ .fd = srv->listen_fd, .events = POLLIN },
	};
	struct acceptor a = { .n_parked = 0 };
	uint64_t next_report_ms = 0;

	while (!atomic_load(&srv->stopping)) {
		uint64_t now = mono_ms(), drained;
		int timeout = HTTP_ACCEPTOR_TICK_MS;
		nfds_t n = 2;

		a.blocked = false;
		retry_all_parked(srv, &a, now);
		pthread_mutex_lock(&srv->lock);
		if (srv->next_deadline_ms && now >= srv->next_deadline_ms)
			sweep(srv, now);
		if (now >= next_report_ms) {
			report(srv);
			next_report_ms = now + HTTP_LOG_EVERY_S * 1000u;
		}
		if (srv->next_deadline_ms && srv->next_deadline_ms - now < (uint64_t)timeout)
			timeout = (int)(srv->next_deadline_ms - now);
		/* Every slot taken (half of them closing): wait for a CLOSED. */
		srv->full = srv->n_used >= srv->n_slots;
		if (srv->full || a.blocked)
			n = 1;
		pthread_mutex_unlock(&srv->lock);
		if (a.n_parked && timeout > HTTP_PARKED_RETRY_MS)
			timeout = HTTP_PARKED_RETRY_MS;
		if (poll(pfd, n, timeout) <= 0)
			continue;
		if (pfd[0].revents & POLLIN)
			(void)!read(srv->wake_fd, &drained, sizeof(drained));
		if (n == 2 && (pfd[1].revents & POLLIN))
			accept_batch(srv, &a);
	}
	for (unsigned i = 0; i < a.n_parked; i++)
		close(a.parked[i].fd);
	return NULL;
}

/* --- file descriptors -------------------------------------------------------- */

unsigned long http_fds_needed(unsigned max_connections)
{
	return 2ul * max_connections + HTTP_FD_RESERVE;
}

int http_check_fd_limit(unsigned max_connections, unsigned long in_use, unsigned long soft,
			unsigned long hard, unsigned long *ret_soft, char *err, size_t errlen)
{
	unsigned long need = in_use + http_fds_needed(max_connections);
	unsigned long fit = hard > in_use + HTTP_FD_RESERVE ? (hard - in_use - HTTP_FD_RESERVE) / 2 : 0;

	if (need <= soft) {
		*ret_soft = soft;
		return 0;
	}
	if (need <= hard) {
		*ret_soft = need;
		return 0;
	}
	snprintf(err, errlen,
		 "max_connections = %u needs %lu file descriptors (2 per connection: "
		 "one open, one closing; %lu already open; %u for the server) but the "
		 "hard limit RLIMIT_NOFILE is %lu: lower max_connections to %lu or raise the "
		 "limit (LimitNOFILE= in the unit, ulimit -n)",
		 max_connections, need, in_use, HTTP_FD_RESERVE, hard, fit);
	return -EMFILE;
}

/* Open file descriptors of this process, or 64 when /proc is not there. */
static unsigned long count_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned long n = 0;
	struct dirent *e;

	if (!d)
		return 64;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n > 0 ? n - 1 : 0; /* the directory's own fd */
}

/* Raise the soft fd limit as far as the connection limits need, or explain. */
static int fit_fd_limit(unsigned max_connections, size_t *ret_index, char *err, size_t errlen)
{
	struct rlimit rl;
	unsigned long soft;
	int r;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		snprintf(err, errlen, "http: getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return -errno;
	}
	r = http_check_fd_limit(max_connections, count_open_fds(), (unsigned long)rl.rlim_cur,
				(unsigned long)rl.rlim_max, &soft, err, errlen);
	if (r < 0)
		return r;
	if (soft > (unsigned long)rl.rlim_cur) {
		rl.rlim_cur = (rlim_t)soft;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			snprintf(err, errlen, "http: raising RLIMIT_NOFILE to %lu: %s", soft,
				 strerror(errno));
			return -errno;
		}
	}
	/* fds are handed out lowest first, so every one stays below the limit. */
	*ret_index = soft < HTTP_FD_INDEX_MAX ? soft : HTTP_FD_INDEX_MAX;
	return 0;
}

static void free_server(struct http_server *srv)
{
	if (srv->wake_fd >= 0)
		close(srv->wake_fd);
	pthread_mutex_destroy(&srv->lock);
	free(srv->conns);
	free(srv->free_slots);
	free(srv->slot_of_fd);
	free(srv->addrs);
	free(srv);
}

/* The connection table for max_connections open and as many closing. */
static int alloc_table(struct http_server *srv, size_t n_fd_index)
{
	srv->n_slots = 2 * srv->max_live;
	srv->addr_cap = 16;
	while (srv->addr_cap < 2u * srv->n_slots)
		srv->addr_cap *= 2;
	srv->n_fd_index = n_fd_index;
	srv->conns = calloc(srv->n_slots, sizeof(*srv->conns));
	srv->free_slots = calloc(srv->n_slots, sizeof(*srv->free_slots));
	srv->slot_of_fd = calloc(n_fd_index, sizeof(*srv->slot_of_fd));
	srv->addrs = calloc(srv->addr_cap, sizeof(*srv->addrs));
	if (!srv->conns || !srv->free_slots || !srv->slot_of_fd || !srv->addrs)
		return -ENOMEM;
	for (unsigned i = 0; i < srv->n_slots; i++) {
		srv->conns[i].fd = -1;
		srv->free_slots[i] = srv->n_slots - 1 - i;
	}
	return 0;
}

struct http_server *http_start(const struct http_options *opt, char *err, size_t errlen)
{
	struct http_server *srv;
	size_t n_fd_index = 0;
	int r;

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
	srv->wake_fd = -1;
	srv->max_live = opt->max_connections ? opt->max_connections : HTTP_DEFAULT_CONNECTIONS;
	srv->header_limit = opt->max_header_bytes ? opt->max_header_bytes : HTTP_DEFAULT_HEADER_BYTES;
	srv->timeout_ms = 1000ull * (opt->request_timeout_s ? opt->request_timeout_s
							    : HTTP_DEFAULT_TIMEOUT_S);
	srv->idle_timeout_s = (unsigned)(srv->timeout_ms / 1000u);
	srv->write_timeout_s = opt->write_timeout_s ? opt->write_timeout_s
						    : HTTP_DEFAULT_WRITE_TIMEOUT_S;
	pthread_mutex_init(&srv->lock, NULL);
	/* A socket from systemd may be blocking; the acceptor drains the queue
	 * until accept() says EAGAIN. */
	r = fcntl(opt->listen_fd, F_GETFL);
	if (r < 0 || fcntl(opt->listen_fd, F_SETFL, r | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "http: making fd %d non-blocking: %s", opt->listen_fd,
			 strerror(errno));
		free_server(srv);
		return NULL;
	}
	r = fit_fd_limit(srv->max_live, &n_fd_index, err, errlen);
	if (r < 0) {
		free_server(srv);
		return NULL;
	}
	srv->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srv->wake_fd < 0 || alloc_table(srv, n_fd_index) < 0) {
		snprintf(err, errlen, "http: %s", srv->wake_fd < 0 ? strerror(errno) : "out of memory");
		free_server(srv);
		return NULL;
	}
	/*
	 * poll(), not epoll: libmicrohttpd's epoll is edge-triggered and misses
	 * a FIN that arrives with the request's last bytes, so a client that
	 * sends and hangs up would hold its connection until a timeout.  poll()
	 * reports the end of the stream on the next round.  The acceptor above
	 * owns the listening socket; libmicrohttpd gets connections through
	 * MHD_add_connection() and is allowed the open and the closing ones.
	 */
	srv->mhd = MHD_start_daemon(
		MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
			MHD_USE_NO_LISTEN_SOCKET,
		0, NULL, NULL, handle_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREAD_POOL_SIZE,
		/* Each worker may hold the whole table: libmicrohttpd checks a
		 * worker's limit when it takes a connection up, after
		 * MHD_add_connection() picked it, and would drop one unannounced. */
		MHD_OPTION_CONNECTION_LIMIT, srv->n_slots * HTTP_THREAD_POOL_SIZE,
		/* An idle limit between answers; the request side has the
		 * acceptor's deadline, an answer the write deadline (answer()). */
		MHD_OPTION_CONNECTION_TIMEOUT, srv->idle_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool_bytes(opt),
		MHD_OPTION_NOTIFY_CONNECTION, notify_connection, srv,
		MHD_OPTION_NOTIFY_COMPLETED, request_completed, srv,
		MHD_OPTION_URI_LOG_CALLBACK, uri_logged, NULL,
		MHD_OPTION_END);
	if (!srv->mhd) {
		snprintf(err, errlen, "http: libmicrohttpd refused to start");
		free_server(srv);
		return NULL;
	}
	r = pthread_create(&srv->acceptor, NULL, acceptor_main, srv);
	if (r != 0) {
		snprintf(err, errlen, "http: starting the acceptor thread: %s", strerror(r));
		MHD_stop_daemon(srv->mhd);
		free_server(srv);
		return NULL;
	}
	return srv;
}

void http_stop(struct http_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	atomic_store(&s->stopping, true);
	(void)!write(s->wake_fd, &one, sizeof(one));
	pthread_join(s->acceptor, NULL);
	/* Closes every connection; their CLOSED callbacks empty the table. */
	MHD_stop_daemon(s->mhd);
	close(s->listen_fd);
	free_server(s);
}
