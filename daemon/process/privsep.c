/*
 * The two processes of the daemon and the socket between them, as the
 * hardware side sees them; see privsep.h.  The server's side is
 * privsep_server.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "privdrop.h"
#include "privsep.h"
#include "privsep_wire.h"
#include "render.h"
#include "sample_page.h"

#define PRIVSEP_LOG_LINE 1024          /* log.c's longest message */

struct privsep {
	pid_t pid;                         /* the server */
	pid_t keeper;                      /* its parent, ours (privsep_keeper.c) */
	int fd;
	int log_fd;                        /* the server's stdout and stderr; -1 at end */
	atomic_bool dead;
	bool hung;                         /* a ping went unanswered past its deadline */
	/*
	 * The signals that stop this process: a write to the server gives up
	 * when one is pending, and the transport is abandoned (nothing more
	 * is written: a message may be cut), so that the stop never waits on
	 * a server that does not read.
	 */
	sigset_t stop;
	bool abandoned;
	/*
	 * The liveness check, in the main loop's thread: when the last ping
	 * was sent, and its number while it waits for its pong (0: none).
	 */
	struct timespec ping_at;
	uint64_t ping_seq, pings;
	/*
	 * The sample last published and its number on the transport, to
	 * answer requests, and the page that tells the server of it (written
	 * only here).  Under lock, which also keeps each message whole on the
	 * socket.
	 */
	pthread_mutex_t lock;
	struct snapshot *held;
	uint64_t seq;
	struct sample_page *page;
	size_t log_len;                    /* bytes of an unfinished line in log_buf */
	char log_buf[PRIVSEP_LOG_LINE];
};

int privsep_move_all(int fd, const char *out, char *in, size_t len)
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

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Whether a signal of p->stop is pending. */
static bool stop_pending(const struct privsep *p)
{
	sigset_t pending;

	if (sigpending(&pending) < 0)
		return false;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&p->stop, sig) == 1 && sigismember(&pending, sig) == 1)
			return true;
	return false;
}

/*
 * Send len bytes of buf whole to the server within PRIVSEP_SEND_TIMEOUT_S:
 * 0, -EPIPE, -ETIMEDOUT (a server that does not read), -ECANCELED (a stop
 * signal is pending: the transport is abandoned), or -errno.
 */
static int send_to_server(struct privsep *p, const void *buf, size_t len)
{
	const char *at = buf;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (len) {
		ssize_t n = send(p->fd, at, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			at += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return n == 0 ? -EPIPE : -errno;
		if (stop_pending(p)) {
			p->abandoned = true;
			return -ECANCELED;
		}
		if (ms_since(&t0) >= PRIVSEP_SEND_TIMEOUT_S * 1000)
			return -ETIMEDOUT;
		/* A tenth of a second at most, to look at the signals again. */
		poll(&(struct pollfd){ .fd = p->fd, .events = POLLOUT }, 1, 100);
	}
	return 0;
}

static void mark_dead(struct privsep *p)
{
	if (!atomic_exchange(&p->dead, true))
		shutdown(p->fd, SHUT_RDWR);   /* wakes the main loop's poll */
}

void privsep_publish(struct snapshot *s, void *arg)
{
	struct privsep *p = arg;
	struct sample_header h = { .time = s->time, .interval_s = s->interval_s };
	struct snapshot *old;

	if (atomic_load(&p->dead))
		return;
	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_lock(&p->lock);
	old = p->held;
	p->held = s;
	h.samples = ++p->seq;
	/* After held: a request for this sample, which the server can make from now on, finds it. */
	sample_page_write(p->page, &h);
	pthread_mutex_unlock(&p->lock);
	if (old)
		snapshot_release(old);
}

/*
 * Answer the server's request q: the document, formatted (and compressed),
 * or why not.  The server keeps what it is sent and asks once per sample
 * and document, so nothing is kept here: a copy would double the largest
 * buffers of the daemon (the /metrics text, the JSON snapshot), and their
 * pages, with the compressor's, are given back as soon as the answer is
 * sent.  The formatting runs outside the lock, so a sample is published
 * meanwhile.
 * A request for a sample already superseded is answered from the newest
 * one at once: at a short interval on a busy host, asking again for each
 * newer sample could be superseded every time.
 */
static int answer(struct privsep *p, const struct privsep_req *q)
{
	struct privsep_msg m = { .magic = PRIVSEP_MAGIC, .type = MSG_DOC, .seq = q->seq,
				 .doc = q->doc, .gzip = q->gzip, .status = -ESTALE };
	struct snapshot *s = NULL;
	struct snapshot_bytes *body = NULL;
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
		m.status = render_take(s, (enum render_doc)q->doc, q->gzip != 0, &body);
	if (m.status == 0)
		m.len = body->len;
	pthread_mutex_lock(&p->lock);
	r = send_to_server(p, &m, sizeof(m));
	if (r == 0 && m.status == 0)
		r = send_to_server(p, body->data, body->len);
	pthread_mutex_unlock(&p->lock);
	if (s)
		snapshot_release(s);
	if (body) {
		free(body);
		malloc_trim(0);
	}
	return r;
}

/*
 * Read one message of the server and act on it: 1 when it says it has its
 * first sample, 0 when it asked for a document (answered) or answered the
 * ping that waits, or a negative errno (-EPIPE: it is gone; -EBADMSG: a
 * message out of turn, a pong among them that answers no ping).
 */
static int serve_one(struct privsep *p)
{
	struct privsep_req q;
	int r = privsep_read_all(p->fd, &q, sizeof(q));

	if (r < 0)
		return r;
	if (q.magic != PRIVSEP_MAGIC)
		return -EBADMSG;
	switch (q.type) {
	case REQ_READY:
		return 1;
	case REQ_DOC:
		r = answer(p, &q);
		return r < 0 ? r : 0;
	case REQ_PONG:
		if (p->ping_seq == 0 || q.seq != p->ping_seq)
			return -EBADMSG;
		p->ping_seq = 0;
		return 0;
	default:
		return -EBADMSG;
	}
}

bool privsep_tick(struct privsep *p)
{
	struct privsep_msg m = { .magic = PRIVSEP_MAGIC, .type = MSG_PING };
	int r;

	if (atomic_load(&p->dead))
		return false;
	if (p->abandoned)
		return true;               /* a stop comes: nothing more is asked of the server */
	if (p->ping_seq) {
		if (ms_since(&p->ping_at) < PRIVSEP_PONG_DEADLINE_MS)
			return true;
		p->hung = true;
		mark_dead(p);
		return false;
	}
	if (p->pings && ms_since(&p->ping_at) < PRIVSEP_PING_EVERY_MS)
		return true;
	m.seq = ++p->pings;
	pthread_mutex_lock(&p->lock);
	r = send_to_server(p, &m, sizeof(m));
	pthread_mutex_unlock(&p->lock);
	if (r == -ECANCELED)
		return true;
	if (r < 0) {
		mark_dead(p);
		return false;
	}
	p->ping_seq = m.seq;
	clock_gettime(CLOCK_MONOTONIC, &p->ping_at);
	return true;
}

int privsep_tick_due_ms(const struct privsep *p)
{
	long left;

	if (!p->pings)
		return 0;
	left = (p->ping_seq ? PRIVSEP_PONG_DEADLINE_MS : PRIVSEP_PING_EVERY_MS) - ms_since(&p->ping_at);
	return left < 0 ? 0 : (int)left;
}

void privsep_stop_on(struct privsep *p, const sigset_t *stop)
{
	p->stop = *stop;
}

bool privsep_hung(const struct privsep *p)
{
	return p->hung;
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
	if (p->abandoned || serve_one(p) >= 0 || p->abandoned)
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
		long waited = ms_since(&t0);

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

/* Reap the keeper within ms: its pid, 0 when it still runs, or -1 (errno). */
static pid_t reap_within(pid_t keeper, int *status, int ms)
{
	for (int waited = 0;; waited += 10) {
		pid_t r = waitpid(keeper, status, WNOHANG);

		if (r != 0 && !(r < 0 && errno == EINTR))
			return r;
		if (waited >= ms)
			return 0;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
}

bool privsep_stop(struct privsep *p, char *how, size_t howlen)
{
	bool was_alive, killed = false;
	int status = 0;
	pid_t r = 0;

	if (!p) {
		snprintf(how, howlen, "not started");
		return true;
	}
	was_alive = privsep_alive(p);
	close(p->fd);                      /* a server that runs reads end-of-file, and exits */
	if (p->held)
		snapshot_release(p->held);
	sample_page_unmap(p->page);
	pthread_mutex_destroy(&p->lock);
	/* The keeper ends as the server ended; a hung server is not waited for. */
	if (!p->hung)
		r = reap_within(p->keeper, &status, PRIVSEP_STOP_WAIT_MS);
	if (r == 0) {
		/* The kernel kills the server with its keeper, stopped or not. */
		killed = kill(p->keeper, SIGKILL) == 0;
		r = reap_within(p->keeper, &status, PRIVSEP_STOP_WAIT_MS);
	}
	if (r <= 0) {
		snprintf(how, howlen, "could not be reaped: %s", r < 0 ? strerror(errno) :
			 "its keeper still runs after SIGKILL");
		status = -1;
	} else if (killed) {
		snprintf(how, howlen, "%s: ended, killed with its keeper (process %d)",
			 p->hung ? "did not answer the liveness check" :
			 "did not end within 1 s of the transport's close", (int)p->keeper);
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

/* The server's pid, which the keeper writes once it forked it; -1 when it failed. */
static pid_t read_server_pid(int fd)
{
	pid_t pid;
	ssize_t n;

	do
		n = read(fd, &pid, sizeof(pid));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(pid) && pid > 0 ? pid : -1;
}

int privsep_start(const struct http_options *ho, const char *user, const char *hw_user,
		  struct privsep **ret, char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = PRIVSEP_SEND_TIMEOUT_S };
	struct privsep *p;
	pid_t parent = getpid();
	int sv[2] = { -1, -1 }, logp[2] = { -1, -1 }, pidp[2] = { -1, -1 }, e;
	struct sample_page_source page;

	/* The server never runs as root; the keeper's effective ids are the server's. */
	if (geteuid() == 0 && (!user || user[0] == '\0' || strcmp(user, "root") == 0))
		user = "nobody";
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "privsep: out of memory");
		return -ENOMEM;
	}
	e = sample_page_create(&page, &p->page, err, errlen);
	if (e < 0) {
		free(p);
		return e;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		e = errno;
		snprintf(err, errlen, "privsep: socketpair: %s", strerror(e));
		goto fail;
	}
	if (pipe2(logp, O_CLOEXEC) < 0 || pipe2(pidp, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(err, errlen, "privsep: pipe: %s", strerror(e));
		goto fail;
	}
	/* A server that stops reading its answers is taken for dead rather than stalling us. */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(sv[1], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fflush(NULL);
	p->keeper = fork();
	if (p->keeper < 0) {
		e = errno;
		snprintf(err, errlen, "privsep: fork the server's keeper: %s", strerror(e));
		goto fail;
	}
	if (p->keeper == 0) {
		/* The page's writable mapping stayed behind (MADV_DONTFORK). */
		close(sv[0]);
		close(logp[0]);
		close(pidp[0]);
		privsep_keeper_main(*ho, user, hw_user, sv[1], page, logp[1], pidp[1], parent);
	}
	close(sv[1]);
	close(logp[1]);
	close(pidp[1]);
	sv[1] = logp[1] = pidp[1] = -1;
	sample_page_source_close(&page);   /* the mapping is what the page is written through */
	p->pid = read_server_pid(pidp[0]);
	close(pidp[0]);
	pidp[0] = -1;
	if (p->pid < 0) {
		int status;

		e = ECHILD;
		snprintf(err, errlen, "privsep: the server's keeper (process %d) did not fork the "
			 "server", (int)p->keeper);
		kill(p->keeper, SIGKILL);
		waitpid(p->keeper, &status, 0);
		goto fail;
	}
	fcntl(logp[0], F_SETFL, O_NONBLOCK);
	p->fd = sv[0];
	p->log_fd = logp[0];
	atomic_init(&p->dead, false);
	pthread_mutex_init(&p->lock, NULL);
	*ret = p;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (sv[i] >= 0)
			close(sv[i]);
		if (logp[i] >= 0)
			close(logp[i]);
		if (pidp[i] >= 0)
			close(pidp[i]);
	}
	sample_page_source_close(&page);
	sample_page_unmap(p->page);
	free(p);
	return -e;
}
