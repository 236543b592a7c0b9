/*
 * Listen addresses: the one parser of "A.B.C.D:PORT" and "[IPV6]:PORT"
 * (numeric addresses only, no name lookup), for the configuration and for
 * binding, and the one formatter of what was bound.  Pure: no sockets are
 * opened here.
 */
#ifndef UNCORED_LISTEN_ADDR_H
#define UNCORED_LISTEN_ADDR_H

#include <stddef.h>
#include <sys/socket.h>

/*
 * Parse text into a socket address whose port is from min_port to 65535
 * (the configuration asks for 1, binding accepts 0 for "any free port").
 * Returns 0, or -EINVAL with what was wrong and what is expected in err,
 * for example "an IPv6 address goes in brackets, as in '[::1]:9796', got
 * '::1:9796'".  ret_sa and ret_len may be NULL to only check.
 */
int listen_addr_parse(const char *text, unsigned min_port, struct sockaddr_storage *ret_sa,
		      socklen_t *ret_len, char *err, size_t errlen);

/*
 * Format sa the way listen_addr_parse() reads it ("127.0.0.1:9796",
 * "[::]:9796"; an IPv4-mapped IPv6 address as IPv4).  Returns buf, or
 * "?" for a family other than IPv4 and IPv6.
 */
const char *listen_addr_format(const struct sockaddr_storage *sa, char *buf, size_t len);

#endif
