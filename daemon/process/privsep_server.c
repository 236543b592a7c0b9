/*
 * The server process of the privilege separation (privsep.h): it serves
 * HTTP, publishes the sample page's newest sample when a request needs
 * it, asks the hardware side for the documents clients want, and reads
 * its answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "privdrop.h"
#include "privsep_wire.h"
#include "render.h"
#include "sample_page.h"
#include "sandbox.h"
#include "snapshot.h"

#define PRIVSEP_SERVER_MMAP_BYTES (64 * 1024)

/* In the server: close every fd but stdin, stdout, stderr and keep[0..1]. */
static void close_all_but(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0u, 0);
}

/*
 * In the server: the documents HTTP threads asked for and wait for, one
 * entry per document of a sample (a second asker waits for the first's
 * answer), and the end of the transport.  The reading thread fills them.
 */
struct wanted {
	struct wanted *next;
	struct snapshot *s;                /* where the answer goes */
	uint64_t seq;                      /* the sample asked for: s's, or a newer one's */
	uint32_t doc, gzip;
	bool done;
	int status;
};

static struct {
	pthread_mutex_t lock;              /* wanted, gone */
	pthread_cond_t cond;
	pthread_mutex_t write_lock;        /* keeps each request whole on the socket */
	int fd;
	bool gone;
	struct wanted *wanted;
	const struct sample_page *page;    /* the hardware side's newest sample, read-only */
	/*
	 * Serializes server_refresh(): the number of the sample it published
	 * last, and its reference to that snapshot.
	 */
	pthread_mutex_t refresh_lock;
	uint64_t published;
	struct snapshot *current;
} server = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	     .write_lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1,
	     .refresh_lock = PTHREAD_MUTEX_INITIALIZER };

static struct wanted *find_wanted(uint64_t seq, uint32_t doc, uint32_t gzip)
{
	for (struct wanted *w = server.wanted; w; w = w->next)
		if (w->seq == seq && w->doc == doc && w->gzip == gzip)
			return w;
	return NULL;
}

static int send_request(const struct privsep_req *q)
{
	int r;

	pthread_mutex_lock(&server.write_lock);
	r = privsep_write_all(server.fd, q, sizeof(*q));
	pthread_mutex_unlock(&server.write_lock);
	return r;
}

/* Wait on the server's condition until deadline; 0 or -ETIMEDOUT. */
static int wait_until(const struct timespec *deadline)
{
	int e = pthread_cond_timedwait(&server.cond, &server.lock, deadline);

	return e == ETIMEDOUT ? -ETIMEDOUT : 0;
}

/*
 * In the server: ask the hardware side for document doc of sample seq, to
 * be kept in s, and wait for the answer until deadline; 0 or -errno.
 */
static int ask(struct snapshot *s, uint64_t seq, enum render_doc doc, bool gzip,
	       const struct timespec *deadline)
{
	struct wanted me = { .s = s, .seq = seq, .doc = (uint32_t)doc, .gzip = gzip };
	struct privsep_req q = { .magic = PRIVSEP_MAGIC, .type = REQ_DOC, .seq = seq,
				 .doc = (uint32_t)doc, .gzip = gzip };
	int r = 0;

	/* One request per document: a second asker waits for the first's answer. */
	while (r == 0 && !render_has(s, doc, gzip) && !server.gone && find_wanted(seq, me.doc, me.gzip))
		r = wait_until(deadline);
	if (r < 0 || render_has(s, doc, gzip))
		return r;
	if (server.gone)
		return -EPIPE;
	me.next = server.wanted;
	server.wanted = &me;
	pthread_mutex_unlock(&server.lock);
	r = send_request(&q);
	pthread_mutex_lock(&server.lock);
	while (r == 0 && !me.done && !server.gone)
		r = wait_until(deadline);
	if (r == 0)
		r = me.done ? me.status : -EPIPE;
	for (struct wanted **w = &server.wanted; *w; w = &(*w)->next)
		if (*w == &me) {
			*w = me.next;
			break;
		}
	pthread_cond_broadcast(&server.cond);   /* those that waited for this answer */
	return r;
}

/*
 * In the server, render_fetch_fn (render.h): ask the hardware side for a
 * document of s.  It keeps only the newest sample: when s was superseded
 * meanwhile, the newest sample's document is asked for and kept in s
 * instead (a fresher answer to a request that came in before it).
 */
static int server_fetch(struct snapshot *s, enum render_doc doc, bool gzip)
{
	struct timespec deadline;
	struct sample_header h;
	uint64_t seq = s->samples;
	int r;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += PRIVSEP_SEND_TIMEOUT_S;
	pthread_mutex_lock(&server.lock);
	for (int tries = 0;; tries++) {
		r = ask(s, seq, doc, gzip, &deadline);
		if (r != -ESTALE || !sample_page_read(server.page, &h) || h.samples == seq ||
		    tries == 3)
			break;
		seq = h.samples;
	}
	pthread_mutex_unlock(&server.lock);
	return r;
}

/* In the server: sample h as a snapshot HTTP can serve; its documents come on request. */
static struct snapshot *header_snapshot(const struct sample_header *h)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	s->time = h->time;
	s->interval_s = h->interval_s;
	s->samples = h->samples;
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++)
		atomic_init(&s->rendered[i], NULL);
	return s;
}

/*
 * In the server, the snapshot refresh hook (snapshot.h), run as an HTTP
 * thread acquires the snapshot: when the page holds a newer sample than
 * the one published, publish it.  One thread at a time, so that none
 * publishes an older sample over a newer one.  The snapshot it replaces
 * (with the documents a client had asked for) is let go after the lock,
 * so that freeing it holds no other thread up.  Nothing happens between
 * samples unless a client asks: the server is not woken for them.
 */
static void server_refresh(void)
{
	struct snapshot *s, *old = NULL;
	struct sample_header h;

	if (!sample_page_read(server.page, &h))
		return;                    /* the hardware side is writing for long: the one we have */
	pthread_mutex_lock(&server.refresh_lock);
	if (h.samples > server.published && (s = header_snapshot(&h))) {
		old = server.current;
		server.current = s;
		server.published = h.samples;
		atomic_fetch_add(&s->refs, 1);   /* server.current's */
		snapshot_publish(s);
	}
	pthread_mutex_unlock(&server.refresh_lock);
	snapshot_release(old);
}

/* In the server: an answer, given to the thread that waits for it (none: dropped). */
static int receive_doc(const struct privsep_msg *m)
{
	struct snapshot_bytes *b = NULL;
	struct wanted *w;
	int r;

	if (m->doc >= RENDER_N_DOCS || m->status > 0 || (m->status == 0 && m->len > PRIVSEP_MAX_DOC))
		return -EBADMSG;
	if (m->status == 0) {
		b = render_bytes_new(m->len);
		if (!b)
			return -ENOMEM;
		r = privsep_read_all(server.fd, b->data, m->len);
		if (r < 0) {
			free(b);
			return r;
		}
	}
	pthread_mutex_lock(&server.lock);
	w = find_wanted(m->seq, m->doc, m->gzip);
	if (w) {
		if (b)
			render_store(w->s, (enum render_doc)m->doc, m->gzip != 0, b);
		b = NULL;
		w->status = m->status;
		w->done = true;
		pthread_cond_broadcast(&server.cond);
	}
	pthread_mutex_unlock(&server.lock);
	free(b);
	return 0;
}

/*
 * In the server: say it serves (the page holds the first sample by now,
 * or a client is told "no sample yet"), then read the hardware side's
 * answers, and answer its pings, until the transport ends.
 */
static int receive_all(void)
{
	struct privsep_req ready = { .magic = PRIVSEP_MAGIC, .type = REQ_READY };
	int r = send_request(&ready);

	while (r == 0) {
		struct privsep_msg m;

		r = privsep_read_all(server.fd, &m, sizeof(m));
		if (r == 0 && (m.magic != PRIVSEP_MAGIC || (m.type != MSG_DOC && m.type != MSG_PING)))
			r = -EBADMSG;
		if (r == 0 && m.type == MSG_PING)
			r = send_request(&(struct privsep_req){ .magic = PRIVSEP_MAGIC,
								.type = REQ_PONG, .seq = m.seq });
		else if (r == 0)
			r = receive_doc(&m);
	}
	pthread_mutex_lock(&server.lock);
	server.gone = true;
	pthread_cond_broadcast(&server.cond);
	pthread_mutex_unlock(&server.lock);
	return r;
}

/*
 * In the server: a session of its own, without a controlling terminal
 * (nothing it does reaches a terminal the daemon was started from, such as
 * TIOCSTI into a root shell), standard input from /dev/null, standard
 * output and error into the pipe the hardware side copies to its log
 * (non-blocking: a message is dropped rather than the server held up).
 */
static int detach(int log_w)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(log_w, STDOUT_FILENO) < 0 ||
	    dup2(log_w, STDERR_FILENO) < 0)
		return -1;
	if (null > STDERR_FILENO)
		close(null);
	if (log_w > STDERR_FILENO)
		close(log_w);
	if (fcntl(STDERR_FILENO, F_SETFL, O_NONBLOCK) < 0)
		return -1;
	return setsid() < 0 ? -1 : 0;
}

/* The server process: see privsep.h and privsep_wire.h.  Never returns. */
void privsep_server_main(struct http_options ho, const char *user, int fd,
			 struct sample_page_source page, int log_w, pid_t parent)
{
	struct http_server *http;
	char err[512];
	int r;

	if (detach(log_w) < 0) {
		log_error("server: detaching from the terminal: %s", strerror(errno));
		_exit(1);
	}
	/*
	 * Mapped once, here, before the user changes (a System V segment is
	 * the starting user's alone) and the sandbox is installed: no
	 * system call touches the page after it, and its memfd is closed.
	 */
	if (sample_page_map(&page, &server.page, err, sizeof(err)) < 0) {
		log_error("server: %s", err);
		_exit(1);
	}
	close_all_but(ho.listen_fd, fd);   /* the page's memfd too */
	if (privdrop_to_user(user, err, sizeof(err)) < 0) {
		log_error("server: %s", err);
		_exit(1);
	}
	/* After the uid change, which clears it; and the parent may already be gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	/*
	 * The server's large blocks are the documents it keeps for a sample
	 * (the /metrics text, the JSON snapshot: 100 KiB and more on a big
	 * host).  As mappings of their own they go back to the system when
	 * the sample is freed, where heap pages would stay resident; and
	 * nothing has to walk the heap to give them back (malloc_trim) under
	 * the lock every HTTP thread's malloc takes.  A fixed threshold:
	 * glibc would otherwise raise it to the largest block freed.
	 */
	mallopt(M_MMAP_THRESHOLD, PRIVSEP_SERVER_MMAP_BYTES);
	server.fd = fd;
	render_set_fetch(server_fetch);
	snapshot_set_refresh_hook(server_refresh);
	http = http_start(&ho, err, sizeof(err));
	if (!http) {
		log_error("http: %s", err);
		_exit(1);
	}
	if (sandbox_install(err, sizeof(err)) < 0) {
		log_error("server: %s", err);
		_exit(1);
	}
	r = receive_all();
	/*
	 * The hardware side closed the socket: it has stopped.  A reset says
	 * the same: it closed with our READY unread (its start-up failed).
	 */
	if (r == -EPIPE || r == -ECONNRESET)
		_exit(0);
	log_error("server: reading the documents: %s", strerror(-r));
	_exit(1);
}
