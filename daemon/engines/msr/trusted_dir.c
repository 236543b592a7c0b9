/*
 * The state file's directory, walked without following links
 * (trusted_dir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trusted_dir.h"

const char *trusted_dir_why(const struct stat *st, bool is_dir)
{
	if (is_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return is_dir ? "not a directory" : "not a regular file";
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* Why a directory above the state file's may not be trusted, or NULL. */
static const char *ancestor_why(const struct stat *st)
{
	/* Root's and sticky (/tmp): no one else can replace or remove what root owns there. */
	if (S_ISDIR(st->st_mode) && st->st_uid == 0 && (st->st_mode & S_ISVTX))
		return NULL;
	return trusted_dir_why(st, true);
}

/* Refuse the directory dir names up to end, for why; the state file is in it or under it. */
static int refuse(const char *dir, const char *end, bool in, const char *why, char *err,
		  size_t errlen)
{
	snprintf(err, errlen, "directory %.*s: %s, so the state file %s it is not trusted",
		 (int)(end - dir), dir, why, in ? "in" : "under");
	return -EPERM;
}

/* Fail with the error of a call on the directory dir names up to end. */
static int failed(int fd, const char *dir, const char *end, int r, char *err, size_t errlen)
{
	if (fd >= 0)
		close(fd);
	snprintf(err, errlen, "directory %.*s: %s", (int)(end - dir), dir,
		 r == -ENOTDIR ? "not a directory" : strerror(-r));
	return r;
}

int trusted_dir_open(const char *dir, char *err, size_t errlen)
{
	const char *p = dir, *end = dir + 1;   /* dir up to end: where fd is */
	struct stat st;
	int fd;

	if (dir[0] != '/') {
		snprintf(err, errlen, "%s: not an absolute path", dir);
		return -EINVAL;
	}
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return failed(-1, dir, end, -errno, err, errlen);
	for (;;) {
		const char *why;
		char name[256];
		size_t n;
		int next;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (fstat(fd, &st) < 0)
			return failed(fd, dir, end, -errno, err, errlen);
		why = n == 0 ? trusted_dir_why(&st, true) : ancestor_why(&st);
		if (why) {
			close(fd);
			return refuse(dir, end, n == 0, why, err, errlen);
		}
		if (n == 0)
			return fd;
		end = p + n;
		if (n >= sizeof(name) || (n == 2 && p[0] == '.' && p[1] == '.')) {
			close(fd);
			return refuse(dir, end, false, "a name that is too long or \"..\"", err,
				      errlen);
		}
		memcpy(name, p, n);
		name[n] = '\0';
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			int r = -errno;

			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
				close(fd);
				return refuse(dir, end, !end[strspn(end, "/")], "a symbolic link",
					      err, errlen);
			}
			return failed(fd, dir, end, r, err, errlen);
		}
		close(fd);
		fd = next;
		p = end;
	}
}
