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

/* The Content-Type of doc. */
const char *render_content_type(enum render_doc doc);

#endif
