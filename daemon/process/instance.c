/*
 * The machine-wide instance lock (instance.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance.h"

/* ROOT/rel without a doubled slash ("/" + "run" is "/run"). */
static void under_root(char *buf, size_t len, const char *root, const char *rel)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	snprintf(buf, len, "%.*s/%s", n == 1 && root[0] == '/' ? 0 : (int)n, root, rel);
}

/*
 * Open dir (creating it with mode when missing), refusing a symbolic link
 * and a directory that another user owns or may write to.
 */
static int open_private_dir(const char *dir, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdir(dir, mode) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "instance lock: cannot create %s: %s", dir, strerror(e));
		return -e;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "instance lock: %s: %s", dir,
			 e == ELOOP || e == ENOTDIR ? "not a directory (a symbolic link?)" : strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen, "instance lock: %s is owned by uid %u with mode %03o; it must be "
			 "owned by uid %u and writable by no one else", dir, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 0777), (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}

/*
 * The pid the holder wrote into the lock file, or 0.  The holder writes it
 * just after taking the lock, so a refusal in between waits a moment for it.
 */
static long holder_pid(int fd)
{
	for (int tries = 0; tries < 50; tries++) {
		char buf[32] = "";
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		long pid = n > 0 ? strtol(buf, NULL, 10) : 0;

		if (pid > 0)
			return pid;
		usleep(10000);
	}
	return 0;
}

int instance_lock(const char *root, char *err, size_t errlen)
{
	char run[4096], dir[4096], pid[32];
	struct stat st;
	int dfd, fd;

	if (!root || !*root)
		root = "/";
	under_root(run, sizeof(run), root, "run");
	under_root(dir, sizeof(dir), root, INSTANCE_LOCK_DIR);
	if (mkdir(run, 0755) < 0 && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "instance lock: cannot create %s: %s", run, strerror(e));
		return -e;
	}
	dfd = open_private_dir(dir, 0700, err, errlen);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, INSTANCE_LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "instance lock: %s/%s: %s", dir, INSTANCE_LOCK_FILE, strerror(e));
		return -e;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    (st.st_mode & 077)) {
		snprintf(err, errlen, "instance lock: %s/%s is not a private regular file of uid %u",
			 dir, INSTANCE_LOCK_FILE, (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;
		long holder = holder_pid(fd);

		close(fd);
		if (e != EWOULDBLOCK) {
			snprintf(err, errlen, "instance lock: %s/%s: %s", dir, INSTANCE_LOCK_FILE,
				 strerror(e));
			return -e;
		}
		snprintf(err, errlen, "another uncored (pid %ld) already owns the PMU of this machine "
			 "(%s/%s is locked); refusing to start before touching any register", holder,
			 dir, INSTANCE_LOCK_FILE);
		return -EBUSY;
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0) {
		/* The lock holds all the same; only the pid in a refusal is lost. */
	}
	return fd;
}
