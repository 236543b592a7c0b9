/*
 * The machine-wide instance lock (instance.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "instance.h"

int instance_lock(const char *root, char *err, size_t errlen)
{
	char path[4096];
	size_t len;
	int fd;

	if (!root || !*root)
		root = "/";
	len = strlen(root);
	while (len > 1 && root[len - 1] == '/')
		len--;
	snprintf(path, sizeof(path), "%.*s/dev/cpu", len == 1 && root[0] == '/' ? 0 : (int)len, root);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		if (e != EWOULDBLOCK)
			return -e;
		snprintf(err, errlen, "another uncored already owns the PMU of this machine (%s is "
			 "locked); refusing to start before touching any register", path);
		return -EBUSY;
	}
	return fd;
}
