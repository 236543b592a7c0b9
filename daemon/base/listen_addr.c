/*
 * The listen address parser.  See listen_addr.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listen_addr.h"

#define EXPECTED "A.B.C.D:PORT or [IPV6]:PORT"

/* Split "A.B.C.D:PORT" or "[V6]:PORT" into host and port; sets *family. */
static int split(const char *value, char *host, size_t hostlen, const char **ret_port, int *family)
{
	const char *end, *port;

	if (value[0] == '[') {
		end = strchr(value, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		value++;
		port = end + 2;
		*family = AF_INET6;
	} else {
		end = strrchr(value, ':');
		if (!end)
			return -EINVAL;
		port = end + 1;
		*family = AF_INET;
	}
	if ((size_t)(end - value) >= hostlen)
		return -ERANGE;
	memcpy(host, value, (size_t)(end - value));
	host[end - value] = '\0';
	*ret_port = port;
	return 0;
}

/* Decimal digits only, at most 65535 and at least min_port. */
static int parse_port(const char *text, unsigned min_port, unsigned *ret)
{
	size_t n = strspn(text, "0123456789");
	unsigned long p;

	if (n == 0 || n > 9 || text[n] != '\0')
		return -EINVAL;
	p = strtoul(text, NULL, 10);
	if (p < min_port || p > 65535)
		return -EINVAL;
	*ret = (unsigned)p;
	return 0;
}

int listen_addr_parse(const char *text, unsigned min_port, struct sockaddr_storage *ret_sa,
		      socklen_t *ret_len, char *err, size_t errlen)
{
	char host[INET6_ADDRSTRLEN + 16] = "";
	struct sockaddr_storage sa;
	struct sockaddr_in *sin = (struct sockaddr_in *)&sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&sa;
	const char *port_text;
	unsigned port;
	int family, r, ok;

	r = split(text, host, sizeof(host), &port_text, &family);
	if (r == -EINVAL) {
		snprintf(err, errlen, "expected " EXPECTED ", got '%s'", text);
		return r;
	}
	if (family == AF_INET && strchr(host, ':')) {
		snprintf(err, errlen, "an IPv6 address goes in brackets, as in '[::1]:9796', got '%s'",
			 text);
		return -EINVAL;
	}
	memset(&sa, 0, sizeof(sa));
	ok = r == 0 && inet_pton(family, host, family == AF_INET ? (void *)&sin->sin_addr
						      : (void *)&sin6->sin6_addr) == 1;
	if (!ok) {
		snprintf(err, errlen, "'%s' is not an %s address (expected " EXPECTED ")",
			 r < 0 ? text : host, family == AF_INET ? "IPv4" : "IPv6");
		return -EINVAL;
	}
	if (parse_port(port_text, min_port, &port) < 0) {
		snprintf(err, errlen, "expected a port from %u to 65535, got '%s'", min_port, port_text);
		return -EINVAL;
	}
	sa.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		sin->sin_port = htons((uint16_t)port);
	else
		sin6->sin6_port = htons((uint16_t)port);
	if (ret_sa)
		*ret_sa = sa;
	if (ret_len)
		*ret_len = family == AF_INET ? sizeof(*sin) : sizeof(*sin6);
	return 0;
}

const char *listen_addr_format(const struct sockaddr_storage *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof(host));
			snprintf(buf, len, "%s:%u", host, ntohs(in6->sin6_port));
		} else {
			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
		}
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}
