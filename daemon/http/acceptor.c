/*
 * The acceptor thread: takes connections off the listen queue at once,
 * admits them into the table and hands them to libmicrohttpd, parks
 * newcomers while all places are taken (http_internal.h).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>


#include "http_internal.h"
#include "log.h"

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
 * places are taken, a waiting connection gives its place up (http_pick_victim)
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

	http_addr_key(sa, key);
	pthread_mutex_lock(&srv->lock);
	/* accept() handed out this number, so a slot still holding it is one
	 * libmicrohttpd closed without announcing it. */
	if ((size_t)fd < srv->n_fd_index && srv->slot_of_fd[fd])
		http_slot_free(srv, &srv->conns[srv->slot_of_fd[fd] - 1]);
	if ((size_t)fd >= srv->n_fd_index ||
	    (srv->opt.max_connections_per_ip &&
	     http_addr_count(srv, key) >= srv->opt.max_connections_per_ip))
		goto refuse;
	if (srv->n_live >= srv->max_live && may_wait && !http_input_pending(fd)) {
		pthread_mutex_unlock(&srv->lock);
		return ADMIT_NO_INPUT;
	}
	if (srv->n_used >= srv->n_slots)
		goto later;
	if (srv->n_live >= srv->max_live) {
		struct conn *victim = http_pick_victim(srv, mono_ms());

		if (!victim)
			goto later;
		http_doom(srv, victim);
		srv->n_evicted++;
	}
	idx = srv->free_slots[srv->n_slots - srv->n_used - 1];
	c = &srv->conns[idx];
	*c = (struct conn){ .fd = fd, .since_ms = mono_ms() };
	memcpy(c->addr, key, 16);
	http_addr_inc(srv, key);
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
			http_slot_free(srv, c);
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
	unsigned char key[16];         /* http_addr_key() */
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
		held[i] = http_addr_count(srv, a->parked[i].key) +
			  (http_input_pending(a->parked[i].fd) ? 0 : 1u << 30);
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
		uint64_t n = http_addr_count(srv, p->key), key;

		for (unsigned j = 0; j < a->n_parked; j++)
			n += memcmp(a->parked[j].key, p->key, 16) == 0;
		/* Higher goes first: no request, then idle past the grace, then count. */
		key = ((uint64_t)!http_input_pending(p->fd) << 40) |
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
		http_addr_key((struct sockaddr *)&p->sa, p->key);
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
void *http_acceptor_main(void *arg)
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
			http_sweep(srv, now);
		if (now >= next_report_ms) {
			report(srv);
			next_report_ms = now + HTTP_LOG_EVERY_S * 1000u;
		}
		if (srv->next_deadline_ms && srv->next_deadline_ms - now < (uint64_t)timeout)
			timeout = (int)(srv->next_deadline_ms - now);
		/* No connection, deadline or count to report: sleep until a client or a wake-up. */
		if (!srv->n_used && !srv->next_deadline_ms && !a.n_parked && !a.blocked &&
		    !srv->n_deadline && !srv->n_evicted && !srv->n_refused && !srv->n_pipelined)
			timeout = -1;
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
