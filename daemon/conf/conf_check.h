/*
 * The start-up checks a configuration can be put through without binding
 * a socket or opening the hardware: the user to drop to exists, the listen
 * address parses and is one of this machine's, root is a directory, and
 * the state file and its directory are ones start-up would trust.  Both
 * --check-config and start-up run them (start-up before it touches any
 * register), so a file that passes one passes the other.  Each failure
 * says where the value came from.  Non-logging.
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
	CONF_CHECK_ALL = (1 << 4) - 1,
};

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
