/*
 * The two processes of the daemon and the socket between them; see privsep.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"
#include "privsep.h"
#include "render.h"
#include "sandbox.h"

#define PRIVSEP_MAGIC 0x75637232u          /* "ucr2" */
#define PRIVSEP_MAX_DOC (256u << 20)       /* refuse larger: not ours */
#define PRIVSEP_SEND_TIMEOUT_S 10
#define PRIVSEP_STOP_WAIT_MS 5000

/* From the hardware side to the server. */
enum { MSG_SAMPLE = 1, MSG_DOC = 2 };
struct privsep_msg {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;                      /* the sample's number on this transport */
	double time;                       /* MSG_SAMPLE: for /healthz */
	double interval_s;
	uint32_t doc;                      /* MSG_DOC: the answer to a request */
	uint32_t gzip;
	int32_t status;                    /* 0 (len bytes follow) or -errno */
	uint32_t pad;
	uint64_t len;
};

/* From the server to the hardware side. */
enum { REQ_READY = 1, REQ_DOC = 2 };
struct privsep_req {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;                      /* REQ_DOC: which sample, */
	uint32_t doc;                      /* which document, */
	uint32_t gzip;                     /* in which encoding */
};

#define PRIVSEP_LOG_LINE 1024          /* log.c's longest message */

struct privsep {
	pid_t pid;
	int fd;
	int log_fd;                        /* the server's stdout and stderr; -1 at end */
	atomic_bool dead;
	/*
	 * The sample last published and its number on the transport, to
	 * answer requests.  Under lock, which also keeps each message whole
	 * on the socket.
	 */
	pthread_mutex_t lock;
	struct snapshot *held;
	uint64_t seq;
	size_t log_len;                    /* bytes of an unfinished line in log_buf */
	char log_buf[PRIVSEP_LOG_LINE];
};

/*
 * Send all of out (never raising SIGPIPE), or read len bytes into in: one
 * of the two is NULL.  0, -EPIPE at end-of-file or when nothing moves, or
 * -errno.
 */
static int move_all(int fd, const char *out, char *in, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? send(fd, out + done, len - done, MSG_NOSIGNAL)
				: read(fd, in + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		done += (size_t)n;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	return move_all(fd, buf, NULL, len);
}

/* 0, -EPIPE at end-of-file (before any byte of buf), or -errno. */
static int read_all(int fd, void *buf, size_t len)
{
	return move_all(fd, NULL, buf, len);
}

static void mark_dead(struct privsep *p)
{
	if (!atomic_exchange(&p->dead, true))
		shutdown(p->fd, SHUT_RDWR);   /* wakes the main loop's poll */
}

void privsep_publish(struct snapshot *s, void *arg)
{
	struct privsep *p = arg;
	struct privsep_msg m = { .magic = PRIVSEP_MAGIC, .type = MSG_SAMPLE, .time = s->time,
				 .interval_s = s->interval_s };
	struct snapshot *old;
	int r;

	if (atomic_load(&p->dead))
		return;
	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_lock(&p->lock);
	old = p->held;
	p->held = s;
	m.seq = ++p->seq;
	r = write_all(p->fd, &m, sizeof(m));
	pthread_mutex_unlock(&p->lock);
	if (old)
		snapshot_release(old);
	if (r < 0) {
		log_error("privsep: the server does not take the samples (%s); it is stopped or hung",
			  strerror(-r));
		mark_dead(p);
	}
}

/*
 * Answer the server's request q: the document, formatted (and compressed)
 * here on first use and kept with the sample (render.h), or why not.  The
 * formatting runs outside the lock, so a sample is published meanwhile.
 * A request for a sample already superseded is answered from the newest
 * one at once: at a short interval on a busy host, asking again for each
 * newer sample could be superseded every time.
 */
static int answer(struct privsep *p, const struct privsep_req *q)
{
	struct privsep_msg m = { .magic = PRIVSEP_MAGIC, .type = MSG_DOC, .seq = q->seq,
				 .doc = q->doc, .gzip = q->gzip, .status = -ESTALE };
	struct snapshot *s = NULL;
	const char *body = NULL;
	size_t len = 0;
	int r;

	pthread_mutex_lock(&p->lock);
	if (p->held && q->seq <= p->seq) {
		s = p->held;
		atomic_fetch_add(&s->refs, 1);
	}
	pthread_mutex_unlock(&p->lock);
	if (s && q->doc >= RENDER_N_DOCS)
		m.status = -EINVAL;
	else if (s)
		m.status = render_get(s, (enum render_doc)q->doc, q->gzip != 0, &body, &len);
	if (m.status == 0)
		m.len = len;
	pthread_mutex_lock(&p->lock);
	r = write_all(p->fd, &m, sizeof(m));
	if (r == 0 && m.status == 0)
		r = write_all(p->fd, body, len);
	pthread_mutex_unlock(&p->lock);
	if (s)
		snapshot_release(s);
	return r;
}

/*
 * Read one message of the server and act on it: 1 when it says it has its
 * first sample, 0 when it asked for a document (answered), or a negative
 * errno (-EPIPE: it is gone; -EBADMSG).
 */
static int serve_one(struct privsep *p)
{
	struct privsep_req q;
	int r = read_all(p->fd, &q, sizeof(q));

	if (r < 0)
		return r;
	if (q.magic != PRIVSEP_MAGIC || (q.type != REQ_READY && q.type != REQ_DOC))
		return -EBADMSG;
	if (q.type == REQ_READY)
		return 1;
	r = answer(p, &q);
	return r < 0 ? r : 0;
}

int privsep_fd(const struct privsep *p)
{
	return p->fd;
}

int privsep_log_fd(const struct privsep *p)
{
	return p->log_fd;
}

/*
 * Copy what the server wrote to its standard streams to ours, whole lines
 * (log.c writes each message with one write(2), prefix included), a line
 * longer than the buffer in pieces.  At end-of-file the pipe is closed and
 * privsep_log_fd() becomes -1.
 */
void privsep_relay_log(struct privsep *p)
{
	for (;;) {
		ssize_t n;
		char *nl;

		if (p->log_fd < 0)
			return;
		n = read(p->log_fd, p->log_buf + p->log_len, sizeof(p->log_buf) - p->log_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				if (p->log_len)
					(void)!write(STDERR_FILENO, p->log_buf, p->log_len);
				p->log_len = 0;
				close(p->log_fd);
				p->log_fd = -1;
			}
			return;
		}
		p->log_len += (size_t)n;
		nl = memrchr(p->log_buf, '\n', p->log_len);
		if (nl || p->log_len == sizeof(p->log_buf)) {
			size_t out = nl ? (size_t)(nl - p->log_buf) + 1 : p->log_len;

			(void)!write(STDERR_FILENO, p->log_buf, out);
			memmove(p->log_buf, p->log_buf + out, p->log_len - out);
			p->log_len -= out;
		}
	}
}

pid_t privsep_pid(const struct privsep *p)
{
	return p->pid;
}

bool privsep_alive(const struct privsep *p)
{
	return !atomic_load(&p->dead);
}

bool privsep_check(struct privsep *p)
{
	if (atomic_load(&p->dead))
		return false;
	if (serve_one(p) >= 0)
		return true;
	mark_dead(p);
	return false;
}

int privsep_wait_first(struct privsep *p, int timeout_ms)
{
	struct timespec t0;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = p->fd, .events = POLLIN },
					 { .fd = p->log_fd, .events = POLLIN } };
		struct timespec t;
		long waited;

		clock_gettime(CLOCK_MONOTONIC, &t);
		waited = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (waited >= timeout_ms)
			return -ETIMEDOUT;
		r = poll(pfd, 2, (int)(timeout_ms - waited));
		if (r > 0 && pfd[1].revents)
			privsep_relay_log(p);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (pfd[0].revents) {
			if (atomic_load(&p->dead))
				break;
			r = serve_one(p);
			if (r == 1)
				return 0;
			if (r < 0)
				break;
		}
	}
	mark_dead(p);
	return -EPIPE;
}

static void describe(int status, char *how, size_t howlen)
{
	if (WIFEXITED(status))
		snprintf(how, howlen, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(how, howlen, "killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGSYS ? ": a system call outside its seccomp filter" : "");
	else
		snprintf(how, howlen, "ended with wait status 0x%x", (unsigned)status);
}

bool privsep_stop(struct privsep *p, char *how, size_t howlen)
{
	bool was_alive;
	int status = 0;
	pid_t r = 0;

	if (!p) {
		snprintf(how, howlen, "not started");
		return true;
	}
	was_alive = privsep_alive(p);
	close(p->fd);
	if (p->held)
		snapshot_release(p->held);
	pthread_mutex_destroy(&p->lock);
	for (int waited = 0; waited < PRIVSEP_STOP_WAIT_MS; waited += 10) {
		r = waitpid(p->pid, &status, WNOHANG);
		if (r != 0 || (r < 0 && errno != EINTR))
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	if (r == 0) {
		kill(p->pid, SIGKILL);
		r = waitpid(p->pid, &status, 0);
	}
	if (r < 0) {
		snprintf(how, howlen, "could not be reaped: %s", strerror(errno));
		status = -1;
	} else {
		describe(status, how, howlen);
	}
	/* What it wrote last, its last words included (a seccomp kill). */
	if (p->log_fd >= 0) {
		fcntl(p->log_fd, F_SETFL, O_NONBLOCK);
		privsep_relay_log(p);
		if (p->log_fd >= 0)
			close(p->log_fd);
	}
	free(p);
	return was_alive && status == 0;
}

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
	uint64_t latest;                   /* the newest sample's number */
	struct wanted *wanted;
} server = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	     .write_lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

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
	r = write_all(server.fd, q, sizeof(*q));
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
	uint64_t seq = s->samples;
	int r;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += PRIVSEP_SEND_TIMEOUT_S;
	pthread_mutex_lock(&server.lock);
	for (int tries = 0;; tries++) {
		r = ask(s, seq, doc, gzip, &deadline);
		if (r != -ESTALE || server.latest == seq || tries == 3)
			break;
		seq = server.latest;
	}
	pthread_mutex_unlock(&server.lock);
	return r;
}

/* In the server: a sample as a snapshot HTTP can serve; its documents come on request. */
static int receive_sample(const struct privsep_msg *m)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	atomic_init(&s->refs, 1);
	s->time = m->time;
	s->interval_s = m->interval_s;
	s->samples = m->seq;
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++)
		atomic_init(&s->rendered[i], NULL);
	pthread_mutex_lock(&server.lock);
	server.latest = m->seq;
	pthread_mutex_unlock(&server.lock);
	snapshot_publish(s);
	return 0;
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
		r = read_all(server.fd, b->data, m->len);
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

/* In the server: read the hardware side's messages until the transport ends. */
static int receive_all(void)
{
	struct privsep_req ready = { .magic = PRIVSEP_MAGIC, .type = REQ_READY };
	bool acked = false;
	int r;

	for (;;) {
		struct privsep_msg m;

		r = read_all(server.fd, &m, sizeof(m));
		if (r < 0)
			break;
		if (m.magic != PRIVSEP_MAGIC || (m.type != MSG_SAMPLE && m.type != MSG_DOC)) {
			r = -EBADMSG;
			break;
		}
		if (m.type == MSG_DOC) {
			r = receive_doc(&m);
		} else {
			/* Once the sample is served (a request may come first: it is answered). */
			r = receive_sample(&m);
			if (r == 0 && !acked && send_request(&ready) == 0)
				acked = true;
		}
		if (r < 0)
			break;
	}
	pthread_mutex_lock(&server.lock);
	server.gone = true;
	pthread_cond_broadcast(&server.cond);
	pthread_mutex_unlock(&server.lock);
	return r;
}

/* The server process: see privsep.h.  Never returns. */
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

static void server_main(struct http_options ho, const char *user, int fd, int log_w, pid_t parent)
{
	struct http_server *http;
	char err[512];
	int r;

	if (detach(log_w) < 0) {
		log_error("server: detaching from the terminal: %s", strerror(errno));
		_exit(1);
	}
	close_all_but(ho.listen_fd, fd);
	if (geteuid() == 0 && (!user || user[0] == '\0' || strcmp(user, "root") == 0))
		user = "nobody";
	if (privdrop_to_user(user, err, sizeof(err)) < 0) {
		log_error("server: %s", err);
		_exit(1);
	}
	/* After the uid change, which clears it; and the parent may already be gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	server.fd = fd;
	render_set_fetch(server_fetch);
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
	if (r != -EPIPE) {
		log_error("server: reading the documents: %s", strerror(-r));
		_exit(1);
	}
	/* The hardware side closed the socket: it has stopped. */
	_exit(0);
}

/* The uid user runs as: root for "" and "root"; -1 for a user that does not exist. */
static long uid_of(const char *user)
{
	struct passwd *pw;

	if (!user || user[0] == '\0' || strcmp(user, "root") == 0)
		return 0;
	pw = getpwnam(user);
	return pw ? (long)pw->pw_uid : -1;
}

int privsep_server_user(const char *user, const char *server_user, char *ret, size_t retlen,
			char *err, size_t errlen)
{
	long hw_uid, uid;
	const char *name = server_user;

	if (geteuid() != 0) {
		/* Nothing is dropped: both sides stay the user that started them. */
		snprintf(ret, retlen, "%s", "");
		return 0;
	}
	if (!name || name[0] == '\0' || uid_of(name) < 0)
		name = "nobody";
	uid = uid_of(name);
	if (uid < 0) {
		snprintf(err, errlen, "server_user: neither '%s' nor 'nobody' exists (the package "
			 "creates '%s' with systemd-sysusers)", server_user ? server_user : "",
			 server_user ? server_user : "");
		return -ENOENT;
	}
	if (uid == 0) {
		snprintf(err, errlen, "server_user '%s' is root: the server must not run as root", name);
		return -EINVAL;
	}
	hw_uid = privdrop_will_drop(user) ? uid_of(user) : 0;
	if (uid == hw_uid) {
		snprintf(err, errlen, "server_user '%s' has the uid of user '%s' (%ld): the server "
			 "must run as another user than the hardware side, so that it cannot signal "
			 "it; set server_user to another user", name, user, uid);
		return -EINVAL;
	}
	snprintf(ret, retlen, "%s", name);
	return 0;
}

int privsep_start(const struct http_options *ho, const char *user, struct privsep **ret,
		  char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = PRIVSEP_SEND_TIMEOUT_S };
	struct privsep *p;
	pid_t parent = getpid();
	int sv[2], logp[2];

	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "privsep: out of memory");
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = errno;

		snprintf(err, errlen, "privsep: socketpair: %s", strerror(e));
		free(p);
		return -e;
	}
	if (pipe2(logp, O_CLOEXEC) < 0) {
		int e = errno;

		snprintf(err, errlen, "privsep: pipe: %s", strerror(e));
		close(sv[0]);
		close(sv[1]);
		free(p);
		return -e;
	}
	/* A server that stops reading is taken for dead rather than stalling the sampler. */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(sv[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		int e = errno;

		snprintf(err, errlen, "privsep: fork the server: %s", strerror(e));
		close(sv[0]);
		close(sv[1]);
		close(logp[0]);
		close(logp[1]);
		free(p);
		return -e;
	}
	if (p->pid == 0) {
		close(sv[0]);
		close(logp[0]);
		server_main(*ho, user, sv[1], logp[1], parent);
	}
	close(sv[1]);
	close(logp[1]);
	fcntl(logp[0], F_SETFL, O_NONBLOCK);
	p->fd = sv[0];
	p->log_fd = logp[0];
	atomic_init(&p->dead, false);
	pthread_mutex_init(&p->lock, NULL);
	*ret = p;
	return 0;
}
