/*
 * The privileged opener: the smallest process that can still open a CPU's
 * msr and cpuid devices after the daemon has dropped root (privdrop.h), so
 * that a CPU that comes online after start is monitored on the device
 * backend too (hw_dev.h, hwdev_set_opener).
 *
 * It is forked from the hardware side before the privilege drop, while the
 * process has one thread.  It keeps exactly what opening the devices needs
 * and nothing else:
 *   - user root, because /dev/cpu/N/msr and /dev/cpu/N/cpuid are owned by
 *     root with mode 0600 (no CAP_DAC_OVERRIDE is kept: ownership does);
 *   - CAP_SYS_RAWIO, which msr_open checks (hardware-linux.md §2, the
 *     driver table); every other capability is dropped from every set,
 *     the bounding set included, and no-new-privs is set;
 *   - one end of a socketpair, and the standard streams for its log; every
 *     other fd is closed.
 * (Started by a normal user, as in tests, it keeps that user's rights and
 * drops nothing.)  It answers one request at a time: a CPU number in, the two fds out
 * (SCM_RIGHTS) or a negative errno.  It builds the paths itself from the
 * root prefix it was started with and the number, so it can open nothing
 * but those two device files of a CPU.  It ignores the stop signals (they
 * stay blocked as the daemon left them) and exits when the daemon closes
 * its end or dies (end-of-file).  The daemon without it, after the drop,
 * holds no capability at all.
 */
#ifndef UNCORED_HWOPEN_H
#define UNCORED_HWOPEN_H

#include <stddef.h>
#include <sys/types.h>

struct hwopen;

/* How long a request waits for the opener's answer before it is taken as gone. */
#define HWOPEN_ANSWER_MS 1000
/* How long the stop waits for the opener to exit. */
#define HWOPEN_STOP_MS 200

/*
 * Fork the opener for devices under root ("/" for the machine).  Returns
 * 0 and the handle, or a negative errno with a sentence in err.
 */
int hwopen_start(const char *root, struct hwopen **ret, char *err, size_t errlen);

/*
 * Ask the opener for cpu's msr (read-write) and cpuid (read-only) fds: a
 * hwdev_opener, with arg the handle.  Returns 0 with both fds, or a
 * negative errno: the open's (-ENXIO: the CPU is offline again), -EPIPE
 * when the opener is gone, or -ETIMEDOUT when it did not answer within
 * HWOPEN_ANSWER_MS (a stopped or stuck opener).  After -EPIPE or
 * -ETIMEDOUT the opener is gone for good: every later call returns -EPIPE
 * at once, so the caller (the sampler's thread) never blocks on it again.
 */
int hwopen_open(void *arg, int cpu, int *ret_msr_fd, int *ret_cpuid_fd);

/* The opener's process id. */
pid_t hwopen_pid(const struct hwopen *o);

/*
 * A descriptor that becomes readable when the opener exits (a pidfd), for
 * the main loop's poll; -1 when there is none (NULL, or already reaped).
 */
int hwopen_exit_fd(const struct hwopen *o);

/*
 * When the opener has exited: reap it, say how in why ("exited with status
 * 1", "was killed by SIGKILL") and return 1; else 0.  Main thread only.
 */
int hwopen_reap(struct hwopen *o, char *why, size_t whylen);

/*
 * Close the daemon's end and free.  Waits at most HWOPEN_STOP_MS for the
 * opener to exit: a stopped one is left behind, and exits at end-of-file
 * when it runs again.  NULL is allowed.
 */
void hwopen_stop(struct hwopen *o);

#endif
