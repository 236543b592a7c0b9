/*
 * conf_check: start-up's checks without the socket or the hardware, each
 * failure located at the key's FILE:LINE, at the option that set it, or
 * marked as the default value.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"
#include "conf_check.h"
#include "helpers.h"

static char dir[256], path[512], text[2048], want[2048], line[600];
static struct conf conf;
static struct conf_errors errs;

static int setup(void **state)
{
	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/uncored.conf", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	helpers_rmtree(dir);
	return 0;
}

static void load(void)
{
	helpers_write_file(path, text);
	assert_int_equal(conf_load(path, &conf, &errs), 0);
	errs.n = 0;
}

static const char *error(int i)
{
	return conf_error_format(&errs.list[i], line, sizeof(line));
}

static void a_good_file_passes(void **state)
{
	(void)state;
	snprintf(text, sizeof(text), "[daemon]\nuser = root\nlisten = 127.0.0.1:9\nroot = %s\n"
		 "state_file = %s/ledger\n", dir, dir);
	load();
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_ALL, 0, &errs), 0);
	assert_int_equal(errs.n, 0);
}

static void failures_are_located(void **state)
{
	char sub[600];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(text, sizeof(text), "[daemon]\nuser = no-such-user-here\n\nlisten = 192.0.2.1:9\n"
		 "root = %s/missing\nstate_file = %s\n", dir, sub);
	load();
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_ALL, 0, &errs), 4);
	snprintf(want, sizeof(want), "%s:2: user: no user 'no-such-user-here' on this machine "
		 "(create it, for example with systemd-sysusers)", path);
	assert_string_equal(error(0), want);
	snprintf(want, sizeof(want), "%s:4: listen: 192.0.2.1 is not an address of this machine",
		 path);
	assert_string_equal(error(1), want);
	snprintf(want, sizeof(want), "%s:5: root: %s/missing: No such file or directory", path, dir);
	assert_string_equal(error(2), want);
	snprintf(want, sizeof(want), "%s:6: state_file: %s: not a regular file, so it is not "
		 "trusted and not replayed", path, sub);
	assert_string_equal(error(3), want);
}

/*
 * server_user, where the file sets it, must exist and not be root; unset
 * or empty it is the default, which falls back to nobody at start.
 */
static void server_user_is_checked_where_set(void **state)
{
	static const struct {
		const char *text, *error; /* error: after "PATH:" */
	} cases[] = {
		{ "user = root\n\nserver_user = no-such-user-here\n",
		  "4: server_user: no user 'no-such-user-here' on this machine (create it, for "
		  "example with systemd-sysusers)" },
		{ "server_user = root\n", "2: server_user: the server must not run as root; name "
					  "another user" },
		{ "server_user = nobody\n", NULL },
		{ "server_user =\n", NULL },
		{ "", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		errs.n = 0;
		snprintf(text, sizeof(text), "[daemon]\n%s", cases[i].text);
		load();
		assert_int_equal(conf_check(&conf, path, CONF_CHECK_SERVER_USER, 0, &errs),
				 cases[i].error ? 1 : 0);
		if (cases[i].error) {
			snprintf(want, sizeof(want), "%s:%s", path, cases[i].error);
			assert_string_equal(error(0), want);
		}
	}
}

static void options_and_defaults_are_named(void **state)
{
	(void)state;
	snprintf(text, sizeof(text), "[daemon]\nuser = root\nlisten = 127.0.0.1:9\n");
	load();
	snprintf(conf.listen, sizeof(conf.listen), "[2001:db8::1]:9");
	snprintf(conf.root, sizeof(conf.root), "%s/missing", dir);
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_LISTEN | CONF_CHECK_ROOT,
				    CONF_CHECK_LISTEN | CONF_CHECK_ROOT, &errs), 2);
	assert_string_equal(error(0), "--listen: 2001:db8::1 is not an address of this machine");
	snprintf(want, sizeof(want), "--root: %s/missing: No such file or directory", dir);
	assert_string_equal(error(1), want);
	errs.n = 0;
	assert_int_equal(conf_check(&conf, NULL, CONF_CHECK_ROOT, 0, &errs), 1);
	snprintf(want, sizeof(want), "(built-in defaults): root: %s/missing: No such file or "
		 "directory (the default value)", dir);
	assert_string_equal(error(0), want);
}

static void untrusted_state_directories_are_refused(void **state)
{
	char sub[600];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/open", dir);
	assert_int_equal(mkdir(sub, 0777), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	snprintf(text, sizeof(text), "[daemon]\nstate_file = %s/ledger\n", sub);
	load();
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_STATE_FILE, 0, &errs), 1);
	snprintf(want, sizeof(want), "%s:2: state_file: directory %s: writable by group or "
		 "others, so the state file in it is not trusted", path, sub);
	assert_string_equal(error(0), want);
	/* A missing directory is created at start-up in its (trusted) parent. */
	snprintf(text, sizeof(text), "[daemon]\nstate_file = %s/new/ledger\n", dir);
	load();
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_STATE_FILE, 0, &errs), 0);
}

/* A port a socket listens on already is refused, as are more connections than fds allow. */
static void a_busy_port_and_too_many_connections_are_refused(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct rlimit rl;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(text, sizeof(text), "[daemon]\nlisten = 127.0.0.1:%u\n", ntohs(sa.sin_port));
	load();
	/* Bound but not listening: free as far as a start can tell. */
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_PORT, 0, &errs), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_PORT, 0, &errs), 1);
	snprintf(want, sizeof(want), "%s:2: listen: 127.0.0.1:%u is in use: a socket listens on "
		 "port %u there already (/proc/net/tcp)", path, ntohs(sa.sin_port),
		 ntohs(sa.sin_port));
	assert_string_equal(error(0), want);
	errs.n = 0;
	snprintf(text, sizeof(text), "[daemon]\nlisten = 0.0.0.0:%u\n", ntohs(sa.sin_port));
	load();
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_PORT, 0, &errs), 1);
	close(fd);
	errs.n = 0;
	conf.max_connections = 64;
	assert_int_equal(conf_check(&conf, path, CONF_CHECK_FDS, 0, &errs), 0);
	conf.max_connections = 10000000;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < 20000000) {
		assert_int_equal(conf_check(&conf, path, CONF_CHECK_FDS, 0, &errs), 1);
		assert_non_null(strstr(error(0), "max_connections = 10000000 needs "));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_good_file_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(a_busy_port_and_too_many_connections_are_refused, setup,
						teardown),
		cmocka_unit_test_setup_teardown(failures_are_located, setup, teardown),
		cmocka_unit_test_setup_teardown(options_and_defaults_are_named, setup, teardown),
		cmocka_unit_test_setup_teardown(server_user_is_checked_where_set, setup, teardown),
		cmocka_unit_test_setup_teardown(untrusted_state_directories_are_refused, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
