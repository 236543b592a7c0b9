/*
 * The two processes of the daemon and the socket between them; see privsep.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
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

#define PRIVSEP_MAGIC 0x75637231u          /* "ucr1" */
#define PRIVSEP_ABSENT UINT64_MAX          /* a document this sample has not */
#define PRIVSEP_MAX_DOC (256u << 20)       /* refuse larger: not ours */
#define PRIVSEP_SEND_TIMEOUT_S 10
#define PRIVSEP_STOP_WAIT_MS 5000

/* What precedes each sample's documents on the socket. */
struct privsep_header {
	uint32_t magic;
	uint32_t n_docs;                   /* SNAPSHOT_N_RENDERED */
	double time;
	double interval_s;
	uint64_t len[SNAPSHOT_N_RENDERED]; /* slot doc * 2 + gzip, as in render.c */
};

#define PRIVSEP_LOG_LINE 1024          /* log.c's longest message */

struct privsep {
	pid_t pid;
	int fd;
	int log_fd;                        /* the server's stdout and stderr; -1 at end */
	atomic_bool dead;
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
	struct privsep_header h = { .magic = PRIVSEP_MAGIC, .n_docs = SNAPSHOT_N_RENDERED,
				    .time = s->time, .interval_s = s->interval_s };
	const char *body[SNAPSHOT_N_RENDERED] = { 0 };
	int r = 0;

	if (atomic_load(&p->dead))
		return;
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++) {
		size_t len;

		h.len[i] = PRIVSEP_ABSENT;
		if (i >= RENDER_N_DOCS * 2)
			continue;
		/* Absent (no history, or out of memory): the server answers as render_get would. */
		if (render_get(s, (enum render_doc)(i / 2), i % 2, &body[i], &len) == 0)
			h.len[i] = len;
	}
	r = write_all(p->fd, &h, sizeof(h));
	for (int i = 0; r == 0 && i < SNAPSHOT_N_RENDERED; i++)
		if (h.len[i] != PRIVSEP_ABSENT)
			r = write_all(p->fd, body[i], h.len[i]);
	if (r < 0) {
		log_error("privsep: the server does not take the documents (%s); it is stopped or hung",
			  strerror(-r));
		mark_dead(p);
	}
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
	char c;
	ssize_t n;

	if (atomic_load(&p->dead))
		return false;
	n = recv(p->fd, &c, 1, MSG_DONTWAIT);
	if (n == 1 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return true;
	mark_dead(p);
	return false;
}

int privsep_wait_first(struct privsep *p, int timeout_ms)
{
	struct timespec t0;
	char c;
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
		if (r < 0 || pfd[0].revents)
			break;
	}
	if (!atomic_load(&p->dead) && recv(p->fd, &c, 1, MSG_DONTWAIT) == 1)
		return 0;
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

/* In the server: the next sample's documents as a snapshot HTTP can serve. */
static int receive(int fd, struct snapshot **ret)
{
	struct privsep_header h;
	struct snapshot *s;
	int r = read_all(fd, &h, sizeof(h));

	if (r < 0)
		return r;
	if (h.magic != PRIVSEP_MAGIC || h.n_docs != SNAPSHOT_N_RENDERED)
		return -EBADMSG;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	atomic_init(&s->refs, 1);
	s->time = h.time;
	s->interval_s = h.interval_s;
	for (int i = 0; r == 0 && i < SNAPSHOT_N_RENDERED; i++) {
		struct snapshot_bytes *b;

		atomic_init(&s->rendered[i], NULL);
		if (h.len[i] == PRIVSEP_ABSENT)
			continue;
		if (h.len[i] > PRIVSEP_MAX_DOC || i >= RENDER_N_DOCS * 2) {
			r = -EBADMSG;
			break;
		}
		b = malloc(sizeof(*b) + h.len[i] + 1);
		if (!b) {
			r = -ENOMEM;
			break;
		}
		b->len = h.len[i];
		b->data[b->len] = '\0';
		atomic_store(&s->rendered[i], b);
		r = read_all(fd, b->data, b->len);
	}
	/*
	 * A document left absent (no history) is absent in the server too:
	 * render_get() answers -ENOENT for it, as the hardware side would.
	 * The server holds no values, so it never formats anything itself.
	 */
	if (r < 0) {
		snapshot_release(s);
		return r;
	}
	*ret = s;
	return 0;
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
	bool acked = false;
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
	http = http_start(&ho, err, sizeof(err));
	if (!http) {
		log_error("http: %s", err);
		_exit(1);
	}
	if (sandbox_install(err, sizeof(err)) < 0) {
		log_error("server: %s", err);
		_exit(1);
	}
	for (;;) {
		struct snapshot *s;

		r = receive(fd, &s);
		if (r < 0)
			break;
		snapshot_publish(s);
		if (!acked && write_all(fd, "r", 1) == 0)
			acked = true;
	}
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
	*ret = p;
	return 0;
}
