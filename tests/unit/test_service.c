/*
 * Unit tests of the systemd glue: notifications arrive, in order and with
 * the exact text, on a datagram socket the test owns (NOTIFY_SOCKET); no
 * socket means silent no-ops; the watchdog interval follows
 * WATCHDOG_USEC/WATCHDOG_PID; socket activation hands over exactly one
 * listening TCP socket on fd 3 and refuses anything else.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "service.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct notify_fixture {
	char dir[256];
	int fd;
};

static int notify_setup(void **state)
{
	struct notify_fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 2 };

	if (!f)
		return -1;
	helpers_mkdtemp(f->dir, sizeof(f->dir));
	if (strlen(f->dir) + sizeof("/notify") > sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, f->dir);
	strcat(sa.sun_path, "/notify");
	f->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (f->fd < 0 || bind(f->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	setsockopt(f->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
	*state = f;
	return 0;
}

static int notify_teardown(void **state)
{
	struct notify_fixture *f = *state;

	unsetenv("NOTIFY_SOCKET");
	close(f->fd);
	helpers_rmtree(f->dir);
	free(f);
	return 0;
}

static const char *next_message(struct notify_fixture *f, char *buf, size_t len)
{
	ssize_t n = recv(f->fd, buf, len - 1, 0);

	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static uint64_t monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void test_notify_sequence(void **state)
{
	struct notify_fixture *f = *state;
	char buf[512];

	assert_true(service_ready() > 0);
	assert_true(service_status("sampling %d CPUs every %.1f s", 24, 1.0) > 0);
	assert_true(service_watchdog_ping() > 0);
	assert_true(service_stopping() > 0);
	assert_string_equal(next_message(f, buf, sizeof(buf)), "READY=1");
	assert_string_equal(next_message(f, buf, sizeof(buf)), "STATUS=sampling 24 CPUs every 1.0 s");
	assert_string_equal(next_message(f, buf, sizeof(buf)), "WATCHDOG=1");
	assert_string_equal(next_message(f, buf, sizeof(buf)), "STOPPING=1");
}

static void test_status_one_line(void **state)
{
	struct notify_fixture *f = *state;
	char buf[512];

	assert_true(service_status("first line\nREADY=1") > 0);
	assert_string_equal(next_message(f, buf, sizeof(buf)), "STATUS=first line");
}

static void test_reloading(void **state)
{
	struct notify_fixture *f = *state;
	uint64_t before = monotonic_usec(), after, usec;
	char buf[512], *end;

	assert_true(service_reloading() > 0);
	after = monotonic_usec();
	next_message(f, buf, sizeof(buf));
	assert_true(strncmp(buf, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0);
	usec = strtoull(buf + 27, &end, 10);
	assert_string_equal(end, "");
	assert_true(usec >= before && usec <= after);
}

static void test_no_notify_socket(void **state)
{
	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(service_ready(), 0);
	assert_int_equal(service_status("x"), 0);
	assert_int_equal(service_watchdog_ping(), 0);
	assert_int_equal(service_stopping(), 0);
	assert_int_equal(service_reloading(), 0);
}

static void test_watchdog_interval(void **state)
{
	static const struct {
		const char *name;
		const char *usec;
		int pid_delta;          /* WATCHDOG_PID = getpid() + this; -1000000: unset */
		uint64_t want;
	} rows[] = {
		{ "unset", NULL, 0, 0 },
		{ "ours", "30000000", 0, 30000000 },
		{ "no pid given", "15000000", -1000000, 15000000 },
		{ "other process", "30000000", 1, 0 },
		{ "garbage", "soon", 0, 0 },
	};
	char pid[32];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("watchdog %s\n", rows[i].name);
		unsetenv("WATCHDOG_USEC");
		unsetenv("WATCHDOG_PID");
		if (rows[i].usec)
			setenv("WATCHDOG_USEC", rows[i].usec, 1);
		if (rows[i].pid_delta != -1000000) {
			snprintf(pid, sizeof(pid), "%d", (int)getpid() + rows[i].pid_delta);
			setenv("WATCHDOG_PID", pid, 1);
		}
		assert_int_equal(service_watchdog_interval_usec(), rows[i].want);
	}
	unsetenv("WATCHDOG_USEC");
	unsetenv("WATCHDOG_PID");
}

/* --- socket activation -------------------------------------------------- */

static int tcp_socket(int do_listen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (do_listen)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* Put fds on 3, 4, ... as systemd does and announce them to ourselves. */
static void pass_fds(const int *fds, int n)
{
	int high[4];
	char buf[32];

	/* Move them out of the way first: a new socket may itself be on fd 3. */
	for (int i = 0; i < n; i++) {
		high[i] = fcntl(fds[i], F_DUPFD, 20);
		assert_true(high[i] >= 20);
		close(fds[i]);
	}
	for (int i = 0; i < n; i++) {
		assert_int_equal(dup2(high[i], 3 + i), 3 + i);
		close(high[i]);
	}
	snprintf(buf, sizeof(buf), "%d", n);
	setenv("LISTEN_FDS", buf, 1);
	snprintf(buf, sizeof(buf), "%d", (int)getpid());
	setenv("LISTEN_PID", buf, 1);
}

static void close_passed(int n)
{
	for (int i = 0; i < n; i++)
		close(3 + i);
}

static void test_listen_none(void **state)
{
	char err[256] = "";
	int fd = -1;

	(void)state;
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	assert_int_equal(service_listen_fd(&fd, err, sizeof(err)), -ENOENT);
	assert_int_equal(fd, -1);
}

static void test_listen_one(void **state)
{
	int fds[1] = { tcp_socket(1) };
	char err[256] = "";
	int fd = -1;

	(void)state;
	pass_fds(fds, 1);
	assert_int_equal(service_listen_fd(&fd, err, sizeof(err)), 0);
	assert_int_equal(fd, 3);
	assert_null(getenv("LISTEN_FDS"));
	assert_null(getenv("LISTEN_PID"));
	assert_true(fcntl(3, F_GETFD) & FD_CLOEXEC);
	close_passed(1);
}

static void test_listen_other_pid(void **state)
{
	int fds[1] = { tcp_socket(1) };
	char err[256] = "", pid[32];
	int fd = -1;

	(void)state;
	pass_fds(fds, 1);
	snprintf(pid, sizeof(pid), "%d", (int)getpid() + 1);
	setenv("LISTEN_PID", pid, 1);
	assert_int_equal(service_listen_fd(&fd, err, sizeof(err)), -ENOENT);
	close_passed(1);
}

static void test_listen_refused(void **state)
{
	char err[256], want[256];
	int fd = -1, fds[2];

	(void)state;
	fds[0] = tcp_socket(1);
	fds[1] = tcp_socket(1);
	pass_fds(fds, 2);
	assert_int_equal(service_listen_fd(&fd, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "socket activation: 2 sockets passed, expected exactly one "
			    "listening TCP socket (one ListenStream= in uncored.socket)");
	close_passed(2);

	fds[0] = tcp_socket(0);
	pass_fds(fds, 1);
	assert_int_equal(service_listen_fd(&fd, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "socket activation: fd 3 is not a listening TCP socket, "
		 "expected ListenStream= with an address or port");
	assert_string_equal(err, want);
	close_passed(1);

	fds[0] = socket(AF_UNIX, SOCK_DGRAM, 0);
	pass_fds(fds, 1);
	assert_int_equal(service_listen_fd(&fd, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, want);
	close_passed(1);
	assert_int_equal(fd, -1);
}

/* fds 3 and 4 are borrowed by the activation tests; keep whatever was there. */
static int saved[2] = { -1, -1 };

static int activation_setup(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		if (fcntl(3 + i, F_GETFD) >= 0)
			saved[i] = fcntl(3 + i, F_DUPFD_CLOEXEC, 10);
	return 0;
}

static int activation_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++)
		if (saved[i] >= 0) {
			dup2(saved[i], 3 + i);
			close(saved[i]);
		}
	return 0;
}

int main(void)
{
	const struct CMUnitTest notify[] = {
		cmocka_unit_test_setup_teardown(test_notify_sequence, notify_setup, notify_teardown),
		cmocka_unit_test_setup_teardown(test_status_one_line, notify_setup, notify_teardown),
		cmocka_unit_test_setup_teardown(test_reloading, notify_setup, notify_teardown),
		cmocka_unit_test(test_no_notify_socket),
		cmocka_unit_test(test_watchdog_interval),
	};
	const struct CMUnitTest activation[] = {
		cmocka_unit_test(test_listen_none),
		cmocka_unit_test(test_listen_one),
		cmocka_unit_test(test_listen_other_pid),
		cmocka_unit_test(test_listen_refused),
	};
	int failed = cmocka_run_group_tests_name("notify", notify, NULL, NULL);

	failed += cmocka_run_group_tests_name("activation", activation, activation_setup,
					      activation_teardown);
	return failed;
}
