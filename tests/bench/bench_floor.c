/*
 * The resident-memory floor of the libraries uncored must use: a program
 * that links libmicrohttpd, libsystemd and inih as uncored does, serves
 * one fixed /metrics body from libmicrohttpd's own threads on 127.0.0.1,
 * says READY=1 and waits.  It does no sampling and holds no state, so
 * its VmRSS is what any server built on these libraries costs before its
 * own work; the benchmark prints it beside uncored's.
 *
 * Usage: bench_floor PORT SECONDS   (exits by itself after SECONDS, or on
 *                                    SIGTERM/SIGINT)
 */
#include <arpa/inet.h>
#include <ini.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

static const char body[] = "# TYPE bench_floor_up gauge\nbench_floor_up 1\n";

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	(void)cls; (void)url; (void)method; (void)version; (void)upload; (void)upload_size;
	(void)con_cls;
	r = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)(uintptr_t)body,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Parsing nothing keeps inih a real, loaded dependency like uncored's. */
static int ignore_key(void *user, const char *section, const char *name, const char *value)
{
	(void)user; (void)section; (void)name; (void)value;
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	struct MHD_Daemon *d;
	sigset_t wait_for;
	int port, seconds, sig;

	if (argc != 3 || (port = atoi(argv[1])) <= 0 || port > 65535 ||
	    (seconds = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: bench_floor PORT SECONDS\n");
		return 2;
	}
	ini_parse_string("", ignore_key, NULL);
	/* Blocked before libmicrohttpd's thread exists, so that only sigwait takes them. */
	sigemptyset(&wait_for);
	sigaddset(&wait_for, SIGTERM);
	sigaddset(&wait_for, SIGINT);
	sigaddset(&wait_for, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &wait_for, NULL);
	addr.sin_port = htons((unsigned short)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* Threads as uncored's http.c starts them: a pool of two. */
	d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, 0, NULL, NULL, answer, NULL,
			     MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_THREAD_POOL_SIZE, 2u,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "bench_floor: cannot listen on 127.0.0.1:%d\n", port);
		return 1;
	}
	sd_notify(0, "READY=1");
	alarm((unsigned)seconds);
	sigwait(&wait_for, &sig);
	MHD_stop_daemon(d);
	return 0;
}
