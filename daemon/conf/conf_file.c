/*
 * Reading a configuration file's bytes safely; see conf_file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf_file.h"

static const char *file_type(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

int conf_file_check_text(const char *text, size_t len, int *ret_line, char *err, size_t errlen)
{
	int line = 1;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '\0') {
			*ret_line = line;
			snprintf(err, errlen, "NUL byte (a configuration file is text)");
			return -EILSEQ;
		}
		if (text[i] == '\r' && (i + 1 == len || text[i + 1] != '\n')) {
			*ret_line = line;
			snprintf(err, errlen, "carriage return without a line feed (lines end in LF "
				 "or CR LF)");
			return -EILSEQ;
		}
		if (text[i] == '\n')
			line++;
	}
	return 0;
}

/* Read at most max + 1 bytes of fd (the file may grow after fstat). */
static int read_fd(int fd, char *buf, size_t max, size_t *ret_len)
{
	size_t len = 0;

	while (len <= max) {
		ssize_t got = read(fd, buf + len, max + 1 - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		len += (size_t)got;
	}
	*ret_len = len;
	return 0;
}

int conf_file_read(const char *path, char **ret_text, size_t *ret_len, int *ret_line,
		   char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO without a writer must not hang. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	*ret_line = 0;
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot read: %s", strerror(-r));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s, not a regular file", file_type(st.st_mode));
		r = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if (st.st_size > CONF_FILE_MAX) {
		snprintf(err, errlen, "too large (%lld bytes, at most %d)", (long long)st.st_size,
			 CONF_FILE_MAX);
		r = -EFBIG;
		goto out;
	}
	buf = malloc(CONF_FILE_MAX + 2);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	r = read_fd(fd, buf, CONF_FILE_MAX, &len);
	if (r < 0) {
		snprintf(err, errlen, "cannot read: %s", strerror(-r));
		goto out;
	}
	if (len > CONF_FILE_MAX) {
		snprintf(err, errlen, "too large (more than %d bytes)", CONF_FILE_MAX);
		r = -EFBIG;
		goto out;
	}
	buf[len] = '\0';
	r = conf_file_check_text(buf, len, ret_line, err, errlen);
out:
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret_text = buf;
	*ret_len = len;
	return 0;
}

/* s without leading and trailing blanks, into buf. */
static void trim(const char *s, size_t n, char *buf, size_t len)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	snprintf(buf, len, "%.*s", (int)n, s);
}

int conf_file_key_line(const char *path, const char *section, const char *key)
{
	char *text, err[128], name[256], current[256] = "";
	size_t len;
	int line = 0, found = 0, bad;

	if (conf_file_read(path, &text, &len, &bad, err, sizeof(err)) < 0)
		return 0;
	for (char *s = text; *s;) {
		size_t n = strcspn(s, "\n");
		char *end = s + n, *sep;

		line++;
		s += strspn(s, " \t");
		if (line == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
			s += 3;
		if (*s == '[') {
			sep = memchr(s, ']', (size_t)(end - s));
			if (sep)   /* as inih: the name between the brackets, blanks kept */
				snprintf(current, sizeof(current), "%.*s", (int)(sep - s - 1), s + 1);
		} else if (*s != ';' && *s != '#' && s < end) {
			sep = s + strcspn(s, "=:\n");
			if (sep < end) {
				trim(s, (size_t)(sep - s), name, sizeof(name));
				if (strcmp(current, section) == 0 && strcmp(name, key) == 0)
					found = line;
			}
		}
		s = *end ? end + 1 : end;
	}
	free(text);
	return found;
}
