/*
 * Shared helpers for the unit tests: temporary trees and source paths.
 */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

void helpers_mkdtemp(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/uncored-test-XXXXXX");
	if (!mkdtemp(buf)) {
		perror("mkdtemp");
		abort();
	}
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void helpers_rmtree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_parents(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST) {
			perror(tmp);
			abort();
		}
		*p = '/';
	}
}

void helpers_write_file(const char *path, const char *text)
{
	FILE *f;

	make_parents(path);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	fputs(text, f);
	fclose(f);
}

const char *helpers_source_path(const char *rel, char *buf, size_t len)
{
	const char *root = getenv("UNCORED_SOURCE_ROOT");

	snprintf(buf, len, "%s/%s", root ? root : ".", rel);
	return buf;
}
