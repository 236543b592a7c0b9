/*
 * Documents made once per snapshot: racing threads share one copy, gzip
 * bodies inflate to the identity body, a snapshot without history says so,
 * a taken document is the caller's alone, and Accept-Encoding is read as
 * RFC 9110 says.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <cmocka.h>

#include "fake_machines.h"
#include "prom.h"
#include "gzip.h"
#include "render.h"
#include "strbuf.h"

struct race {
	struct snapshot *s;
	enum render_doc doc;
	bool gzip;
	const char *body;
	size_t len;
};

static void *get_one(void *arg)
{
	struct race *r = arg;

	if (render_get(r->s, r->doc, r->gzip, &r->body, &r->len) < 0)
		r->body = NULL;
	return NULL;
}

/* Four threads ask at once: all get the same stored copy. */
static void racing_threads_share_one_copy(void **state)
{
	struct snapshot *s = westmere_snapshot();
	struct race r[4];
	pthread_t threads[4];
	struct strbuf direct;

	(void)state;
	for (int gz = 0; gz < 2; gz++) {
		for (int i = 0; i < 4; i++) {
			r[i] = (struct race){ .s = s, .doc = RENDER_METRICS, .gzip = gz };
			assert_int_equal(pthread_create(&threads[i], NULL, get_one, &r[i]), 0);
		}
		for (int i = 0; i < 4; i++)
			assert_int_equal(pthread_join(threads[i], NULL), 0);
		for (int i = 0; i < 4; i++) {
			assert_non_null(r[i].body);
			assert_ptr_equal(r[i].body, r[0].body);
		}
	}
	strbuf_init(&direct);
	assert_int_equal(prom_write(s, &direct), 0);
	assert_int_equal(render_get(s, RENDER_METRICS, false, &r[0].body, &r[0].len), 0);
	assert_int_equal(r[0].len, direct.len);
	assert_memory_equal(r[0].body, direct.buf, direct.len);
	strbuf_free(&direct);
	snapshot_release(s);
}

static char *inflate_all(const char *in, size_t len, size_t *ret_len)
{
	size_t cap = 1 << 20;
	char *out = malloc(cap);
	z_stream zs;

	assert_non_null(out);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	*ret_len = cap - zs.avail_out;
	inflateEnd(&zs);
	return out;
}

/* Every document's gzip body is a gzip stream of exactly its identity body. */
static void gzip_bodies_inflate_to_the_identity_body(void **state)
{
	struct snapshot *s = westmere_snapshot();

	(void)state;
	for (enum render_doc d = RENDER_METRICS; d <= RENDER_EPISODES; d++) {
		const char *plain, *gz;
		size_t plain_len, gz_len, out_len;
		char *out;

		assert_int_equal(render_get(s, d, false, &plain, &plain_len), 0);
		assert_int_equal(render_get(s, d, true, &gz, &gz_len), 0);
		assert_true(gz_len >= 18 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
		out = inflate_all(gz, gz_len, &out_len);
		assert_int_equal(out_len, plain_len);
		assert_memory_equal(out, plain, plain_len);
		free(out);
	}
	snapshot_release(s);
}

static void a_snapshot_without_history_has_no_history_document(void **state)
{
	struct snapshot *s = westmere_snapshot();
	const char *body;
	size_t len;

	(void)state;
	assert_int_equal(render_get(s, RENDER_HISTORY, false, &body, &len), -ENOENT);
	assert_int_equal(render_get(s, RENDER_HISTORY, true, &body, &len), -ENOENT);
	assert_string_equal(render_content_type(RENDER_METRICS), PROM_CONTENT_TYPE);
	snapshot_release(s);
}

/*
 * render_take: the same bytes render_get makes, the caller's, and s keeps
 * none (a body held ahead is handed over, not copied).
 */
static void a_taken_document_is_the_callers_alone(void **state)
{
	struct snapshot *s = westmere_snapshot(), *ref = westmere_snapshot();

	(void)state;
	for (int gz = 0; gz < 2; gz++) {
		struct snapshot_bytes *b;
		const char *body;
		size_t len;

		assert_int_equal(render_take(s, RENDER_METRICS, gz, &b), 0);
		assert_false(render_has(s, RENDER_METRICS, false));
		assert_false(render_has(s, RENDER_METRICS, true));
		assert_int_equal(render_get(ref, RENDER_METRICS, gz, &body, &len), 0);
		assert_int_equal(b->len, len);
		assert_memory_equal(b->data, body, len);
		free(b);
	}
	/* Held ahead: that very block, and s has it no more. */
	{
		struct snapshot_bytes *held, *b = NULL;
		const char *body;
		size_t len;

		assert_int_equal(render_get(s, RENDER_EPISODES, false, &body, &len), 0);
		held = atomic_load(&s->rendered[RENDER_EPISODES * 2]);
		assert_int_equal(render_take(s, RENDER_EPISODES, false, &b), 0);
		assert_ptr_equal(b, held);
		assert_false(render_has(s, RENDER_EPISODES, false));
		free(b);
		assert_int_equal(render_take(s, RENDER_HISTORY, true, &b), -ENOENT);
	}
	snapshot_release(ref);
	snapshot_release(s);
}

static void accept_encoding(void **state)
{
	(void)state;
	assert_false(gzip_accepted(NULL));
	assert_false(gzip_accepted(""));
	assert_false(gzip_accepted("identity"));
	assert_false(gzip_accepted("deflate, br"));
	assert_true(gzip_accepted("gzip"));
	assert_true(gzip_accepted("GZip"));
	assert_true(gzip_accepted("x-gzip"));
	assert_true(gzip_accepted("gzip, deflate"));
	/* What Prometheus sends. */
	assert_true(gzip_accepted("gzip"));
	assert_true(gzip_accepted("deflate,gzip;q=1.0,*;q=0.5"));
	assert_true(gzip_accepted("br;q=1.0, gzip;q=0.8, *;q=0.1"));
	assert_true(gzip_accepted("gzip ; q=0.001"));
	assert_true(gzip_accepted("*"));
	assert_false(gzip_accepted("gzip;q=0"));
	assert_false(gzip_accepted("gzip;q=0.000"));
	assert_false(gzip_accepted("*, gzip;q=0"));
	assert_false(gzip_accepted("*;q=0"));
	assert_false(gzip_accepted("gzip;q=2"));
	assert_false(gzip_accepted("gzip;q=abc"));
	assert_false(gzip_accepted("gzipx"));
	assert_false(gzip_accepted("xgzip"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(racing_threads_share_one_copy),
		cmocka_unit_test(gzip_bodies_inflate_to_the_identity_body),
		cmocka_unit_test(a_snapshot_without_history_has_no_history_document),
		cmocka_unit_test(a_taken_document_is_the_callers_alone),
		cmocka_unit_test(accept_encoding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
