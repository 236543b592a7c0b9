/*
 * Unit tests of the privilege drop.  The no-op cases run everywhere; the
 * real drop needs root and runs in a forked child (a drop cannot be
 * undone), which checks its own /proc/self/status and reports through
 * its exit code.  Without root those cases are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "privdrop.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Exit codes of the child, so a failure says which check it was. */
enum child_result {
	CHILD_OK,
	CHILD_DROP_FAILED,
	CHILD_UID,
	CHILD_GID,
	CHILD_CAPS,
	CHILD_NO_NEW_PRIVS,
	CHILD_GROUPS,
	CHILD_KEPT_FD,
	CHILD_REOPENED,
	CHILD_UNEXPECTED,
};

static void require_root(void)
{
	if (geteuid() != 0)
		skip();
}

/* Run fn in a child and return its exit code. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int status_line(const char *name, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (strncmp(line, name, strlen(name)) == 0) {
			snprintf(buf, len, "%s", line);
			found = 1;
		}
	fclose(f);
	return found;
}

static int check_ids(const struct passwd *pw)
{
	char line[256], want[256];

	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u\n", (unsigned)pw->pw_uid,
		 (unsigned)pw->pw_uid, (unsigned)pw->pw_uid, (unsigned)pw->pw_uid);
	if (!status_line("Uid:", line, sizeof(line)) || strcmp(line, want) != 0)
		return CHILD_UID;
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u\n", (unsigned)pw->pw_gid,
		 (unsigned)pw->pw_gid, (unsigned)pw->pw_gid, (unsigned)pw->pw_gid);
	if (!status_line("Gid:", line, sizeof(line)) || strcmp(line, want) != 0)
		return CHILD_GID;
	/* The kernel ends the list with a space before the newline. */
	if (!status_line("Groups:", line, sizeof(line)) || line[7 + strspn(line + 7, " \t\n")] != '\0')
		return CHILD_GROUPS;
	return CHILD_OK;
}

static int check_caps(void)
{
	static const char *const fields[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	char line[256], want[64];

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		snprintf(want, sizeof(want), "%s\t0000000000000000\n", fields[i]);
		if (!status_line(fields[i], line, sizeof(line)) || strcmp(line, want) != 0)
			return CHILD_CAPS;
	}
	if (!status_line("NoNewPrivs:", line, sizeof(line)) || strcmp(line, "NoNewPrivs:\t1\n") != 0)
		return CHILD_NO_NEW_PRIVS;
	return CHILD_OK;
}

/* arg: a root-only file, opened before the drop and read after it. */
static int drop_to_nobody(void *arg)
{
	const char *secret = arg;
	struct passwd *pw = getpwnam("nobody");
	char err[256], c;
	int fd = open(secret, O_RDONLY | O_CLOEXEC), r;

	if (!pw || fd < 0)
		return CHILD_UNEXPECTED;
	if (privdrop_to_user("nobody", err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return CHILD_DROP_FAILED;
	}
	if ((r = check_ids(pw)) != CHILD_OK || (r = check_caps()) != CHILD_OK)
		return r;
	if (pread(fd, &c, 1, 0) != 1 || c != 's')
		return CHILD_KEPT_FD;
	if (open(secret, O_RDONLY) >= 0 || errno != EACCES)
		return CHILD_REOPENED;
	return CHILD_OK;
}

static void test_drop_to_nobody(void **state)
{
	char dir[256], path[300];

	(void)state;
	require_root();
	if (!getpwnam("nobody"))
		skip();
	helpers_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/secret", dir);
	helpers_write_file(path, "secret\n");
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(in_child(drop_to_nobody, path), CHILD_OK);
	helpers_rmtree(dir);
}

/*
 * The server's keeper (privsep_keeper.c): real and saved ids nobody's,
 * effective ids daemon's, no group, no capability, no-new-privs.
 */
static int drop_to_keeper(void *arg)
{
	struct passwd *pw = getpwnam("nobody");
	char line[256], want[256], err[256];
	uid_t nobody_uid, daemon_uid;
	gid_t nobody_gid, daemon_gid;

	(void)arg;
	if (!pw)
		return CHILD_UNEXPECTED;
	nobody_uid = pw->pw_uid, nobody_gid = pw->pw_gid;
	pw = getpwnam("daemon");   /* the same static entry: each copied before the next */
	if (!pw)
		return CHILD_UNEXPECTED;
	daemon_uid = pw->pw_uid, daemon_gid = pw->pw_gid;
	if (privdrop_to_keeper("nobody", "daemon", err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return CHILD_DROP_FAILED;
	}
	/* Real, effective, saved, filesystem. */
	snprintf(want, sizeof(want), "Uid:\t%u\t%u\t%u\t%u\n", (unsigned)nobody_uid,
		 (unsigned)daemon_uid, (unsigned)nobody_uid, (unsigned)daemon_uid);
	if (!status_line("Uid:", line, sizeof(line)) || strcmp(line, want) != 0)
		return CHILD_UID;
	snprintf(want, sizeof(want), "Gid:\t%u\t%u\t%u\t%u\n", (unsigned)nobody_gid,
		 (unsigned)daemon_gid, (unsigned)nobody_gid, (unsigned)daemon_gid);
	if (!status_line("Gid:", line, sizeof(line)) || strcmp(line, want) != 0)
		return CHILD_GID;
	if (!status_line("Groups:", line, sizeof(line)) || line[7 + strspn(line + 7, " \t\n")] != '\0')
		return CHILD_GROUPS;
	return check_caps();
}

static void test_drop_to_keeper(void **state)
{
	(void)state;
	require_root();
	if (!getpwnam("nobody") || !getpwnam("daemon"))
		skip();
	assert_int_equal(in_child(drop_to_keeper, NULL), CHILD_OK);
}

/* A CPU-wide software event on CPU 0 (what the perf engine opens, minus the PMU): fd or -errno. */
static int open_cpu_clock(void)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr), .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
	};
	long fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

/* arg: whether perf_event_open works here as root. */
static int drop_keeping_perfmon(void *arg)
{
	bool can_open = *(const bool *)arg;
	struct passwd *pw = getpwnam("nobody");
	char line[256], want[64], err[256];
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int last = 0, r, fd;

	if (!pw || !f || fscanf(f, "%d", &last) != 1)
		return CHILD_UNEXPECTED;
	fclose(f);
	r = privdrop_to_user_keep("nobody", PRIVDROP_KEEP_PERFMON, err, sizeof(err));
	/* A kernel before 5.8 has no CAP_PERFMON: dropped, nothing kept, said so. */
	if (r != (last >= 38 ? 0 : 2)) {
		fprintf(stderr, "%d: %s\n", r, err);
		return CHILD_DROP_FAILED;
	}
	if ((r = check_ids(pw)) != CHILD_OK)
		return r;
	if (last < 38)
		return check_caps();
	for (int i = 0; i < 5; i++) {
		static const char *const fields[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
		bool kept = i == 1 || i == 2;

		snprintf(want, sizeof(want), "%s\t%s\n", fields[i],
			 kept ? "0000004000000000" : "0000000000000000");
		if (!status_line(fields[i], line, sizeof(line)) || strcmp(line, want) != 0)
			return CHILD_CAPS;
	}
	if (!status_line("NoNewPrivs:", line, sizeof(line)) || strcmp(line, "NoNewPrivs:\t1\n") != 0)
		return CHILD_NO_NEW_PRIVS;
	/* What it is kept for: a CPU-wide event opens after the drop, whatever the paranoid level. */
	if (can_open && (fd = open_cpu_clock()) < 0) {
		fprintf(stderr, "perf_event_open after the drop: %s\n", strerror(-fd));
		return CHILD_UNEXPECTED;
	}
	return CHILD_OK;
}

static void test_drop_keeping_perfmon(void **state)
{
	int fd = open_cpu_clock();
	bool can_open = fd >= 0;

	(void)state;
	require_root();
	if (!getpwnam("nobody"))
		skip();
	if (fd >= 0)
		close(fd);
	assert_int_equal(in_child(drop_keeping_perfmon, &can_open), CHILD_OK);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static int drop_with_threads(void *arg)
{
	pthread_t t;
	char err[256];

	(void)arg;
	if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
		return CHILD_UNEXPECTED;
	if (privdrop_to_user("nobody", err, sizeof(err)) != -EBUSY)
		return CHILD_DROP_FAILED;
	if (strcmp(err, "drop privileges to 'nobody': other threads already run and would "
		   "keep their capabilities") != 0)
		return CHILD_UNEXPECTED;
	if (geteuid() != 0)
		return CHILD_UID;
	return CHILD_OK;
}

static void test_refuses_with_threads(void **state)
{
	(void)state;
	require_root();
	if (!getpwnam("nobody"))
		skip();
	assert_int_equal(in_child(drop_with_threads, NULL), CHILD_OK);
}

static void test_missing_user(void **state)
{
	char err[256] = "";

	(void)state;
	require_root();
	assert_int_equal(privdrop_to_user("uncored-no-such-user", err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "drop privileges: user 'uncored-no-such-user' does not exist; "
			    "create it with systemd-sysusers (uncored.sysusers) or set [daemon] user");
	assert_int_equal(geteuid(), 0);
}

static void test_nothing_to_do(void **state)
{
	static const char *const users[] = { "", "root" };
	char err[256] = "untouched";

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(users); i++) {
		print_message("user '%s'\n", users[i]);
		assert_int_equal(privdrop_to_user(users[i], err, sizeof(err)), 1);
	}
	assert_int_equal(privdrop_to_user(NULL, err, sizeof(err)), 1);
	assert_string_equal(err, "untouched");
}

/* As a normal user the drop is skipped whatever the user asked for. */
static void test_not_root_keeps_running(void **state)
{
	char err[256] = "untouched";

	(void)state;
	if (geteuid() == 0)
		skip();
	assert_int_equal(privdrop_to_user("uncored", err, sizeof(err)), 1);
	assert_string_equal(err, "untouched");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_to_do),
		cmocka_unit_test(test_not_root_keeps_running),
		cmocka_unit_test(test_missing_user),
		cmocka_unit_test(test_drop_to_nobody),
		cmocka_unit_test(test_drop_to_keeper),
		cmocka_unit_test(test_drop_keeping_perfmon),
		cmocka_unit_test(test_refuses_with_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
