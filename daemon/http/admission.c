/*
 * Who holds a place on the HTTP front: the connection table, the counts
 * per client address and what each address has had pushed out lately, the
 * request deadline, and which connection gives its place up when all are
 * taken (http_internal.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>


#include "http_internal.h"

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

unsigned http_addr_count(struct http_server *srv, const unsigned char *a)
{
	return addr_find(srv, a)->count;
}

void http_addr_inc(struct http_server *srv, const unsigned char *a)
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

/* --- what an address has cost others lately -------------------------------- */

static uint32_t debt_now(const struct addr_debt *d, uint32_t now_s)
{
	uint32_t age = now_s - d->stamp_s;

	return age >= 32 ? 0 : d->debt >> age;
}

/* The slot of a, or NULL; with *spare the probed slot owing the least. */
static struct addr_debt *debt_find(struct http_server *srv, const unsigned char *a,
				   uint32_t now_s, struct addr_debt **spare)
{
	size_t home = addr_hash(a, HTTP_DEBT_SLOTS);
	struct addr_debt *least = NULL;

	for (unsigned k = 0; k < HTTP_DEBT_PROBE; k++) {
		struct addr_debt *d = &srv->debts[(home + k) & (HTTP_DEBT_SLOTS - 1)];

		if (d->debt && memcmp(d->addr, a, 16) == 0)
			return d;
		if (!least || debt_now(d, now_s) < debt_now(least, now_s))
			least = d;
	}
	if (spare)
		*spare = least;
	return NULL;
}

void http_debt_add(struct http_server *srv, const unsigned char *a, uint64_t now_ms)
{
	uint32_t now_s = (uint32_t)(now_ms / 1000u);
	struct addr_debt *spare = NULL, *d = debt_find(srv, a, now_s, &spare);

	if (!d) {
		/* Full probe: the one owing least is forgotten. */
		d = spare;
		memcpy(d->addr, a, 16);
		d->debt = 0;
	}
	d->debt = debt_now(d, now_s);
	if (d->debt < HTTP_DEBT_MAX)
		d->debt++;
	d->stamp_s = now_s;
}

unsigned http_debt_of(struct http_server *srv, const unsigned char *a, uint64_t now_ms)
{
	uint32_t now_s = (uint32_t)(now_ms / 1000u);
	struct addr_debt *d = debt_find(srv, a, now_s, NULL);

	return d ? debt_now(d, now_s) : 0;
}

/*
 * Whom a connection counts against, as 16 bytes: an IPv4 address (plain or
 * mapped) as ::ffff:a.b.c.d, an IPv6 address by its /64, the smallest
 * block one client is given: a host has a whole /64 to connect from.
 */
void http_addr_key(const struct sockaddr *sa, unsigned char out[16])
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

void http_slot_free(struct http_server *srv, struct conn *c)
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
 * One answering a client that does not read (its socket takes no more) is
 * reset, so that what its socket holds is freed with it.
 */
void http_doom(struct http_server *srv, struct conn *c)
{
	if (c->busy && http_blocked_on_reader(c->fd)) {
		http_reset_on_close(c->fd);
		srv->n_reset++;
	}
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
void http_sweep(struct http_server *srv, uint64_t now)
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
				http_slot_free(srv, c);
			else if (!next || deadline < next)
				next = deadline;
			continue;
		}
		if (now >= deadline) {
			http_doom(srv, c);
			http_debt_add(srv, c->addr, now);
			srv->n_deadline++;
		} else if (!next || deadline < next)
			next = deadline;
	}
	srv->next_deadline_ms = next;
}

/* Bytes have arrived that libmicrohttpd has not read yet: likely a request. */
bool http_input_pending(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

bool http_blocked_on_reader(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	return poll(&p, 1, 0) == 0;
}

/* --- what a connection may leave in the kernel ----------------------------- */

int http_tune_socket(int fd, unsigned write_timeout_s)
{
	int sndbuf = (int)HTTP_SNDBUF_BYTES;
	unsigned user_timeout_ms = write_timeout_s * 1000u;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms,
		       sizeof(user_timeout_ms)) < 0)
		return -errno;
	return 0;
}

void http_reset_on_close(int fd)
{
	struct linger now = { .l_onoff = 1, .l_linger = 0 };

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
}

/*
 * Whether c may give its place to a newcomer: it has held it at least
 * HTTP_EVICT_MIN_AGE_MS since it was accepted, last answered or last sent a
 * request line (which libmicrohttpd may have read, the request not yet
 * complete or not yet handed to us: not in the socket, not busy), and it is
 * either waiting for a request with none in its socket, or answering one
 * to a client that does not read (the socket takes no more).  Never a
 * request in flight: one in the socket, or one being answered to a client
 * that reads.
 */
static bool evictable(const struct conn *c, uint64_t now)
{
	uint64_t held = c->begun_ms > c->since_ms ? c->begun_ms : c->since_ms;

	if (c->fd < 0 || !c->started || c->doomed || now - held < HTTP_EVICT_MIN_AGE_MS)
		return false;
	if (c->busy)
		return http_blocked_on_reader(c->fd);
	return !http_input_pending(c->fd);
}

/*
 * The connection to give up for a new one when all are taken: by cost to
 * the others, one from the address (IPv6: the /64) holding the most
 * connections, and of those the one that has waited longest for its
 * request, or for its client to read.  A scraper that connects, asks and
 * reads never qualifies (evictable()), and rarely holds many, so the ones
 * that go are the ones that hold places without asking or without reading.
 *
 * A connection younger than HTTP_EVICT_MIN_AGE_MS never goes, whoever
 * holds it: that bounds the places given up to max_connections each
 * HTTP_EVICT_MIN_AGE_MS, so clients that reconnect as fast as they are
 * closed cannot have the server take and answer each of their connections
 * at their pace (the acceptor would fall behind, and the kernel's accept
 * queue, where a scraper waits, fill).  Newcomers beyond that wait parked,
 * the cheapest first.
 *
 * only (an http_addr_key(), or NULL): pick among that address's own
 * connections, for a newcomer from an address at max_connections_per_ip.
 */
struct conn *http_pick_victim(struct http_server *srv, const unsigned char *only, uint64_t now)
{
	struct conn *best = NULL;
	unsigned best_n = 0;

	for (unsigned i = 0; i < srv->n_slots; i++) {
		struct conn *c = &srv->conns[i];
		unsigned n;

		if (c->fd < 0 || !c->started || c->doomed || (only && memcmp(c->addr, only, 16) != 0))
			continue;
		n = http_addr_count(srv, c->addr);
		if (n < best_n || (best && n == best_n && c->since_ms >= best->since_ms))
			continue;
		if (!evictable(c, now))
			continue;
		best = c;
		best_n = n;
	}
	return best;
}

/* --- libmicrohttpd callbacks on the connection's life ---------------------- */

void http_notify_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
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
		http_slot_free(srv, *socket_context);
		*socket_context = NULL;
	}
	pthread_mutex_unlock(&srv->lock);
}

struct conn *http_conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* A complete request arrived: no deadline while it is answered. */
void http_mark_busy(struct http_server *srv, struct MHD_Connection *mc)
{
	struct conn *c = http_conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&srv->lock);
	c->busy = true;
	c->since_ms = mono_ms();
	pthread_mutex_unlock(&srv->lock);
}

void http_mark_begun(struct http_server *srv, struct MHD_Connection *mc)
{
	struct conn *c = http_conn_of(mc);

	if (!c)
		return;
	pthread_mutex_lock(&srv->lock);
	c->begun_ms = mono_ms();
	pthread_mutex_unlock(&srv->lock);
}

/*
 * The response is done: the next request's deadline starts now.  One more
 * in a streak when the client has sent the next request already, or has
 * not taken this answer (the socket takes no more): a client pipelining
 * requests it does not read.
 */
void http_request_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct conn *c = http_conn_of(mc);

	(void)con_cls;
	if (!c)
		return;
	pthread_mutex_lock(&srv->lock);
	/* Writing the answer made no progress for write_timeout: the client
	 * does not read, and what the socket holds goes with it. */
	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED && c->busy && !c->doomed) {
		http_reset_on_close(c->fd);
		srv->n_reset++;
	}
	MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, srv->idle_timeout_s);
	c->busy = false;
	c->since_ms = mono_ms();
	if (!c->doomed && (http_input_pending(c->fd) || http_blocked_on_reader(c->fd)))
		c->streak++;
	else
		c->streak = 0;
	if (!srv->next_deadline_ms)
		srv->next_deadline_ms = c->since_ms + srv->timeout_ms;
	pthread_mutex_unlock(&srv->lock);
}
