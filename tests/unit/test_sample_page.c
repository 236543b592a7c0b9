/*
 * Unit tests of the sample page (sample_page.h), a memfd and, under a
 * file size limit below a page, a System V segment: a reader sees no
 * sample before the first write, then the header last written, never a
 * mix of two while the writer goes on; the read-only mapping (the
 * server's) cannot be made writable; the memfd admits no new writable
 * mapping, no write(2) and no change of size or seals, and the segment is
 * its owner's alone and marked for removal; a child inherits the
 * read-only mapping but not the writable one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "sample_page.h"

struct pages {
	struct sample_page_source src;
	struct sample_page *rw;
	const struct sample_page *ro;
};

/*
 * A page and its read-only mapping; limited: made under a file size limit
 * of 0 (the soft limit, given back after), which no memfd fits.
 */
static void open_pages(struct pages *p, bool limited)
{
	struct rlimit rl, zero;
	char err[256];

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	zero = (struct rlimit){ .rlim_cur = 0, .rlim_max = rl.rlim_max };
	if (limited)
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &zero), 0);
	assert_int_equal(sample_page_create(&p->src, &p->rw, err, sizeof(err)), 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
	assert_true(limited ? p->src.fd < 0 && p->src.shm_id >= 0 : p->src.fd >= 0);
	assert_int_equal(sample_page_map(&p->src, &p->ro, err, sizeof(err)), 0);
}

static void close_pages(struct pages *p)
{
	sample_page_unmap(p->rw);
	sample_page_unmap(p->ro);
	sample_page_source_close(&p->src);
}

static void read_what_was_written(bool limited)
{
	struct sample_header h = { .samples = 99 };
	struct pages p;

	open_pages(&p, limited);
	assert_true(sample_page_read(p.ro, &h));
	assert_int_equal(h.samples, 0);
	sample_page_write(p.rw, &(struct sample_header){ .samples = 1, .time = 1700000000.25,
							 .interval_s = 0.25 });
	sample_page_write(p.rw, &(struct sample_header){ .samples = 2, .time = 1700000000.5,
							 .interval_s = 0.5 });
	assert_true(sample_page_read(p.ro, &h));
	assert_int_equal(h.samples, 2);
	assert_true(h.time == 1700000000.5);
	assert_true(h.interval_s == 0.5);
	close_pages(&p);
}

static void test_read_what_was_written(void **state)
{
	(void)state;
	read_what_was_written(false);
	read_what_was_written(true);
}

/* The read-only mapping (the server's) cannot be made writable. */
static void assert_read_only(const struct pages *p)
{
	long size = sysconf(_SC_PAGESIZE);

	errno = 0;
	assert_int_equal(mprotect((void *)(uintptr_t)p->ro, (size_t)size, PROT_READ | PROT_WRITE), -1);
	assert_int_equal(errno, EACCES);
}

/* The server's rights on a memfd: reading, and nothing that writes the page. */
static void test_memfd_read_only(void **state)
{
	long size = sysconf(_SC_PAGESIZE);
	struct pages p;
	void *m;

	(void)state;
	open_pages(&p, false);
	assert_read_only(&p);
	m = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, p.src.fd, 0);
	assert_true(m == MAP_FAILED);
	assert_int_equal(errno, EPERM);
	/* Read-only and shared, then made writable: refused too. */
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, p.src.fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m, (size_t)size, PROT_READ | PROT_WRITE), -1);
	munmap(m, (size_t)size);
	assert_int_equal(pwrite(p.src.fd, "x", 1, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(p.src.fd, size * 2), -1);
	assert_int_equal(ftruncate(p.src.fd, 0), -1);
	/* The seals themselves are sealed: none can be taken off or added. */
	assert_int_equal(fcntl(p.src.fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(fcntl(p.src.fd, F_GET_SEALS) & F_SEAL_FUTURE_WRITE, F_SEAL_FUTURE_WRITE);
	/* The writer's mapping made before the seal still writes. */
	sample_page_write(p.rw, &(struct sample_header){ .samples = 7 });
	close_pages(&p);
}

/*
 * On a segment: the read-only attachment stays so; the segment is its
 * owner's alone (the server attaches it before it changes user) and goes
 * with the last process attached.
 */
static void test_segment_read_only(void **state)
{
	struct shmid_ds ds;
	struct pages p;

	(void)state;
	open_pages(&p, true);
	assert_read_only(&p);
	assert_int_equal(shmctl(p.src.shm_id, IPC_STAT, &ds), 0);
	assert_int_equal(ds.shm_perm.mode & 0777, 0600);
	assert_int_equal(ds.shm_perm.uid, geteuid());
	assert_true(ds.shm_perm.mode & SHM_DEST);
	assert_int_equal(ds.shm_nattch, 2);
	close_pages(&p);
}

/*
 * A child (the server, forked) has the read-only mapping and not the
 * writable one, and maps the page itself from the source.
 */
static void writer_not_inherited(bool limited)
{
	long size = sysconf(_SC_PAGESIZE);
	struct pages p;
	int status;
	pid_t pid;

	open_pages(&p, limited);
	sample_page_write(p.rw, &(struct sample_header){ .samples = 3 });
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const struct sample_page *own;
		unsigned char vec;
		struct sample_header h;
		char err[256];
		int code = 0;

		/* mincore() says ENOMEM for an address with nothing mapped. */
		if (mincore(p.rw, (size_t)size, &vec) != -1 || errno != ENOMEM)
			code |= 1;
		if (mincore((void *)(uintptr_t)p.ro, (size_t)size, &vec) != 0)
			code |= 2;
		if (!sample_page_read(p.ro, &h) || h.samples != 3)
			code |= 4;
		if (sample_page_map(&p.src, &own, err, sizeof(err)) < 0 ||
		    !sample_page_read(own, &h) || h.samples != 3)
			code |= 8;
		_exit(code);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close_pages(&p);
}

static void test_writer_not_inherited(void **state)
{
	(void)state;
	writer_not_inherited(false);
	writer_not_inherited(true);
}

#define RACE_WRITES 200000

struct race {
	struct pages p;
	atomic_bool done;
};

/* Headers whose three fields agree: a mix of two writes would not. */
static void *writer_main(void *arg)
{
	struct race *r = arg;

	for (uint64_t n = 1; n <= RACE_WRITES; n++)
		sample_page_write(r->p.rw, &(struct sample_header){ .samples = n, .time = (double)n,
								    .interval_s = (double)n / 4 });
	atomic_store(&r->done, true);
	return NULL;
}

static void test_no_torn_header(void **state)
{
	struct race r = { 0 };
	uint64_t last = 0, reads = 0;
	pthread_t writer;

	(void)state;
	open_pages(&r.p, false);
	assert_int_equal(pthread_create(&writer, NULL, writer_main, &r), 0);
	while (!atomic_load(&r.done) || last < RACE_WRITES) {
		struct sample_header h;

		if (!sample_page_read(r.p.ro, &h))
			continue;
		reads++;
		assert_true(h.time == (double)h.samples);
		assert_true(h.interval_s == (double)h.samples / 4);
		assert_true(h.samples >= last);
		last = h.samples;
	}
	assert_int_equal(pthread_join(writer, NULL), 0);
	assert_int_equal(last, RACE_WRITES);
	assert_true(reads > 0);
	close_pages(&r.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_what_was_written),
		cmocka_unit_test(test_memfd_read_only),
		cmocka_unit_test(test_segment_read_only),
		cmocka_unit_test(test_writer_not_inherited),
		cmocka_unit_test(test_no_torn_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
