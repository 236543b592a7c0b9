/*
 * Shared helpers for the unit tests: temporary trees and source paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "snapshot.h"

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

/* Fake device/sysfs trees for the hw_dev backend. */

/* One 8-byte slot per 32-bit MSR address (see hw_dev.h). */
#define FAKE_MSR_FILE_SIZE   (UINT64_C(8) << 32)

static void fake_dev_path(char *buf, size_t len, const char *root, int cpu, const char *name)
{
	snprintf(buf, len, "%s/dev/cpu/%d/%s", root, cpu, name);
}

static void fake_sparse_file(const char *path, uint64_t size)
{
	int fd;

	make_parents(path);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror(path);
		abort();
	}
	close(fd);
}

void helpers_fake_cpu_attr(const char *root, int cpu, const char *rel, const char *text)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/cpu%d/%s", root, cpu, rel);
	helpers_write_file(path, text);
}

void helpers_fake_cpu(const char *root, int cpu, int socket, int core, bool online)
{
	char path[4096], text[32];

	fake_dev_path(path, sizeof(path), root, cpu, "msr");
	fake_sparse_file(path, FAKE_MSR_FILE_SIZE);
	fake_dev_path(path, sizeof(path), root, cpu, "cpuid");
	fake_sparse_file(path, FAKE_MSR_FILE_SIZE);
	if (cpu != 0)
		helpers_fake_cpu_attr(root, cpu, "online", online ? "1\n" : "0\n");
	if (!online)
		return;
	snprintf(text, sizeof(text), "%d\n", socket);
	helpers_fake_cpu_attr(root, cpu, "topology/physical_package_id", text);
	helpers_fake_cpu_attr(root, cpu, "topology/die_id", "0\n");
	snprintf(text, sizeof(text), "%d\n", core);
	helpers_fake_cpu_attr(root, cpu, "topology/core_id", text);
}

static void fake_pio(const char *root, int cpu, const char *name, void *buf, size_t len,
		     uint64_t offset, bool write)
{
	char path[4096];
	ssize_t n;
	int fd;

	fake_dev_path(path, sizeof(path), root, cpu, name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror(path);
		abort();
	}
	n = write ? pwrite(fd, buf, len, (off_t)offset) : pread(fd, buf, len, (off_t)offset);
	if (n != (ssize_t)len) {
		perror(path);
		abort();
	}
	close(fd);
}

void helpers_fake_msr_write(const char *root, int cpu, uint32_t msr, uint64_t value)
{
	fake_pio(root, cpu, "msr", &value, sizeof(value), (uint64_t)msr * 8, true);
}

uint64_t helpers_fake_msr_read(const char *root, int cpu, uint32_t msr)
{
	uint64_t value = 0;

	fake_pio(root, cpu, "msr", &value, sizeof(value), (uint64_t)msr * 8, false);
	return value;
}

void helpers_fake_cpuid(const char *root, int cpu, uint32_t leaf, uint32_t subleaf,
			uint32_t eax, uint32_t ebx, uint32_t ecx, uint32_t edx)
{
	uint32_t regs[4] = { eax, ebx, ecx, edx };

	fake_pio(root, cpu, "cpuid", regs, sizeof(regs), (leaf | (uint64_t)subleaf << 32) * 16, true);
}

struct snapshot_collector *helpers_collector(struct snapshot *s, const char *name)
{
	for (int i = 0; i < s->n_collectors; i++)
		if (strcmp(s->collectors[i].name, name) == 0)
			return &s->collectors[i];
	fail_msg("collector %s is not listed in the snapshot", name);
	return NULL;
}

bool helpers_shard_mine(size_t index)
{
	const char *v = getenv("UNCORED_TEST_SHARD");
	unsigned i, n;

	if (!v || sscanf(v, "%u/%u", &i, &n) != 2 || n == 0 || i >= n)
		return true;
	return index % n == i;
}

size_t helpers_shard_tests(struct CMUnitTest *tests, size_t n)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++)
		if (helpers_shard_mine(i))
			tests[kept++] = tests[i];
	return kept;
}

void helpers_promtool_clean(const char *text, size_t len, const char *what)
{
	char path[512], cmd[1024];
	FILE *f;

	if (system("command -v promtool >/dev/null 2>&1") != 0)
		return;
	snprintf(path, sizeof(path), "/tmp/uncored-promtool-%d.prom", (int)getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s >/dev/null 2>&1", path);
	if (system(cmd) != 0)
		fail_msg("%s: promtool check metrics fails on %s", what, path);
	unlink(path);
}
