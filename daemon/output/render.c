/*
 * Per-snapshot cache of formatted and compressed documents; see render.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "prom.h"
#include "gzip.h"
#include "history.h"
#include "render.h"
#include "strbuf.h"

_Static_assert(RENDER_N_DOCS * 2 <= SNAPSHOT_N_RENDERED, "snapshot has a slot per document and encoding");

static struct snapshot_bytes *bytes_new(const char *data, size_t len)
{
	struct snapshot_bytes *b = render_bytes_new(len);

	if (b)
		memcpy(b->data, data, len);
	return b;
}

/* Format doc into a fresh block. */
static int format(struct snapshot *s, enum render_doc doc, struct snapshot_bytes **ret)
{
	struct strbuf sb;
	int r;

	if (doc == RENDER_HISTORY) {
		const char *text;
		size_t len;

		if (!s->history)
			return -ENOENT;
		r = history_doc_text(s->history, &text, &len);
		if (r < 0)
			return r;
		*ret = bytes_new(text, len);
		return *ret ? 0 : -ENOMEM;
	}
	strbuf_init(&sb);
	r = doc == RENDER_METRICS ? prom_write(s, &sb) :
	    doc == RENDER_OPENMETRICS ? prom_write_openmetrics(s, &sb) :
	    doc == RENDER_SNAPSHOT ? json_write_snapshot(s, &sb) : json_write_episodes(s, &sb);
	if (r == 0 && sb.failed)
		r = -ENOMEM;
	if (r == 0) {
		*ret = bytes_new(sb.buf ? sb.buf : "", sb.len);
		if (!*ret)
			r = -ENOMEM;
	}
	strbuf_free(&sb);
	return r;
}

static int compress(const struct snapshot_bytes *plain, struct snapshot_bytes **ret)
{
	char *gz;
	size_t len;
	int r = gzip_compress(plain->data, plain->len, &gz, &len);

	if (r < 0)
		return r;
	*ret = bytes_new(gz, len);
	free(gz);
	return *ret ? 0 : -ENOMEM;
}

static render_fetch_fn *fetch_hook;

void render_set_fetch(render_fetch_fn *fetch)
{
	fetch_hook = fetch;
}

struct snapshot_bytes *render_bytes_new(size_t len)
{
	struct snapshot_bytes *b = malloc(sizeof(*b) + len + 1);

	if (b) {
		b->len = len;
		b->data[len] = '\0';
	}
	return b;
}

void render_store(struct snapshot *s, enum render_doc doc, bool gzip, struct snapshot_bytes *b)
{
	_Atomic(struct snapshot_bytes *) *slot = &s->rendered[doc * 2 + gzip];
	struct snapshot_bytes *expected = NULL;

	if (!atomic_compare_exchange_strong(slot, &expected, b))
		free(b);
}

bool render_has(struct snapshot *s, enum render_doc doc, bool gzip)
{
	return atomic_load(&s->rendered[doc * 2 + gzip]) != NULL;
}

/* The cached block of slot, made by the first caller; a racing loser frees its copy. */
static int cached(struct snapshot *s, enum render_doc doc, bool gzip, struct snapshot_bytes **ret)
{
	_Atomic(struct snapshot_bytes *) *slot = &s->rendered[doc * 2 + gzip];
	struct snapshot_bytes *b = atomic_load(slot), *expected = NULL;
	int r;

	if (b) {
		*ret = b;
		return 0;
	}
	if (fetch_hook) {
		r = fetch_hook(s, doc, gzip);
		b = atomic_load(slot);
		if (r == 0 && !b)
			r = -EIO;
		if (r < 0)
			return r;
		*ret = b;
		return 0;
	}
	if (gzip) {
		struct snapshot_bytes *plain;

		r = cached(s, doc, false, &plain);
		if (r == 0)
			r = compress(plain, &b);
	} else {
		r = format(s, doc, &b);
	}
	if (r < 0)
		return r;
	if (!atomic_compare_exchange_strong(slot, &expected, b)) {
		free(b);
		b = expected;
	}
	*ret = b;
	return 0;
}

/* s's cached block of doc in that encoding, taken out of s, or NULL. */
static struct snapshot_bytes *take_cached(struct snapshot *s, enum render_doc doc, bool gzip)
{
	return atomic_exchange(&s->rendered[doc * 2 + gzip], NULL);
}

int render_take(struct snapshot *s, enum render_doc doc, bool gzip, struct snapshot_bytes **ret)
{
	struct snapshot_bytes *plain;
	int r;

	*ret = take_cached(s, doc, gzip);
	if (*ret)
		return 0;
	plain = take_cached(s, doc, false);
	r = plain ? 0 : format(s, doc, &plain);
	if (r < 0 || !gzip) {
		*ret = r < 0 ? NULL : plain;
		return r;
	}
	r = compress(plain, ret);
	free(plain);
	return r;
}

int render_get(struct snapshot *s, enum render_doc doc, bool gzip, const char **ret_body,
	       size_t *ret_len)
{
	struct snapshot_bytes *b;
	int r = cached(s, doc, gzip, &b);

	if (r < 0)
		return r;
	*ret_body = b->data;
	*ret_len = b->len;
	return 0;
}

const char *render_content_type(enum render_doc doc)
{
	return doc == RENDER_METRICS ? PROM_CONTENT_TYPE :
	       doc == RENDER_OPENMETRICS ? OPENMETRICS_CONTENT_TYPE : JSON_CONTENT_TYPE;
}
