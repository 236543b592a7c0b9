/*
 * The privilege drop: the bounding set first (dropping from it needs
 * CAP_SETPCAP, which the uid change takes away), then groups, gid, uid,
 * the remaining capability sets and no-new-privs, then a verification
 * that reads everything back from the kernel.  Capabilities are changed
 * with raw prctl/capset calls, without libcap.  A capability to keep
 * (CAP_PERFMON) survives the uid change through PR_SET_KEEPCAPS and is
 * then the only bit of the permitted and effective sets; the bounding set
 * is emptied all the same (it limits what execve and the inheritable set
 * could gain, not what the process already holds).  It does not open or keep
 * any privileged resource; main does that before calling it.
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "privdrop.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38   /* linux/capability.h since 5.8 */
#endif

/* Lines of /proc/self/status that must read all zero after the drop. */
static const char *const cap_fields[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };

/*
 * The highest capability number the kernel knows.  Where /proc/sys is
 * hidden (a procfs of PID directories only, systemd's ProcSubset=pid),
 * ask prctl which numbers are valid.
 */
static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int cap = -1;

	if (f) {
		if (fscanf(f, "%d", &cap) != 1)
			cap = -1;
		fclose(f);
	}
	if (cap >= 0)
		return cap;
	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_READ, (unsigned long)cap, 0, 0, 0) < 0)
			break;
	return cap - 1;
}

static int fail(char *err, size_t errlen, int r, const char *user, const char *what)
{
	snprintf(err, errlen, "drop privileges to '%s': %s: %s", user, what, strerror(-r));
	return r;
}

static int drop_bounding_set(void)
{
	int last = last_cap();

	for (int cap = 0; cap <= last; cap++)
		if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	return 0;
}

/* The permitted set now; 0 when it cannot be read. */
static uint64_t permitted_now(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	uint64_t mask = 0;

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return 0;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		mask |= (uint64_t)data[i].permitted << (32 * i);
	return mask;
}

/*
 * The capability bits of keep that this kernel knows and the process
 * holds (a unit whose CapabilityBoundingSet= lacks one starts without it).
 */
static uint64_t keep_mask(unsigned keep)
{
	uint64_t mask = 0;

	if ((keep & PRIVDROP_KEEP_PERFMON) && last_cap() >= CAP_PERFMON)
		mask |= UINT64_C(1) << CAP_PERFMON;
	return mask & permitted_now();
}

/* Permitted and effective = keep, inheritable and ambient empty. */
static int set_capabilities(uint64_t keep)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		data[i].permitted = (uint32_t)(keep >> (32 * i));
		data[i].effective = data[i].permitted;
	}
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

/* Value of a "Name:\t..." line of /proc/self/status, copied to buf. */
static int status_field(const char *name, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	size_t nlen = strlen(name);
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, nlen) == 0) {
			snprintf(buf, len, "%s", line + nlen + strspn(line + nlen, " \t"));
			buf[strcspn(buf, "\n")] = '\0';
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

/* Whether a /proc/self/status capability field reads exactly mask. */
static bool is_mask(const char *hex, uint64_t mask)
{
	char *end;
	unsigned long long v;

	if (hex[0] == '\0')
		return false;
	errno = 0;
	v = strtoull(hex, &end, 16);
	return errno == 0 && *end == '\0' && v == mask;
}

/*
 * Everything read back from the kernel: real and saved ids pw's, effective
 * ids eff's; -EPERM with the first mismatch in err.
 */
static int verify(const struct passwd *pw, const struct passwd *eff, uint64_t keep, char *err,
		  size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	char val[128];

	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
	    ru != pw->pw_uid || eu != eff->pw_uid || su != pw->pw_uid ||
	    rg != pw->pw_gid || eg != eff->pw_gid || sg != pw->pw_gid) {
		snprintf(err, errlen, "drop privileges to '%s': uid/gid did not change, refusing to "
			 "continue", pw->pw_name);
		return -EPERM;
	}
	if (getgroups(0, NULL) != 0) {
		snprintf(err, errlen, "drop privileges to '%s': supplementary groups remain, "
			 "refusing to continue", pw->pw_name);
		return -EPERM;
	}
	for (size_t i = 0; i < sizeof(cap_fields) / sizeof(cap_fields[0]); i++) {
		/* Permitted and effective hold what is kept; every other set is empty. */
		bool kept = strcmp(cap_fields[i], "CapPrm:") == 0 || strcmp(cap_fields[i], "CapEff:") == 0;
		uint64_t want = kept ? keep : 0;

		val[0] = '\0';
		if (status_field(cap_fields[i], val, sizeof(val)) < 0 || !is_mask(val, want)) {
			snprintf(err, errlen, "drop privileges to '%s': /proc/self/status %s is '%s', "
				 "expected %016llx, refusing to continue", pw->pw_name, cap_fields[i], val,
				 (unsigned long long)want);
			return -EPERM;
		}
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "drop privileges to '%s': no-new-privs is not set, refusing "
			 "to continue", pw->pw_name);
		return -EPERM;
	}
	return 0;
}

static int lookup_user(const char *user, struct passwd *ret_pw, char *buf, size_t buflen,
		       char *err, size_t errlen)
{
	struct passwd *found = NULL;
	int r = getpwnam_r(user, ret_pw, buf, buflen, &found);

	if (r != 0) {
		snprintf(err, errlen, "drop privileges: look up user '%s': %s", user, strerror(r));
		return -r;
	}
	if (!found) {
		snprintf(err, errlen, "drop privileges: user '%s' does not exist; create it with "
			 "systemd-sysusers (uncored.sysusers) or set [daemon] user", user);
		return -ENOENT;
	}
	return 0;
}

static int single_threaded(void)
{
	char val[32];

	return status_field("Threads:", val, sizeof(val)) == 0 && strcmp(val, "1") == 0;
}

int privdrop_to_user(const char *user, char *err, size_t errlen)
{
	return privdrop_to_user_keep(user, 0, err, errlen);
}

/*
 * As root: real and saved ids pw's, effective ids eff's, no supplementary
 * group, the capabilities of mask alone, no-new-privs; then verified.
 */
static int become(const char *user, const struct passwd *pw, const struct passwd *eff,
		  uint64_t mask, char *err, size_t errlen)
{
	int r;

	if (!single_threaded()) {
		snprintf(err, errlen, "drop privileges to '%s': other threads already run and would "
			 "keep their capabilities", user);
		return -EBUSY;
	}
	if ((r = drop_bounding_set()) < 0)
		return fail(err, errlen, r, user, "drop the capability bounding set");
	/* Without it the uid change empties the permitted set too. */
	if (mask && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return fail(err, errlen, -errno, user, "PR_SET_KEEPCAPS");
	if (setgroups(0, NULL) < 0)
		return fail(err, errlen, -errno, user, "setgroups");
	if (setresgid(pw->pw_gid, eff->pw_gid, pw->pw_gid) < 0)
		return fail(err, errlen, -errno, user, "setresgid");
	if (setresuid(pw->pw_uid, eff->pw_uid, pw->pw_uid) < 0)
		return fail(err, errlen, -errno, user, "setresuid");
	if ((r = set_capabilities(mask)) < 0)
		return fail(err, errlen, r, user, "clear capabilities");
	if (mask && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return fail(err, errlen, -errno, user, "PR_SET_KEEPCAPS");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return fail(err, errlen, -errno, user, "PR_SET_NO_NEW_PRIVS");
	return verify(pw, eff, mask, err, errlen);
}

int privdrop_to_user_keep(const char *user, unsigned keep, char *err, size_t errlen)
{
	uint64_t mask = keep_mask(keep);
	struct passwd pw;
	char buf[4096];
	int r;

	if (!user || user[0] == '\0' || strcmp(user, "root") == 0 || geteuid() != 0)
		return 1;
	r = lookup_user(user, &pw, buf, sizeof(buf), err, errlen);
	if (r < 0)
		return r;
	r = become(user, &pw, &pw, mask, err, errlen);
	if (r == 0 && (keep & PRIVDROP_KEEP_PERFMON) && !mask)
		return 2;
	return r;
}

int privdrop_to_keeper(const char *user, const char *of, char *err, size_t errlen)
{
	struct passwd pw, eff;
	char buf[4096], effbuf[4096];
	int r;

	if (geteuid() != 0)
		return 1;
	if (!user || user[0] == '\0')
		user = "root";
	r = lookup_user(user, &pw, buf, sizeof(buf), err, errlen);
	if (r == 0)
		r = lookup_user(of, &eff, effbuf, sizeof(effbuf), err, errlen);
	return r < 0 ? r : become(user, &pw, &eff, 0, err, errlen);
}

int privdrop_keep_only(int cap, char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int last = last_cap();

	if (cap < 0 || cap > last || cap >= 32 * _LINUX_CAPABILITY_U32S_3) {
		snprintf(err, errlen, "keep capability %d: no such capability", cap);
		return -EINVAL;
	}
	for (int c = 0; c <= last; c++) {
		if (c != cap && prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0 &&
		    errno != EINVAL) {
			snprintf(err, errlen, "drop the bounding set: %s", strerror(errno));
			return -errno;
		}
	}
	memset(data, 0, sizeof(data));
	data[cap / 32].effective = data[cap / 32].permitted = 1u << (cap % 32);
	if (syscall(SYS_capset, &hdr, data) < 0) {
		snprintf(err, errlen, "capset: %s", strerror(errno));
		return -errno;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) {
		snprintf(err, errlen, "clear the ambient set: %s", strerror(errno));
		return -errno;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "no-new-privileges: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

bool privdrop_will_drop(const char *user)
{
	return user && user[0] && strcmp(user, "root") != 0 && geteuid() == 0;
}
