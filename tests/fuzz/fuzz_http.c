/*
 * libFuzzer target for the HTTP request path: the real server (http_start
 * on 127.0.0.1, a port chosen by the kernel, the embedded web page and a
 * small published snapshot) runs for the whole fuzzing session, and every
 * input is sent as raw bytes over a fresh loopback connection.  The method,
 * URL, headers and any body thus go through libmicrohttpd's own parser into
 * our handler, as they would from a real client.  The reply is read until
 * the server closes or stays quiet for a moment; only crashes, leaks and
 * undefined behaviour count, and a reply that never ends shows up as a
 * libFuzzer timeout.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"
#include "hw.h"
#include "http.h"
#include "snapshot.h"
#include "web_assets.h"

/*
 * The server answers a complete request within a millisecond here and
 * closes a half-closed connection once it has answered, or at once when
 * the request is incomplete; the short quiet spell only bounds the wait
 * should it not, and the reset drops the server's side at once.
 */
#define REPLY_IDLE_MS 30

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct http_server *server;
static struct sockaddr_in server_addr;

/* One socket, two cores of two threads, with a temperature and TjMax. */
static int publish_snapshot(void)
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

	if (!s)
		return -1;
	s->time = (double)time(NULL);
	s->interval_s = 1.0;
	s->samples = 1;
	snapshot_publish(s);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	socklen_t len = sizeof(server_addr);
	char err[256];
	int fd;

	(void)argc;
	(void)argv;
	if (http_bind("127.0.0.1:0", &fd, err, sizeof(err)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&server_addr, &len) < 0) {
		fprintf(stderr, "fuzz_http: %s\n", err);
		abort();
	}
	struct http_options opt = {
		.listen_fd = fd, .max_connections = 64, .request_timeout_s = 2,
		.max_header_bytes = 8192, .interval_s = 1.0,
		.assets = web_assets, .n_assets = web_n_assets,
	};
	server = http_start(&opt, err, sizeof(err));
	if (!server || publish_snapshot() < 0) {
		fprintf(stderr, "fuzz_http: %s\n", server ? "out of memory" : err);
		abort();
	}
	return 0;
}

/* Read and drop the reply until the peer closes, an error or a quiet spell. */
static void drain(int fd)
{
	char buf[16384];
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, REPLY_IDLE_MS) > 0) {
		if (recv(fd, buf, sizeof(buf), 0) <= 0)
			return;
	}
}

/* Close with a reset, so the server drops its side at once. */
static void close_reset(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	const uint8_t *p = data;
	size_t left = size;

	if (fd < 0)
		return 0;
	if (connect(fd, (const struct sockaddr *)&server_addr, sizeof(server_addr)) < 0) {
		close(fd);
		return 0;
	}
	/* The server may answer and hang up before reading it all. */
	while (left > 0) {
		ssize_t n = send(fd, p, left, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		p += n;
		left -= (size_t)n;
	}
	/* End of request: a keep-alive connection then closes after the reply. */
	shutdown(fd, SHUT_WR);
	drain(fd);
	close_reset(fd);
	return 0;
}
