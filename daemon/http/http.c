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
 *
 * The parts: admission.c (the table, per-address counts, deadlines, who
 * gives up a place), acceptor.c (the acceptor thread), routes.c (requests
 * and answers), listen.c (http_bind); this file sizes the table to the fd
 * limit, and starts and stops the server.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>


#include "conf_check.h"
#include "http_internal.h"
#include "log.h"

static size_t pool_bytes(const struct http_options *opt)
{
	size_t header = opt->max_header_bytes ? opt->max_header_bytes : HTTP_DEFAULT_HEADER_BYTES;

	return header + HTTP_POOL_SLACK;
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

/* conf_check.h's file descriptor check: fit_fd_limit's rule, the limit left as it is. */
int conf_check_fds(unsigned max_connections, char *err, size_t errlen)
{
	struct rlimit rl;
	unsigned long soft;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;   /* cannot tell: the server's start decides */
	return http_check_fd_limit(max_connections, count_open_fds(), (unsigned long)rl.rlim_cur,
				   (unsigned long)rl.rlim_max, &soft, err, errlen);
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
		0, NULL, NULL, http_handle_request, srv,
		MHD_OPTION_EXTERNAL_LOGGER, http_mhd_logger, NULL,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREAD_POOL_SIZE,
		/* Each worker may hold the whole table: libmicrohttpd checks a
		 * worker's limit when it takes a connection up, after
		 * MHD_add_connection() picked it, and would drop one unannounced. */
		MHD_OPTION_CONNECTION_LIMIT, srv->n_slots * HTTP_THREAD_POOL_SIZE,
		/* An idle limit between answers; the request side has the
		 * acceptor's deadline, an answer the write deadline (answer()). */
		MHD_OPTION_CONNECTION_TIMEOUT, srv->idle_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool_bytes(opt),
		MHD_OPTION_NOTIFY_CONNECTION, http_notify_connection, srv,
		MHD_OPTION_NOTIFY_COMPLETED, http_request_completed, srv,
		MHD_OPTION_URI_LOG_CALLBACK, http_uri_logged, srv,
		MHD_OPTION_END);
	if (!srv->mhd) {
		snprintf(err, errlen, "http: libmicrohttpd refused to start");
		free_server(srv);
		return NULL;
	}
	r = pthread_create(&srv->acceptor, NULL, http_acceptor_main, srv);
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
