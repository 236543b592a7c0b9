/*
 * The perf_event handle: thin dispatch from struct perf_sys to its
 * implementation's ops, with the calls counted by kind, and the one file
 * the perf route reads outside sysfs (perf_event_paranoid) located under
 * the same root prefix.  It does not know which implementation is behind
 * the ops.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_sys.h"

int perf_sys_init(struct perf_sys *ps, const struct perf_sys_ops *ops, void *ctx,
		  const char *root)
{
	size_t len;

	memset(ps, 0, sizeof(*ps));
	if (!root)
		root = "/";
	ps->root = strdup(root);
	if (!ps->root) {
		if (ops->free)
			ops->free(ctx);
		return -ENOMEM;
	}
	len = strlen(ps->root);
	while (len > 0 && ps->root[len - 1] == '/')
		ps->root[--len] = '\0';
	ps->ops = ops;
	ps->ctx = ctx;
	return 0;
}

int perf_sys_open(struct perf_sys *ps, struct perf_event_attr *attr, int cpu, int group_fd)
{
	if (!ps->ops)
		return -EBADF;
	ps->counts.n_open++;
	return ps->ops->open(ps->ctx, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

ssize_t perf_sys_read(struct perf_sys *ps, int fd, void *buf, size_t len)
{
	if (!ps->ops)
		return -EBADF;
	ps->counts.n_read++;
	return ps->ops->read(ps->ctx, fd, buf, len);
}

static int do_ioctl(struct perf_sys *ps, int fd, unsigned long request, unsigned long arg)
{
	if (!ps->ops)
		return -EBADF;
	ps->counts.n_ioctl++;
	return ps->ops->ioctl(ps->ctx, fd, request, arg);
}

int perf_sys_enable(struct perf_sys *ps, int fd, unsigned flags)
{
	return do_ioctl(ps, fd, PERF_EVENT_IOC_ENABLE, flags);
}

int perf_sys_disable(struct perf_sys *ps, int fd, unsigned flags)
{
	return do_ioctl(ps, fd, PERF_EVENT_IOC_DISABLE, flags);
}

int perf_sys_reset(struct perf_sys *ps, int fd, unsigned flags)
{
	return do_ioctl(ps, fd, PERF_EVENT_IOC_RESET, flags);
}

int perf_sys_id(struct perf_sys *ps, int fd, uint64_t *ret_id)
{
	uint64_t id = 0;
	int r = do_ioctl(ps, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);

	if (r == 0)
		*ret_id = id;
	return r;
}

int perf_sys_close(struct perf_sys *ps, int fd)
{
	if (fd < 0)
		return 0;
	if (!ps->ops)
		return -EBADF;
	ps->counts.n_close++;
	return ps->ops->close(ps->ctx, fd);
}

const char *perf_sys_root(const struct perf_sys *ps)
{
	return ps->root ? ps->root : "";
}

uint64_t perf_sys_calls(const struct perf_sys *ps)
{
	const struct perf_sys_counts *c = &ps->counts;

	return c->n_open + c->n_read + c->n_ioctl + c->n_close;
}

void perf_sys_set_drops_sys_admin(struct perf_sys *ps, bool drops)
{
	ps->drops_sys_admin = drops;
}

bool perf_sys_paranoid_text(const struct perf_sys *ps, char *level, size_t len)
{
	int v = 0;

	if (perf_sys_read_paranoid(ps, &v) == 0) {
		snprintf(level, len, "%d", v);
		return v > 2;
	}
	snprintf(level, len, "unreadable");
	return true;
}

bool perf_sys_reopens_refused(const struct perf_sys *ps, char *level, size_t len)
{
	return ps->drops_sys_admin && perf_sys_paranoid_text(ps, level, len);
}

int perf_sys_read_paranoid(const struct perf_sys *ps, int *ret_level)
{
	char path[PATH_MAX], buf[32], *end;
	long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/sys/kernel/perf_event_paranoid", perf_sys_root(ps));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	errno = 0;
	v = strtol(buf, &end, 10);
	if (end == buf || errno || v < INT_MIN || v > INT_MAX || (*end && *end != '\n'))
		return -EINVAL;
	*ret_level = (int)v;
	return 0;
}

void perf_sys_free(struct perf_sys *ps)
{
	if (ps->ops && ps->ops->free)
		ps->ops->free(ps->ctx);
	free(ps->root);
	memset(ps, 0, sizeof(*ps));
}
