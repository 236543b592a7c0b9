/*
 * Snapshot to Prometheus text exposition format 0.0.4 (SPEC §5).  Pure.
 */
#ifndef UNCORED_FMT_PROM_H
#define UNCORED_FMT_PROM_H

#include "snapshot.h"
#include "strbuf.h"

#define FMT_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Append the exposition of s to out: every family with HELP and TYPE,
 * families in a fixed order, absent hardware omitted.  Returns 0, or
 * -ENOMEM when out failed.
 */
int fmt_prom_write(const struct snapshot *s, struct strbuf *out);

/*
 * The exposition of s, formatted once per snapshot and kept on it.  The
 * first caller formats and stores the text in s->prom_text with an atomic
 * compare-exchange; a caller that loses the race frees its own copy and
 * uses the stored one, so concurrent scrapes are safe without a lock.
 * *ret_text stays owned by s (freed with it: hold a reference while using
 * it); *ret_len is its length.  s->prom_len is not used, because a length
 * written next to the pointer could not be published atomically with it.
 * Returns 0, or -ENOMEM with nothing cached.
 */
int fmt_prom_cached(struct snapshot *s, const char **ret_text, size_t *ret_len);

#endif
