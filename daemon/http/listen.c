/*
 * Binding the listening socket (http_bind, http.h), the address parsed by
 * the one listen parser (listen_addr.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>

#include "http.h"
#include "listen_addr.h"

/* Split "A.B.C.D:PORT" or "[V6]:PORT" into a socket address. */
/* After a failed socket call: write "listen 'ADDR': what: why" to err and return -errno. */
static int step_failed(const char *address, const char *what, char *err, size_t errlen)
{
	int r = -errno;

	snprintf(err, errlen, "listen '%s': %s: %s", address, what, strerror(-r));
	return r;
}

int http_bind(const char *address, int *ret_fd, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t sa_len;
	int one = 1, zero = 0, fd, r;
	char why[256];

	if (listen_addr_parse(address, 0, &sa, &sa_len, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "listen '%s': %s", address, why);
		return -EINVAL;
	}
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return step_failed(address, "socket", err, errlen);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0) {
		r = step_failed(address, "SO_REUSEADDR", err, errlen);
		goto fail;
	}
	/* "[::]" is meant to serve IPv4 too, whatever the sysctl default says. */
	if (sa.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0) {
		r = step_failed(address, "IPV6_V6ONLY", err, errlen);
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0) {
		r = step_failed(address, "bind", err, errlen);
		goto fail;
	}
	if (listen(fd, SOMAXCONN) < 0) {
		r = step_failed(address, "listen", err, errlen);
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}
