/*
 * The sample page: one page of shared memory through which the hardware
 * side tells the server process of its newest sample (privsep.h), without
 * waking it.
 *
 * The hardware side creates it (a memfd) before the server is forked and
 * keeps the only writable mapping, which no child inherits
 * (MADV_DONTFORK).  The memfd is sealed before the fork: it can neither
 * shrink nor grow, and no new writable mapping nor write(2) can be made
 * of it (F_SEAL_FUTURE_WRITE, Linux 5.1), so the server maps it read-only
 * and cannot make its mapping writable either (mprotect fails).  A memfd
 * is a file, which a process may not grow past its RLIMIT_FSIZE: under a
 * limit below one page (ulimit -f 0) the page is a System V shared memory
 * segment instead, which no file size limit bounds, owned by the user
 * that started the daemon with mode 0600, marked for removal at once (it
 * goes with the last process that has it attached), and attached
 * read-only by the server before it drops to its user: that mapping
 * cannot be made writable either (the kernel clears VM_MAYWRITE), and
 * the server's seccomp filter allows no shmat() after.  The page holds
 * the newest sample's header, which the hardware side writes after each
 * sample and the server reads only when a client asks for something; a
 * sequence count (odd while the header is written) lets the reader take
 * a consistent copy without a lock the two processes would share.
 */
#ifndef UNCORED_SAMPLE_PAGE_H
#define UNCORED_SAMPLE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the server learns of a sample without asking (what /healthz needs). */
struct sample_header {
	uint64_t samples;          /* the sample's number on the transport; 0: none yet */
	double time;               /* unix time of the sample */
	double interval_s;         /* the sampling interval it was taken at */
};

/* The shared page (sample_page.c); opaque to both sides. */
struct sample_page;

/* What a reader maps the page by, valid in a child forked after sample_page_create(). */
struct sample_page_source {
	int fd;                    /* the sealed memfd (close-on-exec), or -1 */
	int shm_id;                /* else the System V segment's id */
};

/*
 * In the hardware side, before the fork: a page holding no sample yet, in
 * *ret this process's writable mapping of it, which no child inherits,
 * and in *src what a reader maps it by (release it with
 * sample_page_source_close() once the reader has mapped it).  0, or a
 * negative errno with a sentence in err (no memfd, a kernel before 5.1
 * that cannot seal one against writes, or, under a file size limit below
 * a page, no System V shared memory).
 */
int sample_page_create(struct sample_page_source *src, struct sample_page **ret, char *err,
		       size_t errlen);

/*
 * A read-only mapping of the page src names (from sample_page_create(),
 * in this process or a child forked after it), in *ret.  0, or a
 * negative errno with a sentence in err.
 */
int sample_page_map(const struct sample_page_source *src, const struct sample_page **ret,
		    char *err, size_t errlen);

/* Close src's memfd, if any (a segment is already marked for removal); src becomes empty. */
void sample_page_source_close(struct sample_page_source *src);

/*
 * Make h the page's header.  Only through the writable mapping, and from
 * one thread at a time (the caller serializes).
 */
void sample_page_write(struct sample_page *page, const struct sample_header *h);

/*
 * A consistent copy of the page's header in *h (h->samples 0: no sample
 * yet).  Never blocks; false (h untouched) when a writer held the page
 * for the whole of many tries, as one killed while writing would.
 */
bool sample_page_read(const struct sample_page *page, struct sample_header *h);

/* Unmap page (either mapping).  NULL is allowed. */
void sample_page_unmap(const struct sample_page *page);

#endif
