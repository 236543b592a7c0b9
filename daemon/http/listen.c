/*
 * Binding the listening socket (http_bind, http.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>

#include "http.h"

/* Split "A.B.C.D:PORT" or "[V6]:PORT" into a socket address. */
/* Split "A.B.C.D:PORT" or "[V6]:PORT" into a socket address. */
static int parse_listen(const char *address, struct sockaddr_storage *ret_sa, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(address, ':');
	char *end;
	unsigned long port;
	size_t hlen;

	if (!colon || colon == address || colon[1] == '\0')
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port > 65535 || colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	hlen = (size_t)(colon - address);
	if (hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, address, hlen);
	host[hlen] = '\0';
	memset(ret_sa, 0, sizeof(*ret_sa));
	if (host[0] == '[' && hlen > 2 && host[hlen - 1] == ']') {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret_sa;

		host[hlen - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &sin6->sin6_addr) != 1)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*sin6);
		return 0;
	}
	struct sockaddr_in *sin = (struct sockaddr_in *)ret_sa;

	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		return -EINVAL;
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	*ret_len = sizeof(*sin);
	return 0;
}

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

	if (parse_listen(address, &sa, &sa_len) < 0) {
		snprintf(err, errlen, "listen '%s': expected A.B.C.D:PORT or [IPV6]:PORT "
			 "with a numeric address and a port from 0 to 65535", address);
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
