/*
 * The ledger's state file.  It owns the file's format (a header naming the
 * backend, then one text record per line), the lock that makes it one
 * daemon's, the appends and rewrites the pmu ledger asks for, and the
 * start-up recovery that undoes a killed daemon's leftover programming.
 * It does not decide when to journal; pmu.c does, before each write.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger_file.h"
#include "log.h"
#include "msr.h"

#define HEADER_TAG "uncored-ledger 1 "
#define RECORD_MAX 96

struct ledger_file {
	int fd;
	char path[4096];
	size_t size;
	int error;
};

/* ---- records ---- */

static int format_record(const struct ledger_record *r, char *buf, size_t len)
{
	switch (r->kind) {
	case LEDGER_OWN:
		if (!r->has_written)
			return snprintf(buf, len, "own %d 0x%" PRIx32 " 0x%" PRIx64 " -\n", r->cpu,
					r->msr, r->original);
		return snprintf(buf, len, "own %d 0x%" PRIx32 " 0x%" PRIx64 " 0x%" PRIx64 "\n",
				r->cpu, r->msr, r->original, r->written);
	case LEDGER_BITS:
		return snprintf(buf, len, "bits %d 0x%" PRIx32 " 0x%" PRIx64 "\n", r->cpu, r->msr,
				r->bits);
	default:
		return snprintf(buf, len, "drop %d 0x%" PRIx32 "\n", r->cpu, r->msr);
	}
}

/* Parse one complete line; false for anything malformed. */
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
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 64;
			struct ledger_record *v = realloc(s->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			s->v = v;
			s->cap = cap;
		}
		s->n++;
	}
	s->v[i] = *r;
	return 0;
}

/*
 * Read the journal from fd.  Returns 1 with the state when the file holds
 * records, 0 when it is empty, -EBADMSG when the header is not ours, or
 * -errno.  A last line without its newline (cut short) is ignored.
 */
static int read_journal(int fd, const char *backend_id, struct replay *s)
{
	FILE *f = fdopen(dup(fd), "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int r = 0, n = 0;

	if (!f)
		return -errno;
	while (r >= 0 && (len = getline(&line, &cap, f)) > 0) {
		struct ledger_record rec;

		if (line[len - 1] != '\n')
			break;
		line[len - 1] = '\0';
		if (n++ == 0) {
			if (strncmp(line, HEADER_TAG, strlen(HEADER_TAG)) != 0)
				r = -EBADMSG;
			else if (strcmp(line + strlen(HEADER_TAG), backend_id) != 0)
				r = -ESTALE;
			continue;
		}
		if (parse_record(line, &rec))
			r = replay_apply(s, &rec);
	}
	free(line);
	fclose(f);
	if (r < 0)
		return r;
	return n > 0;
}

/* ---- recovery ---- */

static bool cpu_listed(const int *cpus, size_t n, int cpu)
{
	for (size_t i = 0; i < n; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

/*
 * Bits a register never reads back as written: OCC_CTR_RST of the uncore
 * event selects always reads 0 (hardware.md §1.4), so a select uncored
 * wrote with it set reads back without it.
 */
static const struct {
	uint32_t first_msr;
	uint32_t n;
	uint64_t write_only;
} write_only_bits[] = {
	{ MSR_UNCORE_PERFEVTSEL0, 8, UNC_EVTSEL_OCC_CTR_RST },
};

/* Whether a register reading now still holds what uncored wrote. */
static bool holds_written(uint32_t msr, uint64_t now, uint64_t written)
{
	for (size_t i = 0; i < sizeof(write_only_bits) / sizeof(write_only_bits[0]); i++)
		if (msr - write_only_bits[i].first_msr < write_only_bits[i].n)
			written &= ~write_only_bits[i].write_only, now &= ~write_only_bits[i].write_only;
	return now == written;
}

/* Restore an owned register if it still holds what uncored wrote; false if taken over. */
static bool restore_if_ours(struct hw *hw, const struct ledger_record *r, struct ledger_recovery *rec)
{
	uint64_t now;

	if (hw_read_msr(hw, r->cpu, r->msr, &now)) {
		rec->failed++;
		return true;
	}
	if (!holds_written(r->msr, now, r->written)) {
		rec->left++;
		return false;
	}
	if (hw_write_msr(hw, r->cpu, r->msr, r->original))
		rec->failed++;
	else
		rec->cleaned++;
	return true;
}

static void clear_bits(struct hw *hw, const struct ledger_record *r, struct ledger_recovery *rec)
{
	uint64_t now;

	if (hw_read_msr(hw, r->cpu, r->msr, &now)) {
		rec->failed++;
		return;
	}
	if (!(now & r->bits))
		return;
	if (hw_write_msr(hw, r->cpu, r->msr, now & ~r->bits))
		rec->failed++;
	else
		rec->cleaned++;
}

/*
 * Undo the replayed state.  Owned registers are judged first: one that no
 * longer holds uncored's value marks its CPU as shared with another agent,
 * and on such a CPU the enable bits and the counters uncored only
 * remembered are left alone (the other agent may be relying on them).
 * Elsewhere enable bits are cleared first, so nothing counts while the
 * rest is put back.
 */
static void recover(struct hw *hw, const struct replay *s, struct ledger_recovery *rec)
{
	int *taken = calloc(s->n + 1, sizeof(*taken));
	size_t n_taken = 0;

	if (!taken) {
		rec->failed += (unsigned)s->n;
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct ledger_record *r = &s->v[i];

		if (r->kind == LEDGER_OWN && r->has_written && !restore_if_ours(hw, r, rec) &&
		    !cpu_listed(taken, n_taken, r->cpu))
			taken[n_taken++] = r->cpu;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].kind == LEDGER_BITS && !cpu_listed(taken, n_taken, s->v[i].cpu))
			clear_bits(hw, &s->v[i], rec);
	for (size_t i = 0; i < s->n; i++) {
		const struct ledger_record *r = &s->v[i];

		if (r->kind != LEDGER_OWN || r->has_written)
			continue;
		if (cpu_listed(taken, n_taken, r->cpu))
			rec->left++;
		else if (hw_write_msr(hw, r->cpu, r->msr, r->original))
			rec->failed++;
		else
			rec->cleaned++;
	}
	free(taken);
}

/* ---- the file ---- */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Empty the file and write the header. */
static int reset(struct ledger_file *lf, const char *backend_id)
{
	char header[4200];
	int len = snprintf(header, sizeof(header), HEADER_TAG "%s\n", backend_id);

	if (ftruncate(lf->fd, 0) < 0 || lseek(lf->fd, 0, SEEK_SET) < 0)
		return -errno;
	lf->size = 0;
	return write_all(lf->fd, header, (size_t)len);
}

static int lock_and_recover(struct ledger_file *lf, const char *backend_id, struct hw *hw,
			    struct ledger_recovery *rec, char *err, size_t errlen)
{
	struct replay s = { 0 };
	int r;

	if (flock(lf->fd, LOCK_EX | LOCK_NB) < 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(err, errlen, "%s: %s", lf->path, r == -EBUSY ?
			 "in use by another uncored process" : strerror(-r));
		return r;
	}
	r = read_journal(lf->fd, backend_id, &s);
	if (r == -EBADMSG) {
		snprintf(err, errlen, "%s: not an uncored state file, leaving it alone", lf->path);
	} else if (r == -ESTALE) {
		log_warning("%s: written for another hardware backend, discarded unapplied", lf->path);
		r = 0;
	} else if (r < 0) {
		snprintf(err, errlen, "%s: %s", lf->path, strerror(-r));
	} else if (r > 0) {
		rec->found = true;
		recover(hw, &s, rec);
		r = 0;
	}
	free(s.v);
	if (r == 0)
		r = reset(lf, backend_id);
	return r;
}

int ledger_file_open(const char *path, const char *backend_id, struct hw *hw,
		     struct ledger_file **ret_lf, struct ledger_recovery *ret_rec,
		     char *err, size_t errlen)
{
	struct ledger_file *lf = calloc(1, sizeof(*lf));
	int r;

	memset(ret_rec, 0, sizeof(*ret_rec));
	if (!lf)
		return -ENOMEM;
	snprintf(lf->path, sizeof(lf->path), "%s", path);
	lf->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lf->fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		free(lf);
		return r;
	}
	r = lock_and_recover(lf, backend_id, hw, ret_rec, err, errlen);
	if (r < 0) {
		if (!err[0])
			snprintf(err, errlen, "%s: %s", path, strerror(-r));
		close(lf->fd);
		free(lf);
		return r;
	}
	*ret_lf = lf;
	return 0;
}

int ledger_file_append(struct ledger_file *lf, const struct ledger_record *r)
{
	char buf[RECORD_MAX];
	int len = format_record(r, buf, sizeof(buf));
	int e;

	if (lf->error)
		return lf->error;
	e = write_all(lf->fd, buf, (size_t)len);
	if (e) {
		lf->error = e;
		return e;
	}
	lf->size += (size_t)len;
	return 0;
}

int ledger_file_rewrite(struct ledger_file *lf, const struct ledger_record *r, size_t n)
{
	char *buf = malloc(n * RECORD_MAX + 1), header[4200];
	size_t len = 0;
	ssize_t hlen;
	int e;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		len += (size_t)format_record(&r[i], buf + len, RECORD_MAX);
	/* Keep the header line as it is: only the records go. */
	hlen = pread(lf->fd, header, sizeof(header), 0);
	e = hlen > 0 ? 0 : -EIO;
	if (e == 0) {
		char *nl = memchr(header, '\n', (size_t)hlen);

		e = nl && ftruncate(lf->fd, nl + 1 - header) == 0 ? 0 : -EIO;
	}
	if (e == 0)
		e = write_all(lf->fd, buf, len);
	free(buf);
	if (e)
		lf->error = lf->error ? lf->error : e;
	else
		lf->size = len;
	return e;
}

size_t ledger_file_size(const struct ledger_file *lf)
{
	return lf->size;
}

int ledger_file_error(const struct ledger_file *lf)
{
	return lf->error;
}

void ledger_file_close(struct ledger_file *lf)
{
	if (!lf)
		return;
	if (ftruncate(lf->fd, 0) < 0)
		log_warning("%s: cannot empty the state file: %s", lf->path, strerror(errno));
	/* Fails once privileges are dropped; the empty file says the same. */
	(void)unlink(lf->path);
	close(lf->fd);
	free(lf);
}
