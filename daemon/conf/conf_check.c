/*
 * The start-up checks that need neither a socket nor the hardware; see
 * conf_check.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf_check.h"
#include "conf_file.h"
#include "state_file.h"
#include "listen_addr.h"

static const char *option_of(const char *key)
{
	return strcmp(key, "listen") == 0 ? "--listen" : strcmp(key, "root") == 0 ? "--root" : key;
}

static void add(struct conf_errors *errs, const char *path, const char *key, bool from_option,
		const char *fmt, ...)
{
	struct conf_error *e = errs->n < CONF_MAX_ERRORS ? &errs->list[errs->n] : NULL;
	va_list ap;

	errs->n++;
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
	if (from_option) {
		snprintf(e->file, sizeof(e->file), "%s", option_of(key));
	} else {
		snprintf(e->file, sizeof(e->file), "%s", path ? path : "(built-in defaults)");
		snprintf(e->key, sizeof(e->key), "%s", key);
		e->line = path ? conf_file_key_line(path, "daemon", key) : 0;
	}
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	if (!from_option && e->line == 0) {
		size_t n = strlen(e->message);

		snprintf(e->message + n, sizeof(e->message) - n, " (the default value)");
	}
}

static int check_user(const char *user, char *err, size_t errlen)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int r;

	if (user[0] == '\0' || strcmp(user, "root") == 0)
		return 0;
	r = getpwnam_r(user, &pw, buf, sizeof(buf), &found);
	if (r != 0) {
		snprintf(err, errlen, "cannot look up user '%s': %s", user, strerror(r));
		return -r;
	}
	if (!found) {
		snprintf(err, errlen, "no user '%s' on this machine (create it, for example with "
			 "systemd-sysusers)", user);
		return -ENOENT;
	}
	return 0;
}

/*
 * server_user as path sets it: a user of this machine, not root.  Not set
 * (or empty), it is the default, which the package creates and for which
 * the server runs as nobody elsewhere (privsep_server_user()): nothing to
 * check.  Set, a name that does not exist is a mistake, not a fallback.
 */
static int check_server_user(const char *path, const char *user, char *err, size_t errlen)
{
	if (!path || user[0] == '\0' || conf_file_key_line(path, "daemon", "server_user") <= 0)
		return 0;
	if (strcmp(user, "root") == 0) {
		snprintf(err, errlen, "the server must not run as root; name another user");
		return -EINVAL;
	}
	return check_user(user, err, errlen);
}

/* Whether addr (family AF_INET or AF_INET6) belongs to one of this machine's interfaces. */
static bool is_local(int family, const void *addr)
{
	struct ifaddrs *list, *i;
	bool found = false;

	if (getifaddrs(&list) < 0)
		return true;   /* cannot tell: leave it to the bind */
	for (i = list; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family)
			continue;
		if (family == AF_INET)
			found = memcmp(&((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, addr,
				       sizeof(struct in_addr)) == 0;
		else
			found = memcmp(&((struct sockaddr_in6 *)(void *)i->ifa_addr)->sin6_addr, addr,
				       sizeof(struct in6_addr)) == 0;
	}
	freeifaddrs(list);
	return found;
}

/* The address parses (listen_addr.h, port 0 allowed as for binding) and is this machine's. */
static int check_listen(const char *listen, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN];
	struct sockaddr_storage sa;
	void *addr;
	int family;

	if (listen_addr_parse(listen, 0, &sa, NULL, err, errlen) < 0)
		return -EINVAL;
	family = sa.ss_family;
	addr = family == AF_INET ? (void *)&((struct sockaddr_in *)&sa)->sin_addr
				 : (void *)&((struct sockaddr_in6 *)&sa)->sin6_addr;
	inet_ntop(family, addr, host, sizeof(host));
	if (family == AF_INET) {
		uint32_t a = ntohl(*(uint32_t *)(void *)addr);

		if (a == INADDR_ANY || (a >> 24) == 127)
			return 0;
	} else if (IN6_IS_ADDR_UNSPECIFIED((struct in6_addr *)(void *)addr) ||
		   IN6_IS_ADDR_LOOPBACK((struct in6_addr *)(void *)addr)) {
		return 0;
	}
	if (!is_local(family, addr)) {
		snprintf(err, errlen, "%s is not an address of this machine", host);
		return -EADDRNOTAVAIL;
	}
	return 0;
}

/*
 * Whether a listening TCP socket in the kernel's table (/proc/net/tcp or
 * tcp6, lines "sl: ADDR:PORT REMOTE STATE ...", the address as the raw
 * 32-bit words in hex, state 0A for LISTEN) holds port on addr (len
 * bytes: 4 or 16).  A socket on the wildcard address holds the port on
 * every address, and a wildcard addr conflicts with any.
 */
static bool listed_listening(const char *table, const void *addr, size_t len, unsigned port)
{
	static const unsigned char zero[16];
	FILE *fp = fopen(table, "re");
	char line[512], hex[33];
	bool found = false;

	if (!fp)
		return false;   /* cannot tell: the bind will */
	while (!found && fgets(line, sizeof(line), fp)) {
		uint32_t words[4];
		unsigned p, state;

		if (sscanf(line, " %*d: %32[0-9A-Fa-f]:%x %*s %x", hex, &p, &state) != 3 ||
		    strlen(hex) != len * 2 || p != port || state != 0x0a)
			continue;
		for (size_t w = 0; w < len / 4; w++) {
			char part[9];

			memcpy(part, hex + 8 * w, 8);
			part[8] = '\0';
			words[w] = (uint32_t)strtoul(part, NULL, 16);
		}
		found = memcmp(words, addr, len) == 0 || memcmp(words, zero, len) == 0 ||
			memcmp(addr, zero, len) == 0;
	}
	fclose(fp);
	return found;
}

/* No socket listens on the listen address yet (port 0: any free port will do). */
static int check_port(const char *listen, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	bool v4 = false, busy;
	unsigned port;

	if (listen_addr_parse(listen, 0, &sa, NULL, err, errlen) < 0)
		return -EINVAL;
	v4 = sa.ss_family == AF_INET;
	port = ntohs(v4 ? ((struct sockaddr_in *)&sa)->sin_port :
		     ((struct sockaddr_in6 *)&sa)->sin6_port);
	if (port == 0)
		return 0;
	busy = v4 ? listed_listening("/proc/net/tcp", &((struct sockaddr_in *)&sa)->sin_addr, 4, port)
		  : listed_listening("/proc/net/tcp6", &((struct sockaddr_in6 *)&sa)->sin6_addr, 16,
				     port);
	if (busy) {
		snprintf(err, errlen, "%s is in use: a socket listens on port %u there already "
			 "(/proc/net/tcp%s)", listen, port, v4 ? "" : "6");
		return -EADDRINUSE;
	}
	return 0;
}

static int check_root(const char *root, char *err, size_t errlen)
{
	struct stat st;

	if (stat(root, &st) < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", root, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", root);
		return -ENOTDIR;
	}
	return 0;
}

int conf_check(const struct conf *conf, const char *path, unsigned what, unsigned from_options,
	       struct conf_errors *errs)
{
	static const struct {
		unsigned bit;
		const char *key;
	} checks[] = {
		{ CONF_CHECK_USER, "user" }, { CONF_CHECK_LISTEN, "listen" },
		{ CONF_CHECK_ROOT, "root" }, { CONF_CHECK_STATE_FILE, "state_file" },
		{ CONF_CHECK_PORT, "listen" }, { CONF_CHECK_FDS, "max_connections" },
		{ CONF_CHECK_SERVER_USER, "server_user" },
	};
	int before = errs->n;
	bool listen_refused = false;

	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		char err[4400] = "";
		int r = 0;

		if (!(what & checks[i].bit))
			continue;
		switch (checks[i].bit) {
		case CONF_CHECK_USER: r = check_user(conf->user, err, sizeof(err)); break;
		case CONF_CHECK_LISTEN: r = check_listen(conf->listen, err, sizeof(err)); break;
		case CONF_CHECK_ROOT: r = check_root(conf->root, err, sizeof(err)); break;
		case CONF_CHECK_PORT:   /* a listen address check_listen refused once is enough */
			if (!listen_refused)
				r = check_port(conf->listen, err, sizeof(err));
			break;
		case CONF_CHECK_FDS: r = conf_check_fds(conf->max_connections, err, sizeof(err)); break;
		case CONF_CHECK_SERVER_USER:
			r = check_server_user(path, conf->server_user, err, sizeof(err));
			break;
		default:   /* "none": no journal, on purpose (conf.h) */
			if (strcmp(conf->state_file, "none") != 0)
				r = state_file_check_path(conf->state_file, err, sizeof(err));
			break;
		}
		if (r < 0 && checks[i].bit == CONF_CHECK_LISTEN)
			listen_refused = true;
		if (r < 0)
			add(errs, path, checks[i].key,
			    from_options & (checks[i].bit == CONF_CHECK_PORT ? CONF_CHECK_LISTEN :
					    checks[i].bit), "%s", err);
	}
	return errs->n - before;
}

const char *conf_check_where(const char *path, const char *key, int from_option, char *buf,
			     size_t len)
{
	int line = path && !from_option ? conf_file_key_line(path, "daemon", key) : 0;

	if (from_option)
		snprintf(buf, len, "%s", option_of(key));
	else if (line > 0)
		snprintf(buf, len, "%s:%d: %s", path, line, key);
	else
		snprintf(buf, len, "%s: %s (the default)", path ? path : "(built-in defaults)", key);
	return buf;
}
