/*
 * The two processes of the daemon and the socket between them; see privsep.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

struct privsep {
	pid_t pid;
	int fd;
	atomic_bool dead;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 0, -EPIPE at end-of-file (before any byte of buf), or -errno. */
static int read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
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
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
	char c;
	int r = poll(&pfd, 1, timeout_ms);

	if (r == 0)
		return -ETIMEDOUT;
	if (r > 0 && !atomic_load(&p->dead) && recv(p->fd, &c, 1, MSG_DONTWAIT) == 1)
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
static void server_main(struct http_options ho, const char *user, int fd, pid_t parent)
{
	struct http_server *http;
	char err[512];
	bool acked = false;
	int r;

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

int privsep_start(const struct http_options *ho, const char *user, struct privsep **ret,
		  char *err, size_t errlen)
{
	struct timeval tv = { .tv_sec = PRIVSEP_SEND_TIMEOUT_S };
	struct privsep *p;
	pid_t parent = getpid();
	int sv[2];

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
	/* A server that stops reading is taken for dead rather than stalling the sampler. */
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	fflush(NULL);
	p->pid = fork();
	if (p->pid < 0) {
		int e = errno;

		snprintf(err, errlen, "privsep: fork the server: %s", strerror(e));
		close(sv[0]);
		close(sv[1]);
		free(p);
		return -e;
	}
	if (p->pid == 0) {
		close(sv[0]);
		server_main(*ho, user, sv[1], parent);
	}
	close(sv[1]);
	p->fd = sv[0];
	atomic_init(&p->dead, false);
	*ret = p;
	return 0;
}
