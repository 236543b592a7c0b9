/*
 * What the HTTP front's files share (http.h is its interface): the
 * server's state, the connection table, and the calls between the
 * admission (who holds a place), the acceptor, the routes and the start
 * and stop.  Not for use outside daemon/http.
 */
#ifndef UNCORED_HTTP_INTERNAL_H
#define UNCORED_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "http.h"

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
/*
 * SO_SNDBUF of every accepted connection: what the kernel may hold of the
 * answers a client has not taken.  Linux doubles it for its bookkeeping and
 * stops the autotuning that grows a send buffer to tcp_wmem's maximum
 * (4 MiB by default), so each connection holds at most 128 KiB of the
 * host's TCP memory on the server's side, where a client that did not read
 * held up to 4 MiB (and kept it after the close, as an orphan).  128 KiB in
 * flight still fill about 1 Gbit/s at a 1 ms round trip (a scrape within a
 * data centre); a far scraper gets 128 KiB per round trip.
 */
#define HTTP_SNDBUF_BYTES (64u * 1024u)
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
	uint64_t begun_ms;             /* a request line arrived (older than since_ms: none
					* since) */
	unsigned streak;               /* requests answered in a row with the next one
					* already sent or the last answer not taken */
	unsigned char addr[16];        /* client address, IPv4 as ::ffff:a.b.c.d */
};

/* Addresses whose connections were pushed out lately (http_debt_add), and
 * how many places one probe looks at; a debt halves every second. */
#define HTTP_DEBT_SLOTS 4096u
#define HTTP_DEBT_PROBE 4u
#define HTTP_DEBT_MAX (1u << 20)

/* Connections of one client address pushed out lately: evicted, dropped
 * from the parking, refused or closed at their deadline (debt 0: empty). */
struct addr_debt {
	unsigned char addr[16];
	uint32_t debt;                 /* as of second stamp_s */
	uint32_t stamp_s;
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
	unsigned n_reset;              /* since the last report: reset for not reading */
	bool full;                     /* every slot taken: the acceptor waits for CLOSED */
	struct addr_debt debts[HTTP_DEBT_SLOTS]; /* lossy: a busy table forgets the least */
};

/* Milliseconds on the monotonic clock. */
static inline uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- admission.c: the connection table and who gives up a place (callers hold srv->lock) */

/* Open connections from a (an addr_key), counted per address; and one more. */
unsigned http_addr_count(struct http_server *srv, const unsigned char *a);
void http_addr_inc(struct http_server *srv, const unsigned char *a);
/*
 * What an address (an addr_key) has cost others lately: its connections
 * pushed out (evicted, dropped while parked, refused, closed at their
 * deadline) in the last seconds, each second counting half the one after.
 * A client that asks, reads and closes owes nothing; one that reconnects
 * as fast as it is pushed out owes more each time.  Ranks newcomers for a
 * place (least first) and for the parking's drop (most first).
 */
void http_debt_add(struct http_server *srv, const unsigned char *a, uint64_t now_ms);
unsigned http_debt_of(struct http_server *srv, const unsigned char *a, uint64_t now_ms);
/* The key a client address counts under: IPv4 as mapped IPv6, IPv6 by its /64. */
void http_addr_key(const struct sockaddr *sa, unsigned char out[16]);
/* Forget slot c (its connection is closed). */
void http_slot_free(struct http_server *srv, struct conn *c);
/* End connection c early: shutdown(), libmicrohttpd closes it. */
void http_doom(struct http_server *srv, struct conn *c);
/* End every waiting connection past its deadline, as of now (ms). */
void http_sweep(struct http_server *srv, uint64_t now);
/* Whether fd has bytes to read. */
bool http_input_pending(int fd);
/* The socket takes no more bytes: an answer waits for its client to read. */
bool http_blocked_on_reader(int fd);
/*
 * What every accepted socket gets before it is served: SO_SNDBUF capped at
 * HTTP_SNDBUF_BYTES, and TCP_USER_TIMEOUT at write_timeout_s, so that the
 * kernel resets a connection whose client has taken none of what it was
 * sent for that long, also once it is closed and no longer the server's
 * (an orphan would otherwise keep its bytes as long as the client keeps
 * its end open, answering the kernel's window probes).  0, or -errno of
 * the first setsockopt that failed.
 */
int http_tune_socket(int fd, unsigned write_timeout_s);
/*
 * Make the close of fd abortive (SO_LINGER on, 0 s): the kernel sends a
 * reset and frees what it holds for the connection at once, instead of
 * keeping the bytes the client has not taken.  For a client dropped
 * because it does not read; one that reads keeps the orderly close.
 */
void http_reset_on_close(int fd);
/* The connection that gives up its place to a newcomer, or NULL; only: of that address (admission.c). */
struct conn *http_pick_victim(struct http_server *srv, const unsigned char *only, uint64_t now);
/* libmicrohttpd's notify callbacks: a connection started or closed; an answer finished. */
void http_notify_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
			    enum MHD_ConnectionNotificationCode code);
void http_request_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
			    enum MHD_RequestTerminationCode toe);
/* The table's entry of libmicrohttpd's connection mc, or NULL. */
struct conn *http_conn_of(struct MHD_Connection *mc);
/* A complete request arrived on mc: no deadline while it is answered. */
void http_mark_busy(struct http_server *srv, struct MHD_Connection *mc);
/* A request line arrived on mc: its connection keeps its place a while
 * (HTTP_EVICT_MIN_AGE_MS), though libmicrohttpd holds the bytes now. */
void http_mark_begun(struct http_server *srv, struct MHD_Connection *mc);

/* ---- routes.c: requests and answers */

/* libmicrohttpd's request handler, URI log callback and logger. */
enum MHD_Result http_handle_request(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version,
				    const char *upload_data, size_t *upload_data_size,
				    void **con_cls);
void *http_uri_logged(void *cls, const char *uri, struct MHD_Connection *mc);
void http_mhd_logger(void *cls, const char *fmt, va_list ap);

/* ---- acceptor.c: taking connections off the listen queue */

/* The acceptor thread's body; arg is the server. */
void *http_acceptor_main(void *arg);

#endif
