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
 * Take one accepted socket into the table and hand it to libmicrohttpd.
 * When all places are taken, a waiting connection gives its place up
 * (http_pick_victim) to a newcomer that has sent its request, or that has
 * been kept (may_wait false) long enough; none being waiting, the
 * newcomer waits.  An address at max_connections_per_ip is held to it the
 * same way, among its own connections only: a browser that opens a new
 * connection while its others wait for their next request (several tabs,
 * several users behind one NAT) has one of those closed for it, as
 * browsers expect of a server; it is refused (closed) when none of its
 * own is waiting, or when it has not asked within HTTP_INPUT_GRACE_MS.  *asked: whether its request was seen in its socket
 * already; looked at (and set) only when a place must be given up.
 */
static enum admit_result admit(struct http_server *srv, int fd, const struct sockaddr *sa,
			       socklen_t sa_len, bool may_wait, bool *asked)
{
	unsigned char key[16];
	struct conn *c, *victim;
	unsigned idx;
	bool room, own, full;

	http_addr_key(sa, key);
	pthread_mutex_lock(&srv->lock);
	/* accept() handed out this number, so a slot still holding it is one
	 * libmicrohttpd closed without announcing it. */
	if ((size_t)fd < srv->n_fd_index && srv->slot_of_fd[fd])
		http_slot_free(srv, &srv->conns[srv->slot_of_fd[fd] - 1]);
	if ((size_t)fd >= srv->n_fd_index)
		goto refuse;
	own = srv->opt.max_connections_per_ip &&
	      http_addr_count(srv, key) >= srv->opt.max_connections_per_ip;
	/* Found under the lock held to the end: it stays the one to give way. */
	victim = own ? http_pick_victim(srv, key, mono_ms()) : NULL;
	if (own && !victim)
		goto refuse;
	full = own || srv->n_live >= srv->max_live;
	if (full && may_wait && !*asked)
		*asked = http_input_pending(fd);
	if (full && may_wait && !*asked) {
		pthread_mutex_unlock(&srv->lock);
		return ADMIT_NO_INPUT;
	}
	/* One that sends nothing gains nothing by closing its own sibling. */
	if (own && !*asked && !(*asked = http_input_pending(fd)))
		goto refuse;
	if (srv->n_used >= srv->n_slots)
		goto later;
	if (full) {
		if (!victim)
			victim = http_pick_victim(srv, NULL, mono_ms());
		if (!victim)
			goto later;
		http_doom(srv, victim);
		http_debt_add(srv, victim->addr, mono_ms());
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
	http_debt_add(srv, key, mono_ms());
	srv->n_refused++;
	room = srv->n_used < srv->n_slots;
	pthread_mutex_unlock(&srv->lock);
	close(fd);
	return room ? ADMITTED : ADMITTED_FULL;
later:
	pthread_mutex_unlock(&srv->lock);
	return ADMIT_LATER;
}

/*
 * An accepted connection the acceptor keeps until it can have a place.
 * Nothing reads a parked socket, so once its request is seen there (asked)
 * it stays there: each entry's socket is looked at until then, no longer.
 */
struct parked {
	int fd;
	socklen_t sa_len;
	bool asked;                    /* its request is in its socket */
	unsigned same;                 /* parked entries with this key, itself included */
	uint64_t since_ms;
	unsigned char key[16];         /* http_addr_key() */
	struct sockaddr_storage sa;
};

struct acceptor {
	struct parked parked[HTTP_PARKED_MAX];
	unsigned n_parked;
	bool blocked;           /* admit() said ADMIT_LATER: no place can be had for now */
};

/* Add or subtract d to the same-key count of every parked entry keyed like p. */
static unsigned count_same(struct acceptor *a, const struct parked *p, int d)
{
	unsigned n = 0;

	for (unsigned i = 0; i < a->n_parked; i++) {
		if (memcmp(a->parked[i].key, p->key, 16) == 0) {
			a->parked[i].same += (unsigned)d;
			n++;
		}
	}
	return n;
}

/* parked[n_parked], filled in, joins the list. */
static void park(struct acceptor *a)
{
	struct parked *p = &a->parked[a->n_parked];

	p->same = count_same(a, p, 1) + 1;
	a->n_parked++;
}

static void unpark(struct acceptor *a, unsigned i)
{
	struct parked gone = a->parked[i];

	a->n_parked--;
	memmove(&a->parked[i], &a->parked[i + 1], (a->n_parked - i) * sizeof(a->parked[0]));
	count_same(a, &gone, -1);
}

/* Offer parked[i] a place again; true when it is gone from the list. */
static bool retry_parked(struct http_server *srv, struct acceptor *a, unsigned i, uint64_t now)
{
	struct parked *p = &a->parked[i];
	enum admit_result r = admit(srv, p->fd, (struct sockaddr *)&p->sa, p->sa_len,
				    now - p->since_ms < HTTP_INPUT_GRACE_MS, &p->asked);

	if (r == ADMIT_LATER)
		a->blocked = true;
	if (r == ADMIT_LATER || r == ADMIT_NO_INPUT)
		return false;
	unpark(a, i);
	return true;
}

/*
 * Look, with one poll(), at the sockets of the parked entries that have
 * not asked: the ones with bytes to read have asked; the ones whose client
 * hung up having sent nothing are closed (gone, they cost a place for no
 * one).  One system call for the whole parking, where asking each socket
 * for its byte count took one per entry, every round.
 */
static void look_at_parked(struct acceptor *a)
{
	struct pollfd pfd[HTTP_PARKED_MAX];
	unsigned idx[HTTP_PARKED_MAX], n = 0;

	for (unsigned i = 0; i < a->n_parked; i++) {
		if (a->parked[i].asked)
			continue;
		pfd[n] = (struct pollfd){ .fd = a->parked[i].fd, .events = POLLIN | POLLRDHUP };
		idx[n++] = i;
	}
	if (!n || poll(pfd, n, 0) <= 0)
		return;
	/* Backwards: unpark() moves only the entries after the one it takes. */
	for (unsigned k = n; k-- > 0;) {
		struct parked *p = &a->parked[idx[k]];
		short ev = pfd[k].revents;

		if (!(ev & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)))
			continue;
		/* The end of the stream reads too: only bytes make a request. */
		p->asked = !(ev & (POLLRDHUP | POLLHUP | POLLERR)) || http_input_pending(p->fd);
		if (!p->asked) {
			close(p->fd);
			unpark(a, idx[k]);
		}
	}
}

/*
 * Offer the parked connections a place, the cheapest first: the ones that
 * have sent their request, then the ones from the addresses that hold the
 * fewest connections and have had the fewest pushed out lately
 * (http_debt_of), and of those the longest-parked.  A scraper that
 * connects while attackers hold every place and fill the parking goes in
 * ahead of them, however many addresses they come from.
 */
static void retry_all_parked(struct http_server *srv, struct acceptor *a, uint64_t now)
{
	unsigned order[HTTP_PARKED_MAX], held[HTTP_PARKED_MAX], n;
	int fds[HTTP_PARKED_MAX];

	look_at_parked(a);
	n = a->n_parked;
	pthread_mutex_lock(&srv->lock);
	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;

		/* Asked: ahead of every one that has not. */
		held[i] = http_addr_count(srv, a->parked[i].key) +
			  http_debt_of(srv, a->parked[i].key, now) +
			  (a->parked[i].asked ? 0 : 1u << 30);
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
 * The parking is full: close the entry that costs the others most.  First
 * one that has sent nothing for HTTP_INPUT_GRACE_MS; then, whether it has
 * asked or not (a newcomer's request may be on its way), the one from the
 * address with the most connections (held and parked) and the most pushed
 * out lately (http_debt_of), the longest-parked of those: neither one
 * address's flood nor a flood from many addresses that reconnect as fast
 * as they are closed pushes out a newcomer from another.  The one chosen
 * is looked at before it goes (its request may have come since the last
 * look_at_parked()), and one that has asked is chosen again.
 */
static void drop_parked(struct http_server *srv, struct acceptor *a, uint64_t now)
{
	struct parked *p;

	pthread_mutex_lock(&srv->lock);
	for (;;) {
		uint64_t best_key = 0;

		p = NULL;
		for (unsigned i = 0; i < a->n_parked; i++) {
			struct parked *q = &a->parked[i];
			bool idle = !q->asked && now - q->since_ms >= HTTP_INPUT_GRACE_MS;
			/* Higher goes first: idle past the grace, then what it costs. */
			uint64_t key = ((uint64_t)idle << 40) |
				       (http_addr_count(srv, q->key) + q->same +
					http_debt_of(srv, q->key, now));

			if (key > best_key) {
				p = q;
				best_key = key;
			}
		}
		if (!(best_key >> 40) || p->asked || !(p->asked = http_input_pending(p->fd)))
			break;
	}
	http_debt_add(srv, p->key, now);
	pthread_mutex_unlock(&srv->lock);
	close(p->fd);
	unpark(a, (unsigned)(p - a->parked));
}

/* http_tune_socket() on a newly accepted socket; a failure is logged once. */
static void tune(struct http_server *srv, int fd)
{
	static atomic_bool said;
	int r = http_tune_socket(fd, srv->write_timeout_s);

	if (r < 0 && !atomic_exchange(&said, true))
		log_warning("http: capping an accepted socket's send buffer and write deadline "
			    "(SO_SNDBUF, TCP_USER_TIMEOUT): %s; a client that does not read may "
			    "hold more of the host's TCP memory (said once)", strerror(-r));
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
		tune(srv, fd);
		p->fd = fd;
		p->asked = false;
		p->since_ms = mono_ms();
		http_addr_key((struct sockaddr *)&p->sa, p->key);
		r = a->blocked ? ADMIT_LATER
			       : admit(srv, fd, (struct sockaddr *)&p->sa, p->sa_len, true, &p->asked);
		if (r == ADMIT_NO_INPUT || r == ADMIT_LATER)
			park(a);
		if (r == ADMIT_LATER)
			a->blocked = true;
		if (r == ADMITTED_FULL)
			return;
	}
}

/* At most once a minute, what the limits did to clients (lock held). */
static void report(struct http_server *srv)
{
	if (srv->n_deadline || srv->n_evicted || srv->n_refused || srv->n_pipelined || srv->n_reset)
		log_info("http: in the last %d s, %u connections closed at their request deadline, "
			 "%u gave their place to a client that asked, %u refused over "
			 "max_connections_per_ip, %u closed after %u pipelined answers not read, "
			 "%u reset for not reading",
			 HTTP_LOG_EVERY_S, srv->n_deadline, srv->n_evicted, srv->n_refused,
			 srv->n_pipelined, HTTP_PIPELINE_MAX, srv->n_reset);
	srv->n_deadline = srv->n_evicted = srv->n_refused = srv->n_pipelined = srv->n_reset = 0;
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
		    !srv->n_deadline && !srv->n_evicted && !srv->n_refused && !srv->n_pipelined &&
		    !srv->n_reset)
			timeout = -1;
		/* Every slot taken (half of them closing): wait for a CLOSED.
		 * No place to be had (blocked) is no reason to stop accepting:
		 * accept_batch() parks newcomers and drops the costliest. */
		srv->full = srv->n_used >= srv->n_slots;
		if (srv->full)
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
