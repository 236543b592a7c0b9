/*
 * The keeper of the privilege separation (privsep_wire.h): the server's
 * parent, so that the hardware side can always end the server.
 *
 * The server runs as server_user, another uid than the hardware side's, so
 * that it cannot signal the hardware side; for the same reason the
 * hardware side, once it has dropped root, cannot signal the server (kill
 * and pidfd_send_signal check the same uids).  A server that stops or
 * deadlocks would then outlive every attempt to end it.  The server asks
 * for SIGKILL when its parent dies, and its parent is this process.  The
 * kernel checks that signal as one the keeper sends, so the keeper's
 * effective uid is the server's, while its real and saved uids are the
 * hardware side's, so that the hardware side may kill it and the server
 * may not (privdrop_to_keeper()).  Killing the keeper kills the server.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "privdrop.h"
#include "privsep_wire.h"

/* End as the server ended: its exit status, or its signal, without a core dump. */
static _Noreturn void end_as(int status)
{
	int sig;
	sigset_t one;

	if (!WIFSIGNALED(status))
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	sig = WTERMSIG(status);
	/* A core-dumping signal (SIGSYS from the server's filter) dumps nothing of ours. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);   /* the stop signals stay blocked, as inherited */
	raise(sig);
	_exit(128 + sig);
}

void privsep_keeper_main(struct http_options ho, const char *server_user, const char *keeper_user,
			 int fd, struct sample_page_source page, int log_w, int pid_w, pid_t hw)
{
	pid_t me = getpid(), server;
	char err[512];
	int status;

	server = fork();
	if (server == 0) {
		close(pid_w);
		privsep_server_main(ho, server_user, fd, page, log_w, me);
	}
	if (server < 0) {
		log_error("server: fork: %s", strerror(errno));
		_exit(1);
	}
	if (write(pid_w, &server, sizeof(server)) != (ssize_t)sizeof(server))
		_exit(1);                  /* the server dies with us */
	/* Nothing of the daemon's but its standard streams: the server holds the rest. */
	close_range(3, ~0u, 0);
	if (privdrop_to_keeper(keeper_user, server_user, err, sizeof(err)) < 0) {
		log_error("server keeper: %s", err);
		_exit(1);
	}
	/* After the uid change, which clears it; and the hardware side may already be gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != hw)
		_exit(1);
	while (waitpid(server, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	end_as(status);
}
