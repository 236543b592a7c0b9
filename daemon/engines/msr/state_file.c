/*
 * The ledger's state file.  It owns the file's format (a header naming the
 * backend, then one text record per line), the lock that makes it one
 * daemon's, reading a killed daemon's records at start-up, and the appends
 * and rewrites the register ledger asks for.  It reads and writes records
 * only: which registers a record may name and how to undo them is the msr
 * engine's (recovery.c), and when to journal is the ledger's (ledger.c).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "grow.h"
#include "state_file.h"
#include "trusted_dir.h"

#define HEADER_TAG "uncored-ledger 2 "
#define RECORD_MAX 112
/* A state file larger than this is not one uncored wrote (compaction keeps it near 64 KiB). */
#define FILE_MAX (16u << 20)

void (*state_file_rewrite_hook)(int step);

struct state_file {
	int fd;
	int dir_fd;            /* the directory, where the file is renamed aside */
	char path[4096];
	char name[256];        /* the file's name in dir_fd */
	size_t header_len;
	size_t size;           /* bytes of records after the header */
	int error;
	char backend_id[4096]; /* for the header */
	struct ledger_record *found;  /* the dead daemon's records, until state_file_begin */
	size_t n_found;
	struct ledger_record *left;   /* records recovery could not apply (state_file_left) */
	int *left_err;
	size_t n_left;
};

/* ---- records ---- */

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xedb88320) of len bytes. */
static uint32_t crc32(const char *p, size_t len)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < len; i++) {
		c ^= (unsigned char)p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & -(c & 1u));
	}
	return ~c;
}

/* Append " *CRC\n" to the text in buf[0..len); returns the new length. */
static int seal(char *buf, int len, size_t cap)
{
	return len + snprintf(buf + len, cap - (size_t)len, " *%08" PRIx32 "\n",
			      crc32(buf, (size_t)len));
}

static int format_record(const struct ledger_record *r, char *buf, size_t len)
{
	int n;

	switch (r->kind) {
	case LEDGER_OWN:
		if (!r->has_written)
			n = snprintf(buf, len, "own %d 0x%" PRIx32 " 0x%" PRIx64 " -", r->cpu,
				     r->msr, r->original);
		else
			n = snprintf(buf, len, "own %d 0x%" PRIx32 " 0x%" PRIx64 " 0x%" PRIx64,
				     r->cpu, r->msr, r->original, r->written);
		break;
	case LEDGER_BITS:
		n = snprintf(buf, len, "bits %d 0x%" PRIx32 " 0x%" PRIx64, r->cpu, r->msr, r->bits);
		break;
	default:
		n = snprintf(buf, len, "drop %d 0x%" PRIx32, r->cpu, r->msr);
		break;
	}
	return seal(buf, n, len);
}

/*
 * Check the checksum of one line (without its newline) and cut it off;
 * false when it is missing or wrong.
 */
static bool unseal(char *line)
{
	char *star = strrchr(line, '*');
	char *end;
	unsigned long want;

	if (!star || star == line || star[-1] != ' ' || strlen(star + 1) != 8)
		return false;
	errno = 0;
	want = strtoul(star + 1, &end, 16);
	if (errno || *end || !isxdigit((unsigned char)star[1]))
		return false;
	star[-1] = '\0';
	return crc32(line, (size_t)(star - 1 - line)) == (uint32_t)want;
}

/* Parse one record's text (checksum removed); false for anything malformed. */
static bool parse_record(const char *line, struct ledger_record *r)
{
	char written[24], extra;

	memset(r, 0, sizeof(*r));
	if (sscanf(line, "own %d %" SCNx32 " %" SCNx64 " %23s %c", &r->cpu, &r->msr, &r->original,
		   written, &extra) == 4) {
		r->kind = LEDGER_OWN;
		if (strcmp(written, "-") == 0)
			return true;
		r->has_written = true;
		return sscanf(written, "%" SCNx64 "%c", &r->written, &extra) == 1;
	}
	if (sscanf(line, "bits %d %" SCNx32 " %" SCNx64 " %c", &r->cpu, &r->msr, &r->bits,
		   &extra) == 3) {
		r->kind = LEDGER_BITS;
		return true;
	}
	r->kind = LEDGER_DROP;
	return sscanf(line, "drop %d %" SCNx32 " %c", &r->cpu, &r->msr, &extra) == 2;
}

/* The replayed state: the last record of every register still held. */
struct replay {
	struct ledger_record *v;
	size_t n, cap;
};

static int replay_apply(struct replay *s, const struct ledger_record *r)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].cpu == r->cpu && s->v[i].msr == r->msr)
			break;
	if (r->kind == LEDGER_DROP || (r->kind == LEDGER_BITS && !r->bits)) {
		if (i < s->n)
			s->v[i] = s->v[--s->n];
		return 0;
	}
	if (i == s->n) {
		struct ledger_record *v = grow_array(s->v, &s->cap, s->n + 1, sizeof(*v), 64);

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->n++;
	}
	s->v[i] = *r;
	return 0;
}

/* The file split into lines; a last line without its newline was cut short by a kill. */
struct lines {
	char *buf;
	char **v;
	size_t n;
};

static void lines_free(struct lines *l)
{
	free(l->buf);
	free(l->v);
}

static int read_lines(int fd, struct lines *l)
{
	struct stat st;
	size_t len = 0, cap;
	ssize_t got;

	memset(l, 0, sizeof(*l));
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > FILE_MAX)
		return -EFBIG;
	cap = (size_t)st.st_size + 1;
	l->buf = malloc(cap);
	l->v = malloc(cap * sizeof(*l->v));
	if (!l->buf || !l->v)
		return -ENOMEM;
	while (len < cap - 1 && (got = pread(fd, l->buf + len, cap - 1 - len, (off_t)len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		len += (size_t)got;
	}
	for (size_t i = 0; i < len;) {
		char *nl = memchr(l->buf + i, '\n', len - i);

		if (!nl)
			break;   /* cut short: its write never finished, nor did the one it describes */
		*nl = '\0';
		l->v[l->n++] = l->buf + i;
		i = (size_t)(nl - l->buf) + 1;
	}
	return 0;
}

/* Whether line is a sealed record; fills r. Modifies line. */
static bool valid_record(char *line, struct ledger_record *r)
{
	return strlen(line) < RECORD_MAX && unseal(line) && parse_record(line, r);
}

/* If lines[i] starts a checkpoint whose every record is valid, its record count. */
static bool checkpoint_at(const struct lines *l, size_t i, size_t *ret_n)
{
	char copy[RECORD_MAX], extra;
	size_t n;

	if (strlen(l->v[i]) >= sizeof(copy))
		return false;
	strcpy(copy, l->v[i]);
	if (!unseal(copy) || sscanf(copy, "state %zu %c", &n, &extra) != 1 || n > l->n - i - 1)
		return false;
	for (size_t k = 1; k <= n; k++) {
		struct ledger_record r;

		if (strlen(l->v[i + k]) >= sizeof(copy))
			return false;
		strcpy(copy, l->v[i + k]);
		if (!valid_record(copy, &r))
			return false;
	}
	*ret_n = n;
	return true;
}

/*
 * Replay the records of l into s.  A complete checkpoint replaces
 * everything before it, damage included; an incomplete one (a kill while
 * it was appended) is read as ordinary records.  Damaged lines and records
 * outside the allow-list are counted in rec and skipped.
 */
static int replay_lines(struct lines *l, struct replay *s, bool (*allowed)(const struct ledger_record *),
			struct ledger_recovery *rec)
{
	for (size_t i = 1; i < l->n; i++) {
		struct ledger_record r;
		size_t n;
		int e;

		if (checkpoint_at(l, i, &n)) {
			s->n = 0;
			rec->damaged = rec->refused = 0;
			rec->first_damaged_line = 0;
			continue;
		}
		if (strncmp(l->v[i], "state ", 6) == 0) {
			char copy[RECORD_MAX];

			snprintf(copy, sizeof(copy), "%s", l->v[i]);
			if (strlen(l->v[i]) < sizeof(copy) && unseal(copy))
				continue;   /* an incomplete checkpoint's start */
		}
		if (!valid_record(l->v[i], &r)) {
			if (!rec->damaged++)
				rec->first_damaged_line = (unsigned)i + 1;
			continue;
		}
		if (!allowed(&r)) {
			if (!rec->refused++) {
				rec->refused_cpu = r.cpu;
				rec->refused_msr = r.msr;
			}
			continue;
		}
		e = replay_apply(s, &r);
		if (e)
			return e;
	}
	return 0;
}

/*
 * Read the journal from fd.  Returns 1 with the state when the file holds
 * records, 0 when it is empty, -EBADMSG when it is not an uncored state
 * file at all (no header and no valid record), -ESTALE when it was written
 * for another backend, or -errno.
 */
static int read_journal(int fd, const char *backend_id,
			bool (*allowed)(const struct ledger_record *), struct replay *s,
			struct ledger_recovery *rec)
{
	struct lines l;
	int r = read_lines(fd, &l);

	if (r == 0 && l.n > 0) {
		char *header = l.v[0];
		bool is_ours = strncmp(header, "uncored-ledger ", 15) == 0;

		if (is_ours && unseal(header) && strncmp(header, HEADER_TAG, strlen(HEADER_TAG)) == 0) {
			if (strcmp(header + strlen(HEADER_TAG), backend_id) != 0)
				r = -ESTALE;
		} else {
			rec->header_damaged = true;
		}
		if (r == 0)
			r = replay_lines(&l, s, allowed, rec);
		if (r == 0 && !is_ours && s->n == 0 && rec->refused == 0)
			r = -EBADMSG;   /* no line of it is ours */
		if (r == 0)
			r = l.n > 1;
	}
	lines_free(&l);
	return r;
}

/* ---- the file ---- */

static int pwrite_all(int fd, const char *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Empty the file and write the header. */
static int reset(struct state_file *lf, const char *backend_id)
{
	char header[4200];
	int len = snprintf(header, sizeof(header), HEADER_TAG "%s", backend_id);

	if (len >= (int)sizeof(header) - 16)
		return -ENAMETOOLONG;
	len = seal(header, len, sizeof(header));
	if (ftruncate(lf->fd, 0) < 0)
		return -errno;
	lf->size = 0;
	lf->header_len = (size_t)len;
	return pwrite_all(lf->fd, header, (size_t)len, 0);
}

/* The directory part of path into dir. */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == path)
		snprintf(dir, len, "/");
	else if (slash)
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
	else
		snprintf(dir, len, ".");
}

/*
 * Open the directory of lf->path, walked and checked from "/" without
 * following a link (trusted_dir.h).
 */
static int open_dir(struct state_file *lf, char *err, size_t errlen)
{
	char dir[4096];
	const char *slash = strrchr(lf->path, '/'), *base = slash ? slash + 1 : lf->path;

	if (!base[0] || strlen(base) >= sizeof(lf->name)) {
		snprintf(err, errlen, "%s: not a file name", lf->path);
		return -EINVAL;
	}
	memcpy(lf->name, base, strlen(base) + 1);
	dir_of(lf->path, dir, sizeof(dir));
	lf->dir_fd = trusted_dir_open(dir, err, errlen);
	return lf->dir_fd < 0 ? lf->dir_fd : 0;
}

/*
 * Lock the open file fd for this daemon's lifetime: the file is root's
 * and 0600, so no other user can open it to take the lock (its directory,
 * which anyone may open, would be no lock at all).
 */
static int lock_file(int fd, const char *path, char *err, size_t errlen)
{
	int r;

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	r = errno == EWOULDBLOCK ? -EBUSY : -errno;
	snprintf(err, errlen, "%s: %s", path, r == -EBUSY ? "in use by another uncored process" :
		 strerror(-r));
	return r;
}

int state_file_check_path(const char *path, char *err, size_t errlen)
{
	char dir[4096], parent[4096];
	const char *why, *slash = strrchr(path, '/');
	struct stat st;
	int fd, r;

	dir_of(path, dir, sizeof(dir));
	fd = trusted_dir_open(dir, err, errlen);
	if (fd == -ENOENT) {
		/* Start-up creates one missing level, as root (mode 0755), in a parent that must do. */
		dir_of(dir, parent, sizeof(parent));
		fd = trusted_dir_open(parent, err, errlen);
		if (fd >= 0) {
			close(fd);
			err[0] = '\0';
			return 0;
		}
	}
	if (fd < 0)
		return fd;
	r = fstatat(fd, slash ? slash + 1 : path, &st, AT_SYMLINK_NOFOLLOW);
	close(fd);
	if (r < 0)
		return 0;   /* created at start-up */
	why = S_ISLNK(st.st_mode) ? "a symbolic link" : trusted_dir_why(&st, false);
	if (!why && st.st_nlink != 1)
		why = "linked elsewhere too";
	if (why) {
		snprintf(err, errlen, "%s: %s, so it is not trusted and not replayed", path, why);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EPERM;
	}
	return 0;
}

/* Open the file in its directory without following a link or blocking on a FIFO, and check it. */
static int open_file(struct state_file *lf, char *err, size_t errlen)
{
	struct stat st;
	const char *why;
	int r;

	lf->fd = openat(lf->dir_fd, lf->name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK |
			O_NOCTTY, 0600);
	if (lf->fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", lf->path,
			 r == -ELOOP ? "a symbolic link, not trusted" : strerror(-r));
		return r == -ELOOP ? -EPERM : r;
	}
	if (fstat(lf->fd, &st) < 0)
		return -errno;
	why = trusted_dir_why(&st, false);
	if (!why && st.st_nlink != 1)
		why = "linked elsewhere too";
	if (why) {
		snprintf(err, errlen, "%s: %s, so it is not trusted and not replayed", lf->path, why);
		return -EPERM;
	}
	return lock_file(lf->fd, lf->path, err, errlen);
}

/* Keep a damaged file as PATH.damaged and start a new one.  Root only, at start-up. */
static int keep_damaged(struct state_file *lf, struct ledger_recovery *rec)
{
	char aside[300];
	int fd;

	snprintf(aside, sizeof(aside), "%s.damaged", lf->name);
	fd = openat(lf->dir_fd, lf->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	close(fd);
	if (renameat(lf->dir_fd, lf->name, lf->dir_fd, aside) < 0)
		return -errno;
	fd = openat(lf->dir_fd, lf->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	/* The lock moves with the file: the old one is only the damaged copy now. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	close(lf->fd);
	lf->fd = fd;
	rec->kept = true;
	return 0;
}

/* Release everything lf holds: descriptors, the records read, the records left. */
static void release(struct state_file *lf)
{
	if (lf->fd >= 0)
		close(lf->fd);
	if (lf->dir_fd >= 0)
		close(lf->dir_fd);
	free(lf->found);
	free(lf->left);
	free(lf->left_err);
	free(lf);
}

/* Read the dead daemon's records into lf->found. */
static int read_file(struct state_file *lf, bool (*allowed)(const struct ledger_record *),
		     struct ledger_recovery *rec, char *err, size_t errlen)
{
	struct replay s = { 0 };
	int r = read_journal(lf->fd, lf->backend_id, allowed, &s, rec);

	if (r == -EBADMSG) {
		snprintf(err, errlen, "%s: not an uncored state file, leaving it alone", lf->path);
	} else if (r == -ESTALE) {
		log_warning("%s: written for another hardware backend, discarded unapplied", lf->path);
		r = 0;
	} else if (r < 0) {
		snprintf(err, errlen, "%s: %s", lf->path, strerror(-r));
	} else if (r > 0) {
		rec->found = true;
		lf->found = s.v;
		lf->n_found = s.n;
		return 0;
	}
	free(s.v);
	return r;
}

int state_file_open(const char *path, const char *backend_id,
		    bool (*allowed)(const struct ledger_record *r), struct state_file **ret_lf,
		    struct ledger_recovery *ret_rec, char *err, size_t errlen)
{
	struct state_file *lf = calloc(1, sizeof(*lf));
	int r;

	memset(ret_rec, 0, sizeof(*ret_rec));
	if (!lf)
		return -ENOMEM;
	lf->fd = lf->dir_fd = -1;
	snprintf(lf->path, sizeof(lf->path), "%s", path);
	snprintf(lf->backend_id, sizeof(lf->backend_id), "%s", backend_id);
	r = open_dir(lf, err, errlen);
	if (r == 0)
		r = open_file(lf, err, errlen);
	if (r == 0)
		r = read_file(lf, allowed, ret_rec, err, errlen);
	if (r < 0) {
		if (!err[0])
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
		release(lf);
		return r;
	}
	*ret_lf = lf;
	return 0;
}

size_t state_file_found(const struct state_file *lf, const struct ledger_record **ret_records)
{
	*ret_records = lf->found;
	return lf->n_found;
}

/* Keep the records found whose errs[i] is set as left (state_file_left).  Returns 0 or -ENOMEM. */
static int keep_left(struct state_file *lf, const int *errs)
{
	lf->left = calloc(lf->n_found + 1, sizeof(*lf->left));
	lf->left_err = calloc(lf->n_found + 1, sizeof(*lf->left_err));
	if (!lf->left || !lf->left_err)
		return -ENOMEM;
	for (size_t i = 0; errs && i < lf->n_found; i++) {
		if (!errs[i])
			continue;
		lf->left[lf->n_left] = lf->found[i];
		lf->left_err[lf->n_left++] = errs[i];
	}
	return 0;
}

int state_file_begin(struct state_file *lf, const int *errs, struct ledger_recovery *rec,
		     char *err, size_t errlen)
{
	int r = keep_left(lf, errs);

	if (r == 0 && (rec->header_damaged || rec->damaged || rec->refused)) {
		int e = keep_damaged(lf, rec);

		if (e)
			log_warning("%s: cannot keep the damaged file as %s.damaged: %s",
				    lf->path, lf->name, strerror(-e));
	}
	free(lf->found);
	lf->found = NULL;
	lf->n_found = 0;
	if (r == 0)
		r = reset(lf, lf->backend_id);
	/* What could not be undone stays journaled before anything else is. */
	for (size_t i = 0; r == 0 && i < lf->n_left; i++)
		r = state_file_append(lf, &lf->left[i]);
	if (r == 0 && fsync(lf->fd) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", lf->path, strerror(-r));
		release(lf);
	}
	return r;
}

static void note_error(struct state_file *lf, int e)
{
	if (!lf->error)
		lf->error = e;
}

int state_file_append(struct state_file *lf, const struct ledger_record *r)
{
	char buf[RECORD_MAX];
	int len = format_record(r, buf, sizeof(buf));
	/* Not O_APPEND: Linux's pwrite() would append too, and rewrites need it. */
	int e = pwrite_all(lf->fd, buf, (size_t)len, (off_t)(lf->header_len + lf->size));

	if (e) {
		/* A part written would be a damaged line: cut it off again. */
		(void)!ftruncate(lf->fd, (off_t)(lf->header_len + lf->size));
		note_error(lf, e);
		return e;
	}
	lf->size += (size_t)len;
	return 0;
}

static void hook(int step)
{
	if (state_file_rewrite_hook)
		state_file_rewrite_hook(step);
}

int state_file_rewrite(struct state_file *lf, const struct ledger_record *r, size_t n)
{
	char *buf = malloc((n + 1) * RECORD_MAX);
	size_t len, end = lf->header_len + lf->size;
	int e;

	if (!buf)
		return -ENOMEM;
	len = (size_t)seal(buf, snprintf(buf, RECORD_MAX, "state %zu", n), RECORD_MAX);
	for (size_t i = 0; i < n; i++)
		len += (size_t)format_record(&r[i], buf + len, RECORD_MAX);
	/* 1: the checkpoint after the records; a kill while writing it leaves them. */
	e = pwrite_all(lf->fd, buf, len, (off_t)end);
	if (e == 0 && fdatasync(lf->fd) < 0)
		e = -errno;
	if (e) {
		(void)!ftruncate(lf->fd, (off_t)end);
		goto out;
	}
	hook(1);
	lf->size += len;
	/*
	 * 2: the checkpoint over the old records, when it fits before its
	 * copy; a kill meanwhile leaves the copy at the end complete.
	 */
	if (lf->header_len + len > end)
		goto out;
	e = pwrite_all(lf->fd, buf, len, (off_t)lf->header_len);
	if (e == 0 && fdatasync(lf->fd) < 0)
		e = -errno;
	if (e)
		goto out;
	hook(2);
	/* 3: cut after the first copy. */
	if (ftruncate(lf->fd, (off_t)(lf->header_len + len)) < 0 || fdatasync(lf->fd) < 0) {
		e = -errno;
		goto out;
	}
	lf->size = len;
	hook(3);
out:
	free(buf);
	if (e)
		note_error(lf, e);
	return e;
}

size_t state_file_size(const struct state_file *lf)
{
	return lf->size;
}

int state_file_error(const struct state_file *lf)
{
	return lf->error;
}

size_t state_file_left(const struct state_file *lf, const struct ledger_record **ret_records,
			const int **ret_errs)
{
	*ret_records = lf->left;
	if (ret_errs)
		*ret_errs = lf->left_err;
	return lf->n_left;
}

void state_file_close(struct state_file *lf)
{
	if (!lf)
		return;
	if (ftruncate(lf->fd, 0) < 0)
		log_warning("%s: cannot empty the state file: %s", lf->path, strerror(errno));
	/* Fails once privileges are dropped; the empty file says the same. */
	(void)unlinkat(lf->dir_fd, lf->name, 0);
	release(lf);
}

void state_file_keep(struct state_file *lf)
{
	if (!lf)
		return;
	if (fsync(lf->fd) < 0)
		log_warning("%s: cannot sync the state file: %s", lf->path, strerror(errno));
	release(lf);
}
