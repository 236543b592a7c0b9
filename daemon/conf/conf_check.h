/*
 * The start-up checks a configuration can be put through without binding
 * a socket or opening the hardware: the user to drop to exists, and so does
 * the server's user where the file names one, the listen
 * address parses and is one of this machine's and no socket listens on it
 * yet, root is a directory, the state file and its directory are ones
 * start-up would trust, and max_connections fits the file descriptor
 * limit.  --check-config, start-up (before it touches any register) and a
 * reload run them, so a file that passes one passes the others.  Each
 * failure says where the value came from.  Non-logging.
 */
#ifndef UNCORED_CONF_CHECK_H
#define UNCORED_CONF_CHECK_H

#include "conf.h"

/* The checks, for the what and from_options masks. */
enum {
	CONF_CHECK_USER = 1 << 0,
	CONF_CHECK_LISTEN = 1 << 1,
	CONF_CHECK_ROOT = 1 << 2,
	CONF_CHECK_STATE_FILE = 1 << 3,
	CONF_CHECK_PORT = 1 << 4,      /* no socket listens on the listen address now */
	CONF_CHECK_FDS = 1 << 5,       /* max_connections fits RLIMIT_NOFILE's hard limit */
	CONF_CHECK_SERVER_USER = 1 << 6, /* a server_user the file sets exists and is not root */
	CONF_CHECK_ALL = (1 << 7) - 1,
};

/*
 * CONF_CHECK_FDS: whether the HTTP server could serve max_connections
 * within RLIMIT_NOFILE, by the rule its start applies.  Declared here and
 * implemented by the HTTP front (http.c), which knows what a connection
 * costs.  Returns 0, or -EMFILE with a sentence in err.
 */
int conf_check_fds(unsigned max_connections, char *err, size_t errlen);

/*
 * Run the checks in what on conf, which was read from path (NULL: the
 * built-in defaults).  Every failure is added to errs (not reset first) as
 * PATH:LINE: KEY: message, LINE being where the key is set in path; a
 * value that is the default has no line; for a key in from_options the
 * value came from the command line and the error names the option
 * (--listen, --root).  Returns the number of failures added.
 */
int conf_check(const struct conf *conf, const char *path, unsigned what, unsigned from_options,
	       struct conf_errors *errs);

/*
 * Where key's value comes from, for an error found later at start-up:
 * "PATH:LINE: KEY" when path sets it, "PATH: KEY (the default)" when it
 * does not, "--OPTION" when from_option, into buf.  Returns buf.
 */
const char *conf_check_where(const char *path, const char *key, int from_option, char *buf,
			     size_t len);

#endif
