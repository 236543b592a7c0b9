/*
 * What the two sides of the privilege separation (privsep.h) share: the
 * messages on the socket between them and the calls that move them.
 * Internal to privsep.c (the hardware side) and privsep_server.c (the
 * server process).  The message layouts are private to one build: both
 * sides are the same executable.
 */
#ifndef UNCORED_PRIVSEP_WIRE_H
#define UNCORED_PRIVSEP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "http.h"
#include "sample_page.h"

#define PRIVSEP_MAGIC 0x75637232u          /* "ucr2" */
#define PRIVSEP_MAX_DOC (256u << 20)       /* refuse larger: not ours */
#define PRIVSEP_SEND_TIMEOUT_S 10

/*
 * From the hardware side to the server: answers, and the liveness check
 * (MSG_PING, seq its number), which the server's reading thread answers
 * with REQ_PONG at once.  The samples themselves are told through the
 * sample page (sample_page.h), which wakes nobody.
 */
enum { MSG_DOC = 2, MSG_PING = 3 };
struct privsep_msg {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;                      /* the sample's number on this transport */
	uint32_t doc;                      /* the answer to a request */
	uint32_t gzip;
	int32_t status;                    /* 0 (len bytes follow) or -errno */
	uint32_t pad;
	uint64_t len;
};

/* From the server to the hardware side. */
enum { REQ_READY = 1, REQ_DOC = 2, REQ_PONG = 3 };
struct privsep_req {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;                      /* REQ_DOC: which sample, REQ_PONG: which ping; */
	uint32_t doc;                      /* which document, */
	uint32_t gzip;                     /* in which encoding */
};

/*
 * Send all of out (never raising SIGPIPE), or read len bytes into in: one
 * of the two is NULL.  0, -EPIPE at end-of-file or when nothing moves, or
 * -errno.
 */
int privsep_move_all(int fd, const char *out, char *in, size_t len);

/* Send len bytes of buf whole: 0 or -errno (-EPIPE: the other side is gone). */
static inline int privsep_write_all(int fd, const void *buf, size_t len)
{
	return privsep_move_all(fd, buf, NULL, len);
}

/* Read len bytes into buf: 0, -EPIPE at end-of-file (before any byte of buf), or -errno. */
static inline int privsep_read_all(int fd, void *buf, size_t len)
{
	return privsep_move_all(fd, NULL, buf, len);
}

/*
 * The keeper, forked by privsep_start() (privsep_keeper.c): the server's
 * parent, a process the hardware side can always kill, whatever the server
 * does.  It forks the server (privsep_server_main(), with the arguments
 * given here), writes the server's pid to pid_w, closes every other fd,
 * becomes the server's keeper (privdrop_to_keeper(): keeper_user, the
 * hardware side's user, in its real and saved uid, so that the hardware
 * side may signal it after its own drop and the server may not, and
 * server_user in its effective one, so that its death signal reaches the
 * server), dies with the hardware side (hw, its parent:
 * PR_SET_PDEATHSIG), waits for the server and ends as it ended.  The
 * server dies with the keeper (PR_SET_PDEATHSIG, which the kernel sends
 * whatever the uids, and which the server's seccomp filter keeps it from
 * clearing): killing the keeper ends the server, stopped or not.  Never
 * returns.
 */
_Noreturn void privsep_keeper_main(struct http_options ho, const char *server_user,
				   const char *keeper_user, int fd, struct sample_page_source page,
				   int log_w, int pid_w, pid_t hw);

/*
 * The server process, forked by the keeper: serves on ho.listen_fd as
 * user, talks to the hardware side on fd (parent: the keeper), learns of its samples
 * from the sample page page names (mapped read-only, then let go),
 * writes its standard output and error to log_w.  Never returns.
 */
_Noreturn void privsep_server_main(struct http_options ho, const char *user, int fd,
				   struct sample_page_source page, int log_w, pid_t parent);

#endif
