/*
 * The bytes HTTP sends, made once per snapshot: every document
 * (/metrics, /api/v1/snapshot, /api/v1/episodes, /api/v1/history) in each
 * encoding (identity, gzip) is formatted, and compressed, on first use and
 * kept with the snapshot, so further requests for the same snapshot cost a
 * lookup and a send.  Any thread may ask; when two format the same
 * document at once, one result is kept and the other freed.
 */
#ifndef UNCORED_RENDER_H
#define UNCORED_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "snapshot.h"

enum render_doc {
	RENDER_METRICS,     /* Prometheus text (prom_write) */
	RENDER_SNAPSHOT,    /* JSON snapshot (json_write_snapshot) */
	RENDER_EPISODES,    /* JSON episodes (json_write_episodes) */
	RENDER_HISTORY,     /* JSON history (s->history; 503 when absent) */
	RENDER_OPENMETRICS, /* OpenMetrics text with exemplars (prom_write_openmetrics) */
	RENDER_N_DOCS
};

/*
 * The body of doc for s, gzip-compressed when gzip is true, in
 * *ret_body and *ret_len; valid as long as the caller holds its reference to
 * s.  Returns 0, -ENOMEM, -EIO (compression failed) or -ENOENT (the
 * snapshot has no history document).
 */
int render_get(struct snapshot *s, enum render_doc doc, bool gzip, const char **ret_body,
	       size_t *ret_len);

/*
 * The body of doc for s in that encoding in *ret, the caller's to free():
 * taken out of s when s holds it (formatted ahead), else formatted (and
 * compressed) anew; s keeps no copy of it, nor of the identity form a gzip
 * body was made from.  For a process that hands each document on once and
 * has no use for a copy (the hardware side, privsep.h).  The same returns
 * as render_get().
 */
int render_take(struct snapshot *s, enum render_doc doc, bool gzip, struct snapshot_bytes **ret);

/*
 * Where documents come from in a process that holds no values (the
 * privilege-separated server, privsep.h): fetch(s, doc, gzip) gets the
 * bytes of doc for s from whoever formats them and stores them in s with
 * render_store(), then returns 0; or a negative errno (-ENOENT as
 * render_get() answers it, -ESTALE when s is no longer the formatter's,
 * -EPIPE when the formatter is gone).  render_get() calls it when s has no
 * copy yet, instead of formatting.  Set it before any thread reads; NULL
 * (the default) formats in this process.
 */
typedef int render_fetch_fn(struct snapshot *s, enum render_doc doc, bool gzip);
void render_set_fetch(render_fetch_fn *fetch);

/* A block for a body of len bytes (terminated by a NUL after them), to fill and render_store(); NULL on ENOMEM. */
struct snapshot_bytes *render_bytes_new(size_t len);

/*
 * Keep b (taken over) as doc's body for s in that encoding, unless s has
 * one already: then b is freed and the first stored stays.
 */
void render_store(struct snapshot *s, enum render_doc doc, bool gzip, struct snapshot_bytes *b);

/* Whether s has doc's body in that encoding already. */
bool render_has(struct snapshot *s, enum render_doc doc, bool gzip);

/* The Content-Type of doc. */
const char *render_content_type(enum render_doc doc);

#endif
