/*
 * Listen addresses: the one parser of "A.B.C.D:PORT" and "[IPV6]:PORT"
 * (numeric addresses only, no name lookup), for the configuration and for
 * binding.  Pure: no sockets are opened here.
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

#endif
