/*
 * The real kernel behind struct perf_sys: each op is one system call,
 * retried on EINTR, with errno turned into a negative return.  It keeps no
 * state of its own; the fds belong to the callers.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf_sys_linux.h"

static int linux_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
		      int group_fd, unsigned long flags)
{
	long fd;

	(void)ctx;
	/* glibc has no wrapper for perf_event_open. */
	fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

static ssize_t linux_read(void *ctx, int fd, void *buf, size_t len)
{
	ssize_t n;

	(void)ctx;
	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static int linux_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	(void)ctx;
	return ioctl(fd, request, arg) < 0 ? -errno : 0;
}

static int linux_close(void *ctx, int fd)
{
	(void)ctx;
	/* Linux releases the fd even when close fails; never retry it. */
	return close(fd) < 0 ? -errno : 0;
}

static const struct perf_sys_ops perf_sys_linux_ops = {
	.name = "linux",
	.open = linux_open,
	.read = linux_read,
	.ioctl = linux_ioctl,
	.close = linux_close,
};

int perf_sys_linux_init(struct perf_sys *ret_ps, const char *root)
{
	return perf_sys_init(ret_ps, &perf_sys_linux_ops, NULL, root);
}
