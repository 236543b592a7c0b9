/*
 * The sample page shared by the two processes; see sample_page.h.
 *
 * A seqlock: the writer makes seq odd, writes the fields, makes it even
 * again; a reader copies the fields between two reads of seq and keeps
 * the copy when both saw the same even number.  The fields are atomics
 * read and written relaxed (a double travels as its bits), so that a
 * reader racing the writer reads stale or torn values it then discards,
 * never undefined ones; the fences order them against seq.  The atomics
 * must be lock-free to work between processes.  The page is unmapped with
 * munmap() either way: a System V attachment is a mapping like another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <time.h>
#include <unistd.h>

#include "sample_page.h"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_LONG_LOCK_FREE == 2,
	       "the sample page needs lock-free 64-bit atomics, shared between processes");

struct sample_page {
	_Atomic uint64_t seq;              /* odd while the header is written */
	_Atomic uint64_t samples;
	_Atomic uint64_t time_bits;        /* the doubles' bits */
	_Atomic uint64_t interval_bits;
};

/* The seals: a fixed size, and no writable mapping or write(2) from now on. */
#define SAMPLE_PAGE_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)

/* A reader spins this many tries, then sleeps between tries, up to READ_TRIES. */
#define READ_SPINS 64
#define READ_TRIES 1000
#define READ_PAUSE_NS 50000

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

static uint64_t bits_of(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double double_of(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/*
 * Whether this process may make a file of size bytes: past RLIMIT_FSIZE's
 * soft limit ftruncate() fails with EFBIG (and raises SIGXFSZ).
 */
static bool file_fits(size_t size)
{
	struct rlimit rl;

	return getrlimit(RLIMIT_FSIZE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	       rl.rlim_cur >= size;
}

/* A sealed memfd of size bytes in src->fd and a writable mapping of it in *m; 0 or -errno. */
static int create_memfd(struct sample_page_source *src, void **m, size_t size, const char **what)
{
	int f = memfd_create("uncored-sample", MFD_CLOEXEC | MFD_ALLOW_SEALING), e;

	*m = MAP_FAILED;
	*what = "memfd_create";
	if (f < 0)
		return -errno;
	*what = "ftruncate";
	if (ftruncate(f, (off_t)size) == 0) {
		*what = "mmap";
		*m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	}
	/* After the writable mapping, which the seal lets work on. */
	if (*m != MAP_FAILED) {
		*what = "sealing it against writes (F_SEAL_FUTURE_WRITE needs Linux 5.1)";
		if (fcntl(f, F_ADD_SEALS, SAMPLE_PAGE_SEALS) == 0) {
			src->fd = f;
			return 0;
		}
	}
	e = errno;
	if (*m != MAP_FAILED)
		munmap(*m, size);
	close(f);
	return -e;
}

/*
 * A System V segment of size bytes, this process's user's alone, in
 * src->shm_id, attached writable at *m and marked for removal: it goes
 * with the last process attached, whatever happens.  0 or -errno.
 */
static int create_segment(struct sample_page_source *src, void **m, size_t size,
			  const char **what)
{
	int id, e;

	*what = "shmget (under a file size limit below a page, no memfd can be sized)";
	id = shmget(IPC_PRIVATE, size, IPC_CREAT | IPC_EXCL | 0600);
	if (id < 0)
		return -errno;
	*what = "shmat";
	*m = shmat(id, NULL, 0);
	e = *m == (void *)-1 ? errno : 0;
	if (shmctl(id, IPC_RMID, NULL) < 0 && e == 0) {
		e = errno;
		*what = "shmctl(IPC_RMID)";
		shmdt(*m);
	}
	if (e)
		return -e;
	src->shm_id = id;
	return 0;
}

int sample_page_create(struct sample_page_source *src, struct sample_page **ret, char *err,
		       size_t errlen)
{
	size_t size = page_size();
	const char *what;
	void *m = MAP_FAILED;
	int e;

	*src = (struct sample_page_source){ .fd = -1, .shm_id = -1 };
	e = file_fits(size) ? create_memfd(src, &m, size, &what) : create_segment(src, &m, size, &what);
	/* Not in the server, nor in any other child. */
	if (e == 0 && madvise(m, size, MADV_DONTFORK) < 0) {
		e = -errno;
		what = "madvise(MADV_DONTFORK)";
		munmap(m, size);
		sample_page_source_close(src);
	}
	if (e < 0) {
		snprintf(err, errlen, "the sample page: %s: %s", what, strerror(-e));
		return e;
	}
	*ret = m;
	return 0;
}

int sample_page_map(const struct sample_page_source *src, const struct sample_page **ret,
		    char *err, size_t errlen)
{
	void *m;

	if (src->fd >= 0)
		m = mmap(NULL, page_size(), PROT_READ, MAP_SHARED, src->fd, 0);
	else
		m = shmat(src->shm_id, NULL, SHM_RDONLY);
	if (m == MAP_FAILED) {             /* shmat's failure too: (void *)-1 */
		int e = errno;

		snprintf(err, errlen, "the sample page: %s read-only: %s",
			 src->fd >= 0 ? "mmap" : "shmat", strerror(e));
		return -e;
	}
	*ret = m;
	return 0;
}

void sample_page_source_close(struct sample_page_source *src)
{
	if (src->fd >= 0)
		close(src->fd);
	*src = (struct sample_page_source){ .fd = -1, .shm_id = -1 };
}

void sample_page_write(struct sample_page *page, const struct sample_header *h)
{
	uint64_t seq = atomic_load_explicit(&page->seq, memory_order_relaxed);

	atomic_store_explicit(&page->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&page->samples, h->samples, memory_order_relaxed);
	atomic_store_explicit(&page->time_bits, bits_of(h->time), memory_order_relaxed);
	atomic_store_explicit(&page->interval_bits, bits_of(h->interval_s), memory_order_relaxed);
	atomic_store_explicit(&page->seq, seq + 2, memory_order_release);
}

bool sample_page_read(const struct sample_page *page, struct sample_header *h)
{
	for (int tries = 0; tries < READ_TRIES; tries++) {
		struct sample_header copy;
		uint64_t seq;

		if (tries >= READ_SPINS)   /* the writer was put off the CPU: let it finish */
			nanosleep(&(struct timespec){ .tv_nsec = READ_PAUSE_NS }, NULL);
		seq = atomic_load_explicit(&page->seq, memory_order_acquire);
		if (seq & 1)
			continue;
		copy.samples = atomic_load_explicit(&page->samples, memory_order_relaxed);
		copy.time = double_of(atomic_load_explicit(&page->time_bits, memory_order_relaxed));
		copy.interval_s = double_of(atomic_load_explicit(&page->interval_bits,
								 memory_order_relaxed));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&page->seq, memory_order_relaxed) == seq) {
			*h = copy;
			return true;
		}
	}
	return false;
}

void sample_page_unmap(const struct sample_page *page)
{
	if (page)
		munmap((void *)(uintptr_t)page, page_size());   /* mapped by us: ours to unmap */
}
