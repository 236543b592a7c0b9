/*
 * Unit tests of the server's seccomp filter (sandbox.h).  Each case runs
 * in a forked child (a filter cannot be removed) that installs the filter
 * and reports through its exit code or its death: what serving needs
 * still works, opening a file and creating a socket fail with EACCES,
 * and a call outside the filter (here fork, execve, kill, ptrace, an
 * unknown prctl, perf_event_open) kills the child with SIGSYS, as does a
 * call with an argument the filter refuses: ioctl TIOCSTI, fcntl F_SETOWN,
 * F_SETSIG or O_ASYNC, mmap or mprotect with PROT_EXEC.  A thread started before
 * the filter is filtered too (TSYNC).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sandbox.h"

enum child_result { CHILD_OK, CHILD_INSTALL, CHILD_ALLOWED, CHILD_OPEN, CHILD_SOCKET, CHILD_SURVIVED };

/* Run fn in a child under the filter; returns its wait status. */
static int in_sandbox(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char err[256];

		if (sandbox_install(err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			_exit(CHILD_INSTALL);
		}
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static int serve_like(void)
{
	char in[4];
	void *p;
	struct timespec ts;

	p = malloc(1 << 20);   /* mmap-backed */
	if (!p || clock_gettime(CLOCK_MONOTONIC, &ts) < 0 || prctl(PR_SET_NAME, "t", 0, 0, 0) < 0)
		return CHILD_ALLOWED;
	free(p);
	if (write(2, "", 0) < 0 || getpid() <= 0 || read(0, in, 0) < 0)
		return CHILD_ALLOWED;
	return CHILD_OK;
}

static int open_a_file(void)
{
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);

	return fd < 0 && errno == EACCES ? CHILD_OK : CHILD_OPEN;
}

static int make_a_socket(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	return fd < 0 && errno == EACCES ? CHILD_OK : CHILD_SOCKET;
}

/* What the server does with its sockets and memory: allowed arguments. */
static int serve_args(void)
{
	int n = -1, fl;
	void *m;

	if (ioctl(0, FIONREAD, &n) < 0 && errno != EINVAL && errno != ENOTTY && errno != EBADF)
		return CHILD_ALLOWED;
	fl = fcntl(2, F_GETFL);
	if (fl < 0 || fcntl(2, F_SETFL, fl) < 0 || fcntl(2, F_GETFD) < 0 ||
	    fcntl(2, F_SETFD, FD_CLOEXEC) < 0)
		return CHILD_ALLOWED;
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, 4096, PROT_READ) < 0)
		return CHILD_ALLOWED;
	return CHILD_OK;
}

/* stat() of a path: refused (EACCES), so no file's existence can be probed. */
static int stat_a_path(void)
{
	struct stat st;

	return stat("/etc/passwd", &st) < 0 && errno == EACCES ? CHILD_OK : CHILD_OPEN;
}

/* After a compromise, root through the terminal: push a command into the shell. */
static int call_tiocsti(void)
{
	char c = 'x';

	ioctl(0, TIOCSTI, &c);
	return CHILD_SURVIVED;
}

/* Signal the hardware side by way of a socket: F_SETOWN, F_SETSIG, O_ASYNC. */
static int call_f_setown(void)
{
	fcntl(2, F_SETOWN, getppid());
	return CHILD_SURVIVED;
}

static int call_f_setsig(void)
{
	fcntl(2, F_SETSIG, SIGKILL);
	return CHILD_SURVIVED;
}

static int call_o_async(void)
{
	fcntl(2, F_SETFL, O_NONBLOCK | O_ASYNC);
	return CHILD_SURVIVED;
}

/* Executable memory, mapped or made so. */
static int call_mmap_exec(void)
{
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return CHILD_SURVIVED;
}

static int call_mprotect_exec(void)
{
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m != MAP_FAILED)
		mprotect(m, 4096, PROT_READ | PROT_EXEC);
	return CHILD_SURVIVED;
}

static int call_fork(void)
{
	syscall(SYS_fork);
	return CHILD_SURVIVED;
}

static int call_execve(void)
{
	char *argv[] = { "true", NULL };

	execve("/bin/true", argv, argv + 1);
	return CHILD_SURVIVED;
}

static int call_kill(void)
{
	kill(1, 0);
	return CHILD_SURVIVED;
}

static int call_ptrace(void)
{
	syscall(SYS_ptrace, 0, 0, 0, 0);
	return CHILD_SURVIVED;
}

/* The server never opens perf events; the hardware side does (before it forks none). */
static int call_perf_event_open(void)
{
	syscall(SYS_perf_event_open, NULL, -1, 0, -1, 0);
	return CHILD_SURVIVED;
}

static int call_other_prctl(void)
{
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	return CHILD_SURVIVED;
}

/* The server's keeper kills it by dying: the server cannot take that back. */
static int call_clear_pdeathsig(void)
{
	prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	return CHILD_SURVIVED;
}

static void *thread_main(void *arg)
{
	(void)arg;
	sleep(1);   /* until the filter is in place */
	syscall(SYS_fork);
	return NULL;
}

/* A thread started before the filter is filtered too. */
static int thread_before(void)
{
	return CHILD_SURVIVED;
}

static void test_allowed(void **state)
{
	(void)state;
	int st = in_sandbox(serve_like);

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), CHILD_OK);
}

static void test_refused(void **state)
{
	(void)state;
	int st = in_sandbox(open_a_file);

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), CHILD_OK);
	st = in_sandbox(make_a_socket);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), CHILD_OK);
	st = in_sandbox(stat_a_path);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), CHILD_OK);
}

static void test_allowed_args(void **state)
{
	(void)state;
	int st = in_sandbox(serve_args);

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), CHILD_OK);
}

/* Each argument the filter refuses, in a child of its own: killed with SIGSYS. */
static void test_forbidden_args(void **state)
{
	static const struct {
		const char *what;
		int (*fn)(void);
	} calls[] = {
		{ "ioctl TIOCSTI", call_tiocsti },
		{ "fcntl F_SETOWN", call_f_setown },
		{ "fcntl F_SETSIG", call_f_setsig },
		{ "fcntl F_SETFL O_ASYNC", call_o_async },
		{ "mmap PROT_EXEC", call_mmap_exec },
		{ "mprotect PROT_EXEC", call_mprotect_exec },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int st = in_sandbox(calls[i].fn);

		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
			fail_msg("%s: not refused (wait status 0x%x)", calls[i].what, (unsigned)st);
	}
}

static void test_killed(void **state)
{
	int (*const calls[])(void) = { call_fork, call_execve, call_kill, call_ptrace,
				       call_other_prctl, call_clear_pdeathsig, call_perf_event_open };

	(void)state;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		int st = in_sandbox(calls[i]);

		assert_true(WIFSIGNALED(st));
		assert_int_equal(WTERMSIG(st), SIGSYS);
	}
}

static void test_threads_filtered(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t;
		char err[256];

		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			_exit(CHILD_ALLOWED);
		if (sandbox_install(err, sizeof(err)) < 0)
			_exit(CHILD_INSTALL);
		pthread_join(t, NULL);
		_exit(thread_before());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_killed),
		cmocka_unit_test(test_allowed_args),
		cmocka_unit_test(test_forbidden_args),
		cmocka_unit_test(test_threads_filtered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
