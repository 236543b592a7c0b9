/*
 * The privileged opener.  See hwopen.h.
 */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <stdatomic.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hw_dev.h"
#include "hwopen.h"
#include "log.h"
#include "privdrop.h"

struct hwopen {
	int fd;
	pid_t pid;
	int pidfd;                 /* readable once the opener has exited; -1 once reaped */
	atomic_bool broken;        /* no answer in time, or a broken answer: never asked again */
};

/* A request is a CPU number; an answer an errno (0 or negative) with the fds. */
struct answer {
	int32_t err;
};

/* Send the answer, with both fds when err is 0. */
static int send_answer(int fd, int err, int msr_fd, int cpuid_fd)
{
	struct answer a = { .err = err };
	struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (err == 0) {
		struct cmsghdr *c;
		int fds[2] = { msr_fd, cpuid_fd };

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(c), fds, sizeof(fds));
	}
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(a) ? 0 : -errno;
}

/* The opener process: see hwopen.h.  Never returns. */
static void opener_main(const char *root, int fd, pid_t parent)
{
	char err[256];
	int32_t cpu;

	/* Only its socket and the standard streams. */
	if (fd != 3 && (dup2(fd, 3) < 0 || close(fd) < 0))
		_exit(1);
	fd = 3;
	close_range(4, ~0u, 0);
	/* Run as a normal user (tests) it has nothing to keep or drop, as privdrop_to_user. */
	if (geteuid() == 0 && privdrop_keep_only(CAP_SYS_RAWIO, err, sizeof(err)) < 0) {
		log_error("msr opener: %s", err);
		_exit(1);
	}
	/*
	 * Killed when the daemon ends while it still has root's rights (the
	 * kernel checks the dying parent's permission to send it: once the
	 * daemon has dropped to a user, the closed socket ends the opener).
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(1);
	for (;;) {
		ssize_t n = read(fd, &cpu, sizeof(cpu));
		int msr_fd = -1, cpuid_fd = -1, r;

		if (n == 0)
			_exit(0);   /* the daemon has stopped */
		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(cpu))
			_exit(1);
		r = cpu < 0 ? -EINVAL : hwdev_open_cpu(root, cpu, &msr_fd, &cpuid_fd);
		r = send_answer(fd, r, msr_fd, cpuid_fd);
		if (msr_fd >= 0)
			close(msr_fd);
		if (cpuid_fd >= 0)
			close(cpuid_fd);
		if (r < 0)
			_exit(1);
	}
}

int hwopen_start(const char *root, struct hwopen **ret, char *err, size_t errlen)
{
	struct hwopen *o = calloc(1, sizeof(*o));
	pid_t parent = getpid();
	int sv[2];

	if (!o) {
		snprintf(err, errlen, "msr opener: out of memory");
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = -errno;

		snprintf(err, errlen, "msr opener: socketpair: %s", strerror(-e));
		free(o);
		return e;
	}
	o->pid = fork();
	if (o->pid < 0) {
		int e = -errno;

		snprintf(err, errlen, "msr opener: fork: %s", strerror(-e));
		close(sv[0]);
		close(sv[1]);
		free(o);
		return e;
	}
	if (o->pid == 0) {
		close(sv[0]);
		opener_main(root, sv[1], parent);
	}
	close(sv[1]);
	o->fd = sv[0];
	o->pidfd = pidfd_open(o->pid, 0);
	*ret = o;
	return 0;
}

/*
 * The opener is gone for this daemon: a late answer would pair with the
 * next request, so the socket is shut down (the opener reads end-of-file
 * and exits once it runs again) and nothing is asked any more.
 */
static int give_up(struct hwopen *o, int err)
{
	atomic_store(&o->broken, true);
	shutdown(o->fd, SHUT_RDWR);
	return err;
}

int hwopen_open(void *arg, int cpu, int *ret_msr_fd, int *ret_cpuid_fd)
{
	struct hwopen *o = arg;
	int32_t req = cpu;
	struct answer a;
	struct iovec iov = { .iov_base = &a, .iov_len = sizeof(a) };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;

	struct pollfd p;
	int ready;

	*ret_msr_fd = *ret_cpuid_fd = -1;
	if (!o || o->fd < 0 || atomic_load(&o->broken))
		return -EPIPE;
	if (send(o->fd, &req, sizeof(req), MSG_NOSIGNAL) != (ssize_t)sizeof(req))
		return give_up(o, -EPIPE);
	p = (struct pollfd){ .fd = o->fd, .events = POLLIN };
	do
		ready = poll(&p, 1, HWOPEN_ANSWER_MS);
	while (ready < 0 && errno == EINTR);
	if (ready == 0) {
		log_error("msr opener %d did not answer within %d ms; a CPU that comes online from "
			  "now on cannot be monitored until uncored restarts", (int)o->pid,
			  HWOPEN_ANSWER_MS);
		return give_up(o, -ETIMEDOUT);
	}
	do
		n = recvmsg(o->fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(a))
		return give_up(o, -EPIPE);
	c = CMSG_FIRSTHDR(&msg);
	if (a.err == 0) {
		int fds[2];

		if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len != CMSG_LEN(sizeof(fds)))
			return give_up(o, -EPIPE);
		memcpy(fds, CMSG_DATA(c), sizeof(fds));
		*ret_msr_fd = fds[0];
		*ret_cpuid_fd = fds[1];
		return 0;
	}
	return a.err < 0 ? a.err : -EPIPE;
}

pid_t hwopen_pid(const struct hwopen *o)
{
	return o ? o->pid : -1;
}

int hwopen_exit_fd(const struct hwopen *o)
{
	return o ? o->pidfd : -1;
}

/* Reap the opener if it has exited; describe how into why.  Returns 1 if it had, else 0. */
static int reap(struct hwopen *o, char *why, size_t whylen)
{
	siginfo_t si = { 0 };

	if (o->pidfd < 0 || waitid(P_PIDFD, (id_t)o->pidfd, &si, WEXITED | WNOHANG) < 0 ||
	    si.si_pid == 0)
		return 0;
	if (si.si_code == CLD_EXITED)
		snprintf(why, whylen, "exited with status %d", si.si_status);
	else
		snprintf(why, whylen, "was killed by SIG%s", sigabbrev_np(si.si_status));
	close(o->pidfd);
	o->pidfd = -1;
	atomic_store(&o->broken, true);
	return 1;
}

int hwopen_reap(struct hwopen *o, char *why, size_t whylen)
{
	return o ? reap(o, why, whylen) : 0;
}

void hwopen_stop(struct hwopen *o)
{
	char why[64];

	if (!o)
		return;
	close(o->fd);
	/*
	 * It exits at end-of-file, at once unless it is stopped or stuck; the
	 * stop does not wait for that beyond a moment.  One left behind holds
	 * nothing but its end of the closed socket, and exits when it runs.
	 */
	if (o->pidfd >= 0) {
		struct pollfd p = { .fd = o->pidfd, .events = POLLIN };

		if (poll(&p, 1, HWOPEN_STOP_MS) > 0)
			reap(o, why, sizeof(why));
		if (o->pidfd >= 0)
			close(o->pidfd);
	}
	free(o);
}
