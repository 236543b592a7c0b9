/*
 * gzip (RFC 1952) compression of a whole buffer in memory, through the
 * distribution's zlib, for HTTP bodies sent with Content-Encoding: gzip.
 */
#ifndef UNCORED_GZIP_H
#define UNCORED_GZIP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Compress in[0..len) into a new malloc'd buffer (*ret_out, *ret_len).
 * Returns 0, -ENOMEM, or -EIO when zlib reports an error.
 */
int gzip_compress(const char *in, size_t len, char **ret_out, size_t *ret_len);

/*
 * Whether an Accept-Encoding header value (NULL: absent) allows a gzip
 * body: a "gzip" or "x-gzip" coding, or "*", with a q-value above 0; an
 * explicit "gzip;q=0" refuses it even when "*" allows everything.
 * Codings are matched without regard to case (RFC 9110 §12.5.3).
 */
bool gzip_accepted(const char *accept_encoding);

#endif
