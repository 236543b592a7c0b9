/*
 * Unit tests of the HTTP endpoint: a real server on 127.0.0.1 (port 0),
 * a hand-built snapshot, and a small raw-socket client, so the exact
 * status lines, headers and bodies a scraper sees are checked.  Also the
 * listen-address parser, oversized headers, the per-address limit, the
 * request deadline, the exact header limit, keep-alive and pipelining,
 * eviction of idle connections, and the check against RLIMIT_NOFILE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cpu.h"
#include "prom.h"
#include "fake_machines.h"
#include "http.h"
#include "listen_addr.h"
#include "snapshot.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define RESP_MAX (1024 * 1024)

struct server {
	struct http_server *srv;
	int port;
};

static const unsigned char index_html[] = "<html>page</html>\n";
static const unsigned char app_js[] = "console.log(1);\n";
static const struct http_asset assets[] = {
	{ "/index.html", "text/html; charset=utf-8", index_html, sizeof(index_html) - 1 },
	{ "/app.js", "text/javascript", app_js, sizeof(app_js) - 1 },
};

/* --- a minimal client ------------------------------------------------- */

static int connect_port(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Send raw, read until the server closes; returns the bytes read (NUL-terminated). */
static size_t exchange(int port, const char *raw, size_t raw_len, char *resp)
{
	int fd = connect_port(port);
	size_t got = 0;
	ssize_t n;

	/* The server may hang up before reading everything (that is the point
	 * of some tests), so a failed send is not an error here. */
	(void)send(fd, raw, raw_len, MSG_NOSIGNAL);
	while (got < RESP_MAX - 1 && (n = recv(fd, resp + got, RESP_MAX - 1 - got, 0)) > 0)
		got += (size_t)n;
	resp[got] = '\0';
	close(fd);
	return got;
}

static size_t request(int port, const char *method, const char *path, char *resp)
{
	char raw[512];

	snprintf(raw, sizeof(raw), "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
		 method, path);
	return exchange(port, raw, strlen(raw), resp);
}

static int status_of(const char *resp)
{
	int status = -1;

	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

/* Value of header name (case-insensitive) copied to buf, or NULL. */
static const char *header(const char *resp, const char *name, char *buf, size_t len)
{
	const char *end = strstr(resp, "\r\n\r\n");
	size_t nlen = strlen(name);

	for (const char *p = strstr(resp, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
		if (strncasecmp(p + 2, name, nlen) == 0 && p[2 + nlen] == ':') {
			const char *v = p + 3 + nlen + strspn(p + 3 + nlen, " ");

			snprintf(buf, len, "%.*s", (int)strcspn(v, "\r"), v);
			return buf;
		}
	}
	return NULL;
}

static const char *body_of(const char *resp)
{
	const char *p = strstr(resp, "\r\n\r\n");

	return p ? p + 4 : "";
}

/* --- fixtures ---------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One socket with two cores of two threads: cpus 0,2 on core 0 and 1,3 on core 1. */
static void publish_snapshot(double age_s)
{
	struct hw_cpu cpus[4] = {
		{ .cpu = 0, .socket = 0, .core = 0, .thread = 0, .online = true },
		{ .cpu = 1, .socket = 0, .core = 1, .thread = 0, .online = true },
		{ .cpu = 2, .socket = 0, .core = 0, .thread = 1, .online = true },
		{ .cpu = 3, .socket = 0, .core = 1, .thread = 1, .online = true },
	};
	struct cpu_core cores[2] = { { .core = 0, .n_cpus = 2, .cpus = { 0, 2 } },
				     { .core = 1, .n_cpus = 2, .cpus = { 1, 3 } } };
	int socket_cpus[4] = { 0, 1, 2, 3 };
	struct cpu_socket socket = { .socket = 0, .n_cores = 2, .cores = cores, .n_cpus = 4,
				     .cpus = socket_cpus };
	struct cpu_topology topo = { .n_cpus = 4, .cpus = cpus, .n_sockets = 1, .sockets = &socket };
	struct cpu_info info = { .vendor = "GenuineIntel", .family = 6, .model = 44,
				 .microarch = "westmere-ep" };
	struct snapshot *s = snapshot_new(&topo, &info);

	assert_non_null(s);
	s->time = now_s() - age_s;
	s->interval_s = 1.0;
	s->samples = 7;
	add_thermal(s, "tjmax_celsius", 0, 95);
	add_thermal(s, "temperature_celsius", 0, 58);
	snapshot_publish(s);
}

static struct server *start_server_opt(struct http_options opt)
{
	struct server *sv = calloc(1, sizeof(*sv));
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char err[256] = "";
	int fd;

	assert_non_null(sv);
	assert_int_equal(http_bind("127.0.0.1:0", &fd, err, sizeof(err)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	sv->port = ntohs(sa.sin_port);
	opt.listen_fd = fd;
	sv->srv = http_start(&opt, err, sizeof(err));
	if (!sv->srv)
		fail_msg("http_start: %s", err);
	return sv;
}

static struct server *start_server(unsigned max_conn, unsigned per_ip,
				   const struct http_asset *a, size_t n_a)
{
	return start_server_opt((struct http_options){
		.max_connections = max_conn, .max_connections_per_ip = per_ip,
		.request_timeout_s = 10, .max_header_bytes = 8192, .interval_s = 1.0,
		.assets = a, .n_assets = n_a,
	});
}

static void stop_server(struct server *sv)
{
	http_stop(sv->srv);
	free(sv);
}

static char *resp;

static int setup(void **state)
{
	resp = malloc(RESP_MAX);
	*state = start_server(64, 0, NULL, 0);
	publish_snapshot(0);
	return resp ? 0 : -1;
}

static int teardown(void **state)
{
	stop_server(*state);
	snapshot_clear();
	free(resp);
	return 0;
}

/* --- routes ------------------------------------------------------------ */

static void test_metrics(void **state)
{
	struct server *sv = *state;
	char v[128];

	request(sv->port, "GET", "/metrics", resp);
	assert_int_equal(status_of(resp), 200);
	assert_string_equal(header(resp, "Content-Type", v, sizeof(v)), PROM_CONTENT_TYPE);
	assert_string_equal(header(resp, "Cache-Control", v, sizeof(v)), "no-store");
	assert_true(strncmp(body_of(resp), "# HELP ", 7) == 0);
	assert_non_null(strstr(body_of(resp), "uncored_tjmax_celsius{socket=\"0\"} 95\n"));
}

static void test_metrics_head(void **state)
{
	struct server *sv = *state;
	char v[128];
	size_t body_len;

	request(sv->port, "GET", "/metrics", resp);
	body_len = strlen(body_of(resp));
	request(sv->port, "HEAD", "/metrics", resp);
	assert_int_equal(status_of(resp), 200);
	assert_non_null(header(resp, "Content-Length", v, sizeof(v)));
	assert_int_equal(strtoul(v, NULL, 10), body_len);
	assert_string_equal(body_of(resp), "");
}

static void test_json_routes(void **state)
{
	static const struct {
		const char *path;
		const char *starts;
	} rows[] = {
		{ "/api/v1/snapshot", "{\"time\":" },
		{ "/api/v1/episodes", "{\"episodes\":" },
	};
	struct server *sv = *state;
	char v[128];

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("route %s\n", rows[i].path);
		request(sv->port, "GET", rows[i].path, resp);
		assert_int_equal(status_of(resp), 200);
		assert_string_equal(header(resp, "Content-Type", v, sizeof(v)), "application/json");
		assert_string_equal(header(resp, "Cache-Control", v, sizeof(v)), "no-store");
		assert_true(strncmp(body_of(resp), rows[i].starts, strlen(rows[i].starts)) == 0);
	}
}

static void test_healthz(void **state)
{
	struct server *sv = *state;

	request(sv->port, "GET", "/healthz", resp);
	assert_int_equal(status_of(resp), 200);
	assert_string_equal(body_of(resp), "ok\n");

	publish_snapshot(100.0);
	request(sv->port, "GET", "/healthz", resp);
	assert_int_equal(status_of(resp), 503);
	assert_true(strncmp(body_of(resp), "stale: last sample 100.", 23) == 0);
	publish_snapshot(0);
}

static void test_before_first_snapshot(void **state)
{
	static const char *const paths[] = {
		"/metrics", "/api/v1/snapshot", "/api/v1/episodes", "/healthz",
	};
	struct server *sv = *state;

	snapshot_clear();
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		print_message("route %s\n", paths[i]);
		request(sv->port, "GET", paths[i], resp);
		assert_int_equal(status_of(resp), 503);
		assert_string_equal(body_of(resp), "no sample yet\n");
	}
	publish_snapshot(0);
}

static void test_wrong_method(void **state)
{
	static const char raw[] = "POST /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
				  "Content-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello";
	static const char *const methods[] = { "PUT", "DELETE", "OPTIONS" };
	struct server *sv = *state;
	char v[64];

	exchange(sv->port, raw, sizeof(raw) - 1, resp);
	assert_int_equal(status_of(resp), 405);
	assert_string_equal(header(resp, "Allow", v, sizeof(v)), "GET, HEAD");
	for (size_t i = 0; i < ARRAY_SIZE(methods); i++) {
		print_message("method %s\n", methods[i]);
		request(sv->port, methods[i], "/api/v1/snapshot", resp);
		assert_int_equal(status_of(resp), 405);
		assert_string_equal(header(resp, "Allow", v, sizeof(v)), "GET, HEAD");
	}
}

static void test_not_found(void **state)
{
	struct server *sv = *state;

	request(sv->port, "GET", "/nope", resp);
	assert_int_equal(status_of(resp), 404);
	request(sv->port, "GET", "/metrics/", resp);
	assert_int_equal(status_of(resp), 404);
}

static void test_builtin_index(void **state)
{
	struct server *sv = *state;
	char v[64];

	request(sv->port, "GET", "/", resp);
	assert_int_equal(status_of(resp), 200);
	assert_string_equal(header(resp, "Content-Type", v, sizeof(v)), "text/html; charset=utf-8");
	assert_non_null(strstr(body_of(resp), "<a href=\"/metrics\">"));
	assert_non_null(strstr(body_of(resp), "<a href=\"/api/v1/snapshot\">"));
}

static void test_assets(void **state)
{
	struct server *sv = start_server(16, 0, assets, ARRAY_SIZE(assets));
	char v[64];

	(void)state;
	request(sv->port, "GET", "/", resp);
	assert_int_equal(status_of(resp), 200);
	assert_string_equal(body_of(resp), "<html>page</html>\n");
	request(sv->port, "GET", "/app.js", resp);
	assert_int_equal(status_of(resp), 200);
	assert_string_equal(header(resp, "Content-Type", v, sizeof(v)), "text/javascript");
	assert_string_equal(body_of(resp), "console.log(1);\n");
	request(sv->port, "HEAD", "/index.html", resp);
	assert_int_equal(status_of(resp), 200);
	assert_string_equal(header(resp, "Content-Length", v, sizeof(v)), "18");
	assert_string_equal(body_of(resp), "");
	request(sv->port, "GET", "/missing.css", resp);
	assert_int_equal(status_of(resp), 404);
	stop_server(sv);
}

/* --- limits ------------------------------------------------------------ */

static void test_huge_headers(void **state)
{
	struct server *sv = *state;
	size_t cap = 110 * 1024, len;
	char *raw = malloc(cap);
	int status;

	assert_non_null(raw);
	len = (size_t)snprintf(raw, cap, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n");
	for (int i = 0; len + 1100 < 100 * 1024; i++) {
		len += (size_t)snprintf(raw + len, cap - len, "X-Pad-%d: ", i);
		memset(raw + len, 'a', 1000);
		len += 1000;
		len += (size_t)snprintf(raw + len, cap - len, "\r\n");
	}
	len += (size_t)snprintf(raw + len, cap - len, "Connection: close\r\n\r\n");
	exchange(sv->port, raw, len, resp);
	free(raw);
	status = status_of(resp);
	/* Either an error status or a hang-up, never a served response. */
	print_message("status for 100 KB of headers: %d\n", status);
	assert_true(status == -1 || status >= 400);
	request(sv->port, "GET", "/healthz", resp);
	assert_int_equal(status_of(resp), 200);
}

/* Connections the server hung up on within timeout_ms. */
static int count_hangups(const int *fds, int n, int timeout_ms)
{
	int closed = 0;

	for (int i = 0; i < n; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };
		char c;

		if (poll(&p, 1, timeout_ms) == 1 && recv(fds[i], &c, 1, MSG_DONTWAIT) <= 0)
			closed++;
		timeout_ms = 20;
	}
	return closed;
}

static void test_per_ip_limit(void **state)
{
	enum { N = 50, LIMIT = 8 };
	struct server *sv = start_server(200, LIMIT, NULL, 0);
	int fds[N], closed;

	(void)state;
	for (int i = 0; i < N; i++)
		fds[i] = connect_port(sv->port);
	closed = count_hangups(fds, N, 1000);
	print_message("%d of %d idle connections refused\n", closed, N);
	assert_true(closed >= N - LIMIT);
	assert_true(closed < N);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	usleep(200 * 1000);
	request(sv->port, "GET", "/healthz", resp);
	assert_int_equal(status_of(resp), 200);
	stop_server(sv);
}

/* --- request deadline, exact header limit, keep-alive, fd limit ---------- */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* True when the server has closed fd (recv sees the end, or a reset). */
static int closed_by_server(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* Read one response with a Content-Length body from fd into resp. */
static void read_response(int fd)
{
	size_t got = 0, need = 0;
	char v[32];

	for (;;) {
		ssize_t n = recv(fd, resp + got, RESP_MAX - 1 - got, 0);
		const char *end;

		assert_true(n > 0);
		got += (size_t)n;
		resp[got] = '\0';
		end = strstr(resp, "\r\n\r\n");
		if (!end)
			continue;
		if (!need) {
			assert_non_null(header(resp, "Content-Length", v, sizeof(v)));
			need = (size_t)(end + 4 - resp) + strtoul(v, NULL, 10);
		}
		if (got >= need)
			break;
	}
	assert_int_equal(got, need);
}

/*
 * Clients that send part of a request and close (or half-close) free their
 * connections at once, long before the 10 s deadline; one that sends a
 * whole request and half-closes is still answered.
 */
static void test_hangup_noticed(void **state)
{
	enum { N = 8 };
	static const char part[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
	static const char whole[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	struct server *sv = *state;
	int fds[N], closed = 0;
	double t0 = mono_s();
	size_t got = 0;
	ssize_t n;

	for (int i = 0; i < N; i++) {
		fds[i] = connect_port(sv->port);
		assert_int_equal(send(fds[i], part, sizeof(part) - 1, MSG_NOSIGNAL),
				 (ssize_t)sizeof(part) - 1);
		shutdown(fds[i], SHUT_WR);
	}
	for (int i = 0; i < N; i++) {
		struct pollfd p = { .fd = fds[i], .events = POLLIN };

		if (poll(&p, 1, 3000) == 1 && closed_by_server(fds[i]))
			closed++;
		close(fds[i]);
	}
	print_message("%d of %d half-closed connections closed in %.2f s\n", closed, N,
		      mono_s() - t0);
	assert_int_equal(closed, N);
	fds[0] = connect_port(sv->port);
	assert_int_equal(send(fds[0], whole, sizeof(whole) - 1, MSG_NOSIGNAL),
			 (ssize_t)sizeof(whole) - 1);
	shutdown(fds[0], SHUT_WR);
	while (got < RESP_MAX - 1 && (n = recv(fds[0], resp + got, RESP_MAX - 1 - got, 0)) > 0)
		got += (size_t)n;
	resp[got] = '\0';
	close(fds[0]);
	assert_int_equal(status_of(resp), 200);
}

/* One header byte every 200 ms does not keep a connection past the deadline. */
static void test_request_deadline(void **state)
{
	struct server *sv = start_server_opt((struct http_options){
		.max_connections = 8, .request_timeout_s = 1, .max_header_bytes = 8192,
		.interval_s = 1.0 });
	int fd = connect_port(sv->port);
	double t0 = mono_s(), took;

	(void)state;
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL), 23);
	while (!closed_by_server(fd) && mono_s() - t0 < 10) {
		(void)send(fd, "X", 1, MSG_NOSIGNAL);
		usleep(200 * 1000);
	}
	took = mono_s() - t0;
	print_message("trickling connection closed after %.2f s (deadline 1 s)\n", took);
	assert_true(took >= 0.9);
	assert_true(took < 10);
	close(fd);
	/* The next request on a kept-alive connection has a deadline too. */
	fd = connect_port(sv->port);
	assert_int_equal(send(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 34, MSG_NOSIGNAL), 34);
	read_response(fd);
	assert_int_equal(status_of(resp), 200);
	t0 = mono_s();
	while (!closed_by_server(fd) && mono_s() - t0 < 10)
		usleep(50 * 1000);
	assert_true(mono_s() - t0 < 10);
	close(fd);
	stop_server(sv);
}

/* A GET /metrics request of exactly len bytes, padded with one header. */
static size_t padded_request(char *buf, size_t len)
{
	static const char head[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ";
	size_t fixed = sizeof(head) - 1 + 2 + 2; /* the pad's CRLF, the empty line */

	assert_true(len > fixed);
	memcpy(buf, head, sizeof(head) - 1);
	memset(buf + sizeof(head) - 1, 'a', len - fixed);
	memcpy(buf + len - 4, "\r\n\r\n", 4);
	return len;
}

static void test_header_limit_exact(void **state)
{
	enum { LIMIT = 1500 };
	struct server *sv = start_server_opt((struct http_options){
		.max_connections = 8, .request_timeout_s = 10, .max_header_bytes = LIMIT,
		.interval_s = 1.0 });
	char raw[LIMIT + 2];

	(void)state;
	exchange(sv->port, raw, padded_request(raw, LIMIT), resp);
	assert_int_equal(status_of(resp), 200);
	exchange(sv->port, raw, padded_request(raw, LIMIT + 1), resp);
	assert_int_equal(status_of(resp), 431);
	stop_server(sv);
}

static void test_keep_alive(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
	static const char last[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct server *sv = *state;
	char pipelined[3 * sizeof(last)];
	int fd = connect_port(sv->port), n200 = 0;
	size_t len;
	char v[32];

	/* Two requests one after the other on one connection. */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL), (ssize_t)sizeof(req) - 1);
		read_response(fd);
		assert_int_equal(status_of(resp), 200);
		assert_null(header(resp, "Connection", v, sizeof(v)));
	}
	close(fd);
	/* Three pipelined requests, the last asking to close: three answers. */
	len = (size_t)snprintf(pipelined, sizeof(pipelined), "%s%s%s", req, req, last);
	exchange(sv->port, pipelined, len, resp);
	for (const char *p = resp; (p = strstr(p, "HTTP/1.1 200 OK\r\n")); p++)
		n200++;
	assert_int_equal(n200, 3);
	/* HTTP/1.0 without keep-alive: the server closes after the answer. */
	exchange(sv->port, "GET /metrics HTTP/1.0\r\n\r\n", 25, resp);
	assert_int_equal(status_of(resp), 200);
}

/* A request announcing a body is answered 413 and the connection closed. */
static void test_body_refused(void **state)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
	struct server *sv = *state;

	exchange(sv->port, req, sizeof(req) - 1, resp);
	assert_int_equal(status_of(resp), 413);
}

/* Only HTTP/1.0 and 1.1; a target with a control character, encoded or not, is refused. */
static void test_version_and_target(void **state)
{
	static const char *const bad_targets[] = { "/metrics%00", "/metrics%0a", "/x%1B[2J",
						   "/metrics%7f" };
	struct server *sv = *state;

	exchange(sv->port, "GET /metrics HTTP/1.9\r\nHost: x\r\nConnection: close\r\n\r\n",
		 strlen("GET /metrics HTTP/1.9\r\nHost: x\r\nConnection: close\r\n\r\n"), resp);
	assert_int_equal(status_of(resp), 505);
	exchange(sv->port, "GET /metrics HTTP/1.0\r\n\r\n", strlen("GET /metrics HTTP/1.0\r\n\r\n"),
		 resp);
	assert_int_equal(status_of(resp), 200);
	for (size_t i = 0; i < ARRAY_SIZE(bad_targets); i++) {
		print_message("target %s\n", bad_targets[i]);
		request(sv->port, "GET", bad_targets[i], resp);
		assert_int_equal(status_of(resp), 400);
	}
	request(sv->port, "GET", "/metrics%20", resp);
	assert_int_equal(status_of(resp), 404);
}

/*
 * A connection accepted a moment ago keeps its place even idle, however
 * many its address holds: its request may be on the way, and clients that
 * reconnect as fast as they are closed must not have the server take and
 * answer each connection at their pace.  With every place taken by fresh
 * idle connections of one address, an asker is answered only once one of
 * them held its place 100 ms (and then at once).
 */
static void test_fresh_not_evicted(void **state)
{
	enum { N = 4 };
	struct server *sv = start_server(N, 0, NULL, 0);
	int fds[N], closed;
	double t0, took;

	(void)state;
	for (int i = 0; i < N; i++)
		fds[i] = connect_port(sv->port);
	t0 = mono_s();
	request(sv->port, "GET", "/metrics", resp);
	took = mono_s() - t0;
	print_message("answered %.0f ms after the places were taken\n", took * 1e3);
	assert_int_equal(status_of(resp), 200);
	assert_true(took >= 0.09);
	assert_true(took < 1.0);
	closed = count_hangups(fds, N, 1000);
	assert_true(closed >= 1);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	stop_server(sv);
}

/*
 * A client that pipelines requests and never reads: its connection is
 * closed when writing makes no progress for write_timeout, and it is
 * evictable meanwhile: an asker gets its place.
 */
static void test_slow_reader(void **state)
{
	enum { N = 2 };
	struct server *sv = start_server_opt((struct http_options){
		.max_connections = N, .request_timeout_s = 10, .write_timeout_s = 1,
		.max_header_bytes = 8192, .interval_s = 1.0 });
	static const char one[] = "GET /api/v1/snapshot HTTP/1.1\r\nHost: x\r\n\r\n";
	char *many = malloc(400 * (sizeof(one) - 1) + 1);
	int fds[N], rcv = 4096;
	double t0, took;

	(void)state;
	assert_non_null(many);
	for (int i = 0; i < 400; i++)
		memcpy(many + i * (sizeof(one) - 1), one, sizeof(one) - 1);
	for (int i = 0; i < N; i++) {
		fds[i] = connect_port(sv->port);
		setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
		(void)send(fds[i], many, 400 * (sizeof(one) - 1), MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	usleep(500 * 1000);
	t0 = mono_s();
	request(sv->port, "GET", "/metrics", resp);
	took = mono_s() - t0;
	print_message("asker answered in %.0f ms\n", took * 1e3);
	assert_int_equal(status_of(resp), 200);
	assert_true(took < 1.0);
	/* Both slow readers are gone within the write deadline and some slack:
	 * what they have not read ends in end-of-file or a reset. */
	sleep(3);
	for (int i = 0; i < N; i++) {
		static char sink[65536];
		ssize_t n;

		while ((n = recv(fds[i], sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			;
		assert_true(n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK));
		close(fds[i]);
	}
	free(many);
	stop_server(sv);
}

/* --- what a connection leaves in the kernel ------------------------------- */

#define MID_ASSET (20u * 1024u)
#define HUGE_ASSET (1024u * 1024u)
static unsigned char big_asset[HUGE_ASSET];
static const struct http_asset big_assets[] = {
	{ "/mid.bin", "application/octet-stream", big_asset, MID_ASSET },
	{ "/64k.bin", "application/octet-stream", big_asset, 64u * 1024u },
	{ "/huge.bin", "application/octet-stream", big_asset, HUGE_ASSET },
};

static struct server *start_big_server(void)
{
	for (size_t i = 0; i < sizeof(big_asset); i++)
		big_asset[i] = (unsigned char)('a' + i % 26);
	return start_server_opt((struct http_options){
		.max_connections = 4, .request_timeout_s = 10, .write_timeout_s = 1,
		.max_header_bytes = 8192, .interval_s = 1.0,
		.assets = big_assets, .n_assets = ARRAY_SIZE(big_assets) });
}

/* A client that sends req times over, with a small receive buffer (small). */
static int pipeliner(int port, const char *req, unsigned times, bool small)
{
	int fd = connect_port(port), rcv = 4096;
	size_t len = strlen(req);
	char *all = malloc(len * times);

	assert_non_null(all);
	if (small)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	for (unsigned i = 0; i < times; i++)
		memcpy(all + i * len, req, len);
	assert_int_equal(send(fd, all, len * times, MSG_NOSIGNAL), (ssize_t)(len * times));
	free(all);
	return fd;
}

/*
 * The sockets of this host's TCP connections between local port a and
 * remote port b; with *txq (may be NULL) the most bytes one of them holds
 * that its peer has not acknowledged.
 */
static int tcp_sockets(int a, int b, unsigned *txq)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[256];
	int n = 0;

	assert_non_null(f);
	if (txq)
		*txq = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned la, lp, ra, rp, st, tx;

		if (sscanf(line, " %*d: %x:%x %x:%x %x %x", &la, &lp, &ra, &rp, &st, &tx) == 6 &&
		    (int)lp == a && (int)rp == b) {
			n++;
			if (txq && tx > *txq)
				*txq = tx;
		}
	}
	fclose(f);
	return n;
}

static int local_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	return ntohs(sa.sin_port);
}

/*
 * Wait (5 s at most) for the server to end fd's connection; returns the
 * errno of the end (ECONNRESET for a reset, 0 for an orderly close), the
 * bytes that came before it read and dropped.
 */
static int end_of(int fd)
{
	static char sink[65536];
	double t0 = mono_s();

	while (mono_s() - t0 < 5.0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		while ((n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			;
		if (n == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return errno;
	}
	fail_msg("the server did not end the connection within 5 s");
	return -1;
}

/*
 * A client that does not read is dropped with a reset, and the server's
 * socket is gone with what it held (no orphan left in the kernel): one
 * answer larger than the socket takes (libmicrohttpd's write deadline), and
 * pipelined answers the socket has no room for (held, then reset at the
 * deadline).  After a write_timeout of 1 s, not before; an asker is served
 * meanwhile.
 */
static void test_non_reader_reset(void **state)
{
	struct server *sv = start_big_server();
	int idle = connect_port(sv->port);
	int huge = pipeliner(sv->port, "GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n", 1, true);
	int piped = pipeliner(sv->port, "GET /mid.bin HTTP/1.1\r\nHost: x\r\n\r\n", 16, true);
	int hp = local_port(huge), pp = local_port(piped);
	double t0 = mono_s();

	(void)state;
	/* The count sees a connection the server keeps (request_timeout 10 s). */
	assert_int_equal(tcp_sockets(sv->port, local_port(idle), NULL), 1);
	request(sv->port, "GET", "/mid.bin", resp);
	assert_int_equal(status_of(resp), 200);
	assert_int_equal(end_of(huge), ECONNRESET);
	assert_int_equal(end_of(piped), ECONNRESET);
	print_message("both reset %.1f s after their requests\n", mono_s() - t0);
	assert_true(mono_s() - t0 >= 0.9);
	assert_int_equal(tcp_sockets(sv->port, hp, NULL), 0);
	assert_int_equal(tcp_sockets(sv->port, pp, NULL), 0);
	close(idle);
	close(huge);
	close(piped);
	stop_server(sv);
}

/*
 * An answer the server finished and closed on (HTTP/1.0) but whose client
 * does not read is left to the kernel, as an orphan holding its last bytes:
 * the kernel resets it after write_timeout without progress
 * (TCP_USER_TIMEOUT), where it kept it for as long as the client answered
 * its window probes.
 */
static void test_orphan_reset_by_kernel(void **state)
{
	struct server *sv = start_big_server();
	/* More than the client's window takes, less than the server's socket does. */
	int fd = pipeliner(sv->port, "GET /64k.bin HTTP/1.0\r\n\r\n", 1, true);
	int port = local_port(fd);
	double t0 = mono_s(), gone_s = -1;

	(void)state;
	while (mono_s() - t0 < 10.0) {
		if (tcp_sockets(sv->port, port, NULL) == 0) {
			gone_s = mono_s() - t0;
			break;
		}
		usleep(50 * 1000);
	}
	print_message("the server's end gone after %.1f s\n", gone_s);
	assert_true(gone_s >= 0);
	assert_int_equal(end_of(fd), ECONNRESET);
	close(fd);
	stop_server(sv);
}

/* Bytes waiting in fd's receive queue. */
static int queued(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

/* Read exactly one response with a Content-Length body from fd into resp. */
static void read_one_response(int fd)
{
	size_t got = 0, need = 0;
	char v[32];

	/* The head a byte at a time: nothing of the next answer is taken. */
	while (!strstr(resp, "\r\n\r\n")) {
		assert_true(got < RESP_MAX - 1);
		if (recv(fd, resp + got, 1, 0) != 1)
			fail_msg("recv: %s after %zu bytes", strerror(errno), got);
		resp[++got] = '\0';
	}
	assert_non_null(header(resp, "Content-Length", v, sizeof(v)));
	need = got + strtoul(v, NULL, 10);
	assert_true(need < RESP_MAX);
	while (got < need) {
		ssize_t n = recv(fd, resp + got, need - got, 0);

		if (n <= 0)
			fail_msg("recv: %s after %zu of %zu bytes", n ? strerror(errno) : "end", got,
				 need);
		got += (size_t)n;
	}
	resp[got] = '\0';
}

/*
 * A client that pipelines requests whose answers fill its socket and the
 * server's, and reads them only then, gets every one, whole and in order:
 * the answers that found the socket full waited (held) until it took
 * more, then went on.
 */
static void test_pipelined_reader_served(void **state)
{
	enum { N = 12 };
	struct server *sv = start_big_server();
	/* Not a small receive buffer: on loopback, one under the segment size
	 * (64 KiB) stalls the transfer past the write deadline. */
	int fd = pipeliner(sv->port, "GET /mid.bin HTTP/1.1\r\nHost: x\r\n\r\n", N, false);
	double t0 = mono_s();

	(void)state;
	/* Its receive queue full (it grows no more) before it reads. */
	for (int last = -1; queued(fd) != last && mono_s() - t0 < 0.5; usleep(100 * 1000))
		last = queued(fd);
	for (int i = 0; i < N; i++) {
		resp[0] = '\0';
		read_one_response(fd);
		assert_int_equal(status_of(resp), 200);
		assert_memory_equal(body_of(resp), big_asset, MID_ASSET);
	}
	close(fd);
	stop_server(sv);
}

/*
 * A client that pipelines requests and does not read has no more of their
 * answers in the kernel than the capped send buffer holds (128 KiB, and
 * the answer that filled it), where the buffer grew to take every answer
 * (16 here, 330 KB) before the cap.
 */
static void test_pipeline_bounded_in_kernel(void **state)
{
	struct server *sv = start_big_server();
	int fd = pipeliner(sv->port, "GET /mid.bin HTTP/1.1\r\nHost: x\r\n\r\n", 16, true);
	int port = local_port(fd);
	unsigned txq = 0, last = 1;
	double t0 = mono_s();

	(void)state;
	/* Until the server's send queue grows no more, 0.8 s at most (before
	 * the write deadline drops it). */
	while (txq != last && mono_s() - t0 < 0.8) {
		last = txq;
		usleep(100 * 1000);
		assert_int_equal(tcp_sockets(sv->port, port, &txq), 1);
	}
	print_message("%u bytes of answers in the server's socket\n", txq);
	assert_true(txq > 0);
	assert_true(txq <= 128u * 1024u + MID_ASSET + 512u);
	close(fd);
	stop_server(sv);
}

/* When every place is taken by idle connections, a client that asks gets in. */
/*
 * An address at its limit whose connections wait for their next request
 * (a browser's kept-alive ones) is not refused a new connection that asks:
 * one of its own waiting ones gives its place up.
 */
static void test_per_ip_asker_takes_own_place(void **state)
{
	enum { LIMIT = 3 };
	static const char ask[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
	struct server *sv = start_server(64, LIMIT, NULL, 0);
	int fds[LIMIT], closed;

	(void)state;
	for (int i = 0; i < LIMIT; i++) {
		fds[i] = connect_port(sv->port);
		assert_int_equal(send(fds[i], ask, sizeof(ask) - 1, MSG_NOSIGNAL),
				 (ssize_t)sizeof(ask) - 1);
		read_response(fds[i]);
		assert_int_equal(status_of(resp), 200);
	}
	usleep(200 * 1000);   /* past HTTP_EVICT_MIN_AGE_MS: places that may be given up */
	request(sv->port, "GET", "/healthz", resp);
	assert_int_equal(status_of(resp), 200);
	closed = count_hangups(fds, LIMIT, 1000);
	print_message("%d of %d kept-alive connections gave up their place\n", closed, LIMIT);
	assert_int_equal(closed, 1);
	for (int i = 0; i < LIMIT; i++)
		close(fds[i]);
	stop_server(sv);
}

static void test_full_server_admits_asker(void **state)
{
	enum { N = 4 };
	struct server *sv = start_server(N, 0, NULL, 0);
	int fds[N], closed;

	(void)state;
	for (int i = 0; i < N; i++)
		fds[i] = connect_port(sv->port);
	usleep(200 * 1000);
	request(sv->port, "GET", "/metrics", resp);
	assert_int_equal(status_of(resp), 200);
	closed = count_hangups(fds, N, 1000);
	print_message("%d of %d idle connections gave up their place\n", closed, N);
	assert_true(closed >= 1);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	stop_server(sv);
}

static void test_fd_limit_check(void **state)
{
	unsigned long soft = 0;
	char err[512] = "";

	(void)state;
	/* Enough already. */
	assert_int_equal(http_check_fd_limit(64, 10, 1024, 4096, &soft, err, sizeof(err)), 0);
	assert_int_equal(soft, 1024);
	/* Raised within the hard limit. */
	assert_int_equal(http_check_fd_limit(1000, 10, 1024, 4096, &soft, err, sizeof(err)), 0);
	assert_int_equal(soft, 10 + http_fds_needed(1000));
	assert_true(soft <= 4096);
	/* Beyond the hard limit: a sentence saying what to change. */
	assert_int_equal(http_check_fd_limit(10000, 10, 1024, 4096, &soft, err, sizeof(err)),
			 -EMFILE);
	print_message("%s\n", err);
	assert_non_null(strstr(err, "max_connections = 10000"));
	assert_non_null(strstr(err, "RLIMIT_NOFILE is 4096"));
	assert_non_null(strstr(err, "lower max_connections to 2027"));
	assert_non_null(strstr(err, "LimitNOFILE="));
	assert_true(10 + http_fds_needed(2027) <= 4096);
	assert_true(10 + http_fds_needed(2028) > 4096);
}

/* http_start refuses limits the process cannot hold (in a child: the hard
 * limit cannot be raised again). */
static void test_start_checks_rlimit(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { .rlim_cur = 256, .rlim_max = 256 };
		char err[512] = "";
		int fd;
		struct http_server *s;

		if (setrlimit(RLIMIT_NOFILE, &rl) < 0 ||
		    http_bind("127.0.0.1:0", &fd, err, sizeof(err)) < 0)
			_exit(2);
		s = http_start(&(struct http_options){ .listen_fd = fd, .max_connections = 1000 },
			       err, sizeof(err));
		if (s || !strstr(err, "RLIMIT_NOFILE is 256") || !strstr(err, "max_connections = 1000"))
			_exit(1);
		s = http_start(&(struct http_options){ .listen_fd = fd, .max_connections = 64 },
			       err, sizeof(err));
		_exit(s ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* --- http_bind ---------------------------------------------------------- */

static void test_bind_bad_addresses(void **state)
{
	static const char *const bad[] = {
		"", "127.0.0.1", "127.0.0.1:", ":80", "127.0.0.1:65536", "127.0.0.1:-1",
		"127.0.0.1:80x", "localhost:80", "[::1:80", "[zz]:80", "::1:80", "[]:80",
		"1.2.3:80",
	};
	char err[256], want[512], why[256];
	int fd = -1;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		print_message("address '%s'\n", bad[i]);
		assert_int_equal(http_bind(bad[i], &fd, err, sizeof(err)), -EINVAL);
		/* The one listen parser's own sentence, after the address. */
		assert_int_equal(listen_addr_parse(bad[i], 0, NULL, NULL, why, sizeof(why)), -EINVAL);
		snprintf(want, sizeof(want), "listen '%s': %s", bad[i], why);
		assert_string_equal(err, want);
		assert_int_equal(fd, -1);
	}
}

static void test_bind_in_use(void **state)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char err[256], addr[64], want[256];
	int fd, fd2 = -1;

	(void)state;
	assert_int_equal(http_bind("127.0.0.1:0", &fd, err, sizeof(err)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sa.sin_port));
	assert_int_equal(http_bind(addr, &fd2, err, sizeof(err)), -EADDRINUSE);
	snprintf(want, sizeof(want), "listen '%s': bind: %s", addr, strerror(EADDRINUSE));
	assert_string_equal(err, want);
	assert_int_equal(fd2, -1);
	close(fd);
}

/*
 * A v4-mapped address can only be bound with IPV6_V6ONLY off, so this
 * proves an IPv6 listen socket also takes IPv4 clients, on loopback only.
 */
static void test_bind_v6_dual_stack(void **state)
{
	struct sockaddr_in6 sa;
	socklen_t len = sizeof(sa);
	char err[256];
	int fd, client, r;

	(void)state;
	r = http_bind("[::ffff:127.0.0.1]:0", &fd, err, sizeof(err));
	if (r == -EAFNOSUPPORT)
		skip();
	assert_int_equal(r, 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	assert_int_equal(sa.sin6_family, AF_INET6);
	client = connect_port(ntohs(sa.sin6_port));
	close(client);
	close(fd);

	r = http_bind("[::1]:0", &fd, err, sizeof(err));
	if (r == -EADDRNOTAVAIL)
		skip();
	assert_int_equal(r, 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_metrics_head),
		cmocka_unit_test(test_json_routes),
		cmocka_unit_test(test_healthz),
		cmocka_unit_test(test_before_first_snapshot),
		cmocka_unit_test(test_wrong_method),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_builtin_index),
		cmocka_unit_test(test_assets),
		cmocka_unit_test(test_huge_headers),
		cmocka_unit_test(test_per_ip_limit),
		cmocka_unit_test(test_per_ip_asker_takes_own_place),
		cmocka_unit_test(test_hangup_noticed),
		cmocka_unit_test(test_request_deadline),
		cmocka_unit_test(test_header_limit_exact),
		cmocka_unit_test(test_keep_alive),
		cmocka_unit_test(test_body_refused),
		cmocka_unit_test(test_full_server_admits_asker),
		cmocka_unit_test(test_version_and_target),
		cmocka_unit_test(test_fresh_not_evicted),
		cmocka_unit_test(test_slow_reader),
		cmocka_unit_test(test_non_reader_reset),
		cmocka_unit_test(test_pipelined_reader_served),
		cmocka_unit_test(test_pipeline_bounded_in_kernel),
		cmocka_unit_test(test_orphan_reset_by_kernel),
		cmocka_unit_test(test_fd_limit_check),
		cmocka_unit_test(test_start_checks_rlimit),
		cmocka_unit_test(test_bind_bad_addresses),
		cmocka_unit_test(test_bind_in_use),
		cmocka_unit_test(test_bind_v6_dual_stack),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
