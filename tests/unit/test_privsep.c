/*
 * Unit tests of the privilege separation's transport (privsep.h): a
 * server forked on a loopback socket answers with the bytes the hardware
 * side formats, asking for each document of a sample once, in the encoding
 * a client asked for, and never before a client asks (a document absent
 * there is absent in the server too, and a request for a sample
 * superseded meanwhile is answered with the newest); it learns of samples
 * from the sample page without being woken, says when it serves (a
 * client is told "no sample yet" until the first), ends with status 0
 * when the transport closes, and its death is noticed on privsep_fd();
 * it answers the liveness check, and a server that stops is found by it
 * and ended, its stop bounded, also while an answer to it is written.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <cmocka.h>

#include "http.h"
#include "gzip.h"
#include "privsep.h"
#include "render.h"
#include "snapshot.h"

static const char *const docs[RENDER_N_DOCS] = {
	[RENDER_METRICS] = "test_metric 42\n",
	[RENDER_SNAPSHOT] = "{\"test\": \"snapshot\"}",
	[RENDER_EPISODES] = "{\"test\": \"episodes\"}",
	/* RENDER_HISTORY absent: no history document */
};

/*
 * A snapshot whose documents are already formatted, in both encodings: the
 * hardware side hands each on (render_take) without formatting anything.
 */
static struct snapshot *fake_snapshot(const char *metrics)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	struct timespec now;

	assert_non_null(s);
	atomic_init(&s->refs, 1);
	clock_gettime(CLOCK_REALTIME, &now);
	s->time = (double)now.tv_sec;
	s->interval_s = 1;
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++) {
		const char *text = i / 2 == RENDER_METRICS ? metrics :
				   i / 2 < RENDER_N_DOCS ? docs[i / 2] : NULL;
		struct snapshot_bytes *b;
		char *gz = NULL;
		size_t len;

		atomic_init(&s->rendered[i], NULL);
		if (!text)
			continue;
		len = strlen(text);
		if (i % 2)   /* the gzip form */
			assert_int_equal(gzip_compress(text, len, &gz, &len), 0);
		b = render_bytes_new(len);
		assert_non_null(b);
		memcpy(b->data, gz ? gz : text, len);
		free(gz);
		atomic_store(&s->rendered[i], b);
	}
	return s;
}

/*
 * The hardware side's main loop (main.c) in a thread: answer the server's
 * requests, counting them, until stop.
 */
struct answerer {
	struct privsep *p;
	int port;
	pthread_t thread;
	atomic_bool stop;
	atomic_int answered;
};

static void *answer_loop(void *arg)
{
	struct answerer *a = arg;

	while (!atomic_load(&a->stop)) {
		struct pollfd pfd = { .fd = privsep_fd(a->p), .events = POLLIN };

		if (poll(&pfd, 1, 20) != 1)
			continue;
		if (!privsep_check(a->p))
			break;
		atomic_fetch_add(&a->answered, 1);
	}
	return NULL;
}

/*
 * The answerer's count once it reached n (or 10 s passed): the client has
 * its answer as the hardware side wrote it, a moment before the count.
 */
static int answered(struct answerer *a, int n)
{
	for (int i = 0; i < 10000 && atomic_load(&a->answered) < n; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return atomic_load(&a->answered);
}

/* GET path over HTTP/1.0 with an extra header line (or ""); the whole response, NUL-terminated, in buf. */
static size_t get_with(int port, const char *path, const char *header, char *buf, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t got = 0;
	char req[256];
	ssize_t n;

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n%s\r\n", path, header);
	assert_int_equal(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	return got;
}

static void get(int port, const char *path, char *buf, size_t len)
{
	get_with(port, path, "", buf, len);
}

static struct privsep *start(int *ret_port)
{
	struct http_options ho = { 0 };
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct privsep *p = NULL;
	char err[256];
	int fd;

	assert_int_equal(http_bind("127.0.0.1:0", &fd, err, sizeof(err)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*ret_port = ntohs(sa.sin_port);
	ho.listen_fd = fd;
	ho.interval_s = 1;
	assert_int_equal(privsep_start(&ho, NULL, NULL, &p, err, sizeof(err)), 0);
	close(fd);
	return p;
}

static void test_serves_published_bytes(void **state)
{
	struct snapshot *s = fake_snapshot("test_metric 42\n"), *local;
	struct answerer a = { 0 };
	char buf[4096], how[160], *end;
	const char *body;
	size_t got, len;
	int port;

	(void)state;
	a.p = start(&port);
	privsep_publish(s, a.p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(a.p, 10000), 0);
	assert_int_equal(pthread_create(&a.thread, NULL, answer_loop, &a), 0);
	/* /healthz needs no document: nothing is asked. */
	get(port, "/healthz", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 200 "));
	assert_int_equal(atomic_load(&a.answered), 0);
	get(port, "/metrics", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 200 "));
	assert_non_null(strstr(buf, "\r\n\r\ntest_metric 42\n"));
	assert_int_equal(answered(&a, 1), 1);
	/* The same document of the same sample again: the server's copy. */
	get(port, "/metrics", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\r\n\r\ntest_metric 42\n"));
	assert_int_equal(answered(&a, 1), 1);
	/* The other encoding is another document, asked for on its own. */
	got = get_with(port, "/metrics", "Accept-Encoding: gzip\r\n", buf, sizeof(buf));
	assert_non_null(strstr(buf, "Content-Encoding: gzip"));
	assert_int_equal(answered(&a, 2), 2);
	/* Byte for byte what this process makes of the same sample. */
	local = fake_snapshot("test_metric 42\n");
	assert_int_equal(render_get(local, RENDER_METRICS, true, &body, &len), 0);
	assert_non_null(end = strstr(buf, "\r\n\r\n"));
	assert_int_equal(got - (size_t)(end + 4 - buf), len);
	assert_memory_equal(end + 4, body, len);
	snapshot_release(local);
	get(port, "/api/v1/episodes", buf, sizeof(buf));
	assert_non_null(strstr(buf, "{\"test\": \"episodes\"}"));
	get(port, "/api/v1/history", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 503 "));
	assert_int_equal(answered(&a, 4), 4);
	/* A new sample: its document is asked for anew. */
	s = fake_snapshot("test_metric 43\n");
	privsep_publish(s, a.p);
	snapshot_release(s);
	for (int i = 0; i < 1000 && !strstr(buf, "test_metric 43"); i++)
		get(port, "/metrics", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\r\n\r\ntest_metric 43\n"));
	assert_int_equal(answered(&a, 5), 5);
	atomic_store(&a.stop, true);
	assert_int_equal(pthread_join(a.thread, NULL), 0);
	assert_true(privsep_alive(a.p));
	assert_true(privsep_stop(a.p, how, sizeof(how)));
	assert_string_equal(how, "exited with status 0");
}

struct getter {
	int port;
	pthread_t thread;
	char buf[4096];
};

static void *get_main(void *arg)
{
	struct getter *g = arg;

	get(g->port, "/metrics", g->buf, sizeof(g->buf));
	return NULL;
}

/*
 * A request for a sample the hardware side no longer holds (a sample came
 * in between) is answered with the newest sample's document.
 */
static void test_superseded_sample(void **state)
{
	struct snapshot *s = fake_snapshot("test_metric 1\n");
	struct answerer a = { 0 };
	struct getter g = { 0 };
	struct pollfd pfd;
	char how[160];

	(void)state;
	a.p = start(&g.port);
	privsep_publish(s, a.p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(a.p, 10000), 0);
	assert_int_equal(pthread_create(&g.thread, NULL, get_main, &g), 0);
	/* The server's request for sample 1 waits on the socket; sample 2 comes. */
	pfd = (struct pollfd){ .fd = privsep_fd(a.p), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	s = fake_snapshot("test_metric 2\n");
	privsep_publish(s, a.p);
	snapshot_release(s);
	assert_int_equal(pthread_create(&a.thread, NULL, answer_loop, &a), 0);
	assert_int_equal(pthread_join(g.thread, NULL), 0);
	assert_non_null(strstr(g.buf, " 200 "));
	assert_non_null(strstr(g.buf, "\r\n\r\ntest_metric 2\n"));
	atomic_store(&a.stop, true);
	assert_int_equal(pthread_join(a.thread, NULL), 0);
	/* Asked once, for sample 1, and answered from sample 2 in that one round. */
	assert_int_equal(answered(&a, 1), 1);
	assert_true(privsep_stop(a.p, how, sizeof(how)));
}

/*
 * The server says it serves before any sample was published (the daemon
 * publishes its first before it waits for that word); until one is, a
 * client is told there is none, and the first is served as it comes.
 */
static void test_no_sample_yet(void **state)
{
	struct snapshot *s;
	char buf[4096], how[160];
	struct privsep *p;
	int port;

	(void)state;
	p = start(&port);
	assert_int_equal(privsep_wait_first(p, 10000), 0);
	get(port, "/healthz", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 503 "));
	assert_non_null(strstr(buf, "\r\n\r\nno sample yet\n"));
	s = fake_snapshot("test_metric 1\n");
	privsep_publish(s, p);
	snapshot_release(s);
	get(port, "/healthz", buf, sizeof(buf));
	assert_non_null(strstr(buf, " 200 "));
	assert_true(privsep_stop(p, how, sizeof(how)));
}

/*
 * The server's threads: the sum of their voluntary context switches (each
 * time one went to sleep), and in *asleep whether each sleeps now.
 */
static long server_switches(pid_t pid, bool *asleep)
{
	char path[320], line[256];
	struct dirent *e;
	long sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	*asleep = true;
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/status", (int)pid, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;   /* a thread that ended */
		while (fgets(line, sizeof(line), f)) {
			long n;

			if (strncmp(line, "State:", 6) == 0 && !strchr(line + 6, 'S'))
				*asleep = false;
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
				sum += n;
		}
		fclose(f);
	}
	closedir(d);
	return sum;
}

/*
 * The sum once every thread of the server sleeps and the sum held over a
 * millisecond (up to 10 s): a thread that still settles (State S, but
 * put off the CPU before it went to sleep) has counted by then.
 */
static long quiet_switches(pid_t pid)
{
	bool asleep = false, settled = false;
	long n = -1;

	for (int i = 0; i < 10000 && !settled; i++) {
		long before = n;

		n = server_switches(pid, &asleep);
		settled = asleep && n == before;
		if (!settled)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	assert_true(settled);
	return n;
}

/* Wait up to 10 s until the server read all this side sent (SIOCOUTQ: bytes unread). */
static void sent_all_read(struct privsep *p)
{
	int unread = 1;

	for (int i = 0; i < 10000; i++) {
		assert_int_equal(ioctl(privsep_fd(p), SIOCOUTQ, &unread), 0);
		if (unread == 0)
			return;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	fail_msg("the server left %d bytes unread for 10 s", unread);
}

/*
 * With no client, a sample wakes no thread of the server: its threads
 * sleep through 50 samples (each one read, where the server read what
 * was sent to it, before the next), and the first client after them gets
 * the newest sample's document.
 */
static void test_samples_wake_nobody(void **state)
{
	struct answerer a = { 0 };
	char buf[4096], text[64];
	struct snapshot *s;
	long before, after;

	(void)state;
	a.p = start(&a.port);
	s = fake_snapshot("test_metric 0\n");
	privsep_publish(s, a.p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(a.p, 10000), 0);
	before = quiet_switches(privsep_pid(a.p));
	for (int i = 1; i <= 50; i++) {
		snprintf(text, sizeof(text), "test_metric %d\n", i);
		s = fake_snapshot(text);
		privsep_publish(s, a.p);
		snapshot_release(s);
		sent_all_read(a.p);
	}
	after = quiet_switches(privsep_pid(a.p));
	assert_int_equal(after - before, 0);
	assert_int_equal(pthread_create(&a.thread, NULL, answer_loop, &a), 0);
	get(a.port, "/metrics", buf, sizeof(buf));
	assert_non_null(strstr(buf, "\r\n\r\ntest_metric 50\n"));
	assert_int_equal(answered(&a, 1), 1);
	atomic_store(&a.stop, true);
	assert_int_equal(pthread_join(a.thread, NULL), 0);
	assert_true(privsep_stop(a.p, buf, sizeof(buf)));
}

static void test_death_noticed(void **state)
{
	struct pollfd pfd;
	char how[160];
	struct privsep *p;
	int port;

	(void)state;
	p = start(&port);
	assert_int_equal(kill(privsep_pid(p), SIGKILL), 0);
	pfd = (struct pollfd){ .fd = privsep_fd(p), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_false(privsep_check(p));
	assert_false(privsep_alive(p));
	assert_false(privsep_stop(p, how, sizeof(how)));
	assert_non_null(strstr(how, "killed by signal 9"));
}

/* The main loop's liveness part (main.c) for ms: false as soon as the check fails. */
static bool live_for(struct privsep *p, long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct pollfd pfd = { .fd = privsep_fd(p), .events = POLLIN };

		if (poll(&pfd, 1, 100) == 1 && !privsep_check(p))
			return false;
		if (!privsep_tick(p))
			return false;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return true;
}

static double since_s(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Whether pid has ended (gone, or a zombie nobody reaped yet), waiting up to 10 s. */
static bool ended(pid_t pid)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		char *close_paren;

		if (!f)
			return true;
		close_paren = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
		fclose(f);
		if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z')
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return false;
}

/* A server that answers: the liveness check holds over three pings and more. */
static void test_live_server_passes_the_check(void **state)
{
	struct snapshot *s = fake_snapshot("test_metric 1\n");
	struct privsep *p;
	char how[160];
	int port;

	(void)state;
	p = start(&port);
	privsep_publish(s, p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(p, 10000), 0);
	assert_true(live_for(p, 3 * PRIVSEP_PING_EVERY_MS + 500));
	assert_false(privsep_hung(p));
	assert_true(privsep_stop(p, how, sizeof(how)));
	assert_string_equal(how, "exited with status 0");
}

/*
 * A stopped server: the check finds it once a ping is unanswered for its
 * deadline, and the stop ends it (through its keeper: SIGCONT is never
 * sent) without waiting for it.
 */
static void test_stopped_server_is_found_and_ended(void **state)
{
	struct snapshot *s = fake_snapshot("test_metric 1\n");
	struct timespec t0;
	struct privsep *p;
	char how[160];
	pid_t server;
	int port;

	(void)state;
	p = start(&port);
	privsep_publish(s, p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(p, 10000), 0);
	server = privsep_pid(p);
	assert_int_equal(kill(server, SIGSTOP), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_false(live_for(p, 60000));
	assert_true(privsep_hung(p));
	assert_false(privsep_alive(p));
	/* Not before its deadline; the upper bound is the machine's, not asserted. */
	assert_true(since_s(&t0) >= PRIVSEP_PONG_DEADLINE_MS / 1000.0 - 0.1);
	assert_false(privsep_stop(p, how, sizeof(how)));
	assert_non_null(strstr(how, "did not answer the liveness check"));
	assert_true(ended(server));
}

/* A server that stops after the last check is still ended by the stop, within its wait. */
static void test_stop_ends_a_stopped_server(void **state)
{
	struct snapshot *s = fake_snapshot("test_metric 1\n");
	struct privsep *p;
	char how[160];
	pid_t server;
	int port;

	(void)state;
	p = start(&port);
	privsep_publish(s, p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(p, 10000), 0);
	server = privsep_pid(p);
	assert_int_equal(kill(server, SIGSTOP), 0);
	assert_false(privsep_stop(p, how, sizeof(how)));
	assert_non_null(strstr(how, "did not end within 1 s"));
	assert_true(ended(server));
}

/*
 * A stop signal pending while the hardware side writes an answer to a
 * server that stopped reading: the write gives up and the transport is
 * abandoned, the server still taken for alive (the stop ends it), where
 * the write waited out its 10 s and took the server for dead.
 */
static void test_stop_signal_abandons_a_write(void **state)
{
	size_t big = 8u << 20;
	char *text = malloc(big + 1), how[160];
	struct getter g = { 0 };
	struct snapshot *s;
	struct pollfd pfd;
	sigset_t usr1, old;
	struct privsep *p;
	pid_t server;

	(void)state;
	assert_non_null(text);
	memset(text, 'x', big);
	text[big - 1] = '\n';
	text[big] = '\0';
	s = fake_snapshot(text);
	free(text);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* Before the getter starts: it inherits the mask, and the signal stays pending. */
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
	p = start(&g.port);
	privsep_stop_on(p, &usr1);
	privsep_publish(s, p);
	snapshot_release(s);
	assert_int_equal(privsep_wait_first(p, 10000), 0);
	server = privsep_pid(p);
	assert_int_equal(pthread_create(&g.thread, NULL, get_main, &g), 0);
	pfd = (struct pollfd){ .fd = privsep_fd(p), .events = POLLIN };
	assert_int_equal(poll(&pfd, 1, 10000), 1);   /* the server's request waits */
	assert_int_equal(kill(server, SIGSTOP), 0);
	assert_int_equal(kill(getpid(), SIGUSR1), 0);
	assert_true(privsep_check(p));
	assert_true(privsep_alive(p));
	assert_true(privsep_tick(p));                 /* and no ping is written after it */
	assert_false(privsep_stop(p, how, sizeof(how)));
	assert_non_null(strstr(how, "did not end within 1 s"));
	assert_int_equal(pthread_join(g.thread, NULL), 0);
	assert_int_equal(sigwaitinfo(&usr1, NULL), SIGUSR1);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	assert_true(ended(server));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_serves_published_bytes),
		cmocka_unit_test(test_superseded_sample),
		cmocka_unit_test(test_no_sample_yet),
		cmocka_unit_test(test_samples_wake_nobody),
		cmocka_unit_test(test_death_noticed),
		cmocka_unit_test(test_live_server_passes_the_check),
		cmocka_unit_test(test_stopped_server_is_found_and_ended),
		cmocka_unit_test(test_stop_ends_a_stopped_server),
		cmocka_unit_test(test_stop_signal_abandons_a_write),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
