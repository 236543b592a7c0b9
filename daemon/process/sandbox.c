/*
 * The server's seccomp filter; see sandbox.h.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox.h"

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the prctl check reads the low word of args[0] first in memory"
#endif

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

/* Calls the server may make; the ones an architecture lacks drop out. */
static const int allowed[] = {
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_recvfrom, SYS_sendto, SYS_recvmsg,
	SYS_sendmsg, SYS_ppoll, SYS_accept4, SYS_shutdown, SYS_close, SYS_setsockopt,
	SYS_getsockopt, SYS_getsockname, SYS_getpeername, SYS_fcntl, SYS_ioctl,
	SYS_brk, SYS_mmap, SYS_munmap, SYS_mremap, SYS_mprotect, SYS_madvise,
	SYS_futex, SYS_sched_yield, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_restart_syscall,
	SYS_clock_gettime, SYS_clock_getres, SYS_clock_nanosleep, SYS_nanosleep, SYS_gettimeofday,
	SYS_getpid, SYS_gettid, SYS_fstat, SYS_newfstatat, SYS_exit, SYS_exit_group,
	/*
	 * Harmless to a process that holds only sockets and the standard
	 * streams, and seen from libraries under load: lseek (stdio on a
	 * standard stream), identity reads, getrandom.
	 */
	SYS_lseek, SYS_getppid, SYS_getuid, SYS_geteuid, SYS_getgid, SYS_getegid, SYS_getrandom,
	/*
	 * What a thread does as it starts, which the server's may not have done
	 * yet: glibc's rseq and robust list; the sanitizers' runtime (test
	 * builds) also sets an alternate signal stack and reads its affinity.
	 */
	SYS_rseq, SYS_set_robust_list, SYS_sigaltstack, SYS_sched_getaffinity,
#ifdef SYS_poll
	SYS_poll,
#endif
#ifdef SYS_accept
	SYS_accept,
#endif
#ifdef SYS_time
	SYS_time,
#endif
#ifdef SYS_futex_time64
	SYS_futex_time64,
#endif
};

/* Calls that fail with EACCES instead of killing. */
static const int refused[] = { SYS_openat, SYS_socket,
#ifdef SYS_open
	SYS_open,
#endif
};

#define N_ALLOWED (sizeof(allowed) / sizeof(allowed[0]))
#define N_REFUSED (sizeof(refused) / sizeof(refused[0]))
/*
 * Load arch, check it, load nr, check x32, one jump per call, prctl's
 * check of its option, three returns.
 */
#define N_INSNS (5 + N_ALLOWED + N_REFUSED + 3 + 4)

/*
 * A call outside the filter traps here first, so that the log says which
 * call it was; then the handler makes another forbidden call.  SIGSYS is
 * blocked inside its own handler, so the kernel kills the whole process
 * with SIGSYS, as SECCOMP_RET_KILL_PROCESS would have.  Only
 * async-signal-safe calls, and only ones the filter allows, before that.
 */
static void on_forbidden_call(int sig, siginfo_t *si, void *context)
{
	char msg[96] = "uncored: server: system call ";
	size_t len = strlen(msg);
	char digits[12];
	int n = 0;
	unsigned nr = (unsigned)si->si_syscall;
	static const char tail[] = " is outside its seccomp filter\n";

	(void)sig;
	(void)context;
	do
		digits[n++] = (char)('0' + nr % 10);
	while ((nr /= 10) && n < (int)sizeof(digits));
	while (n > 0)
		msg[len++] = digits[--n];
	memcpy(msg + len, tail, sizeof(tail) - 1);
	len += sizeof(tail) - 1;
	if (write(STDERR_FILENO, msg, len) < 0) {
		/* nothing more to say */
	}
	syscall(SYS_ptrace, 0, 0, 0, 0);   /* not allowed: the kernel now kills with SIGSYS */
	_exit(128 + SIGSYS);    /* not reached */
}

static void jump_to(struct sock_filter *f, size_t at, unsigned nr, size_t target)
{
	f[at] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr,
					     (unsigned char)(target - at - 1), 0);
}

int sandbox_install(char *err, size_t errlen)
{
#ifndef SANDBOX_ARCH
	snprintf(err, errlen, "seccomp: no filter for this architecture");
	return -ENOSYS;
#else
	struct sock_filter f[N_INSNS];
	size_t n = 0, kill_at = N_INSNS - 4, trap_at = N_INSNS - 3, eacces_at = N_INSNS - 2,
	       allow_at = N_INSNS - 1;
	struct sigaction sa = { .sa_sigaction = on_forbidden_call, .sa_flags = SA_SIGINFO };
	struct sock_fprog prog = { .len = N_INSNS, .filter = f };

	_Static_assert(N_INSNS < 250, "every jump fits in 8 bits");
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0);
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, (unsigned)(kill_at - n - 1), 0, 0);
	n++;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	/* x32 calls are numbered with this bit set; none are allowed. */
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, __X32_SYSCALL_BIT,
					    (unsigned char)(kill_at - n - 1), 0);
	n++;
	for (size_t i = 0; i < N_ALLOWED; i++, n++)
		jump_to(f, n, (unsigned)allowed[i], allow_at);
	for (size_t i = 0; i < N_REFUSED; i++, n++)
		jump_to(f, n, (unsigned)refused[i], eacces_at);
	/* prctl(PR_SET_NAME) only: libmicrohttpd's threads name themselves as they start. */
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0,
					    (unsigned char)(trap_at - n - 1));
	n++;
	/* The low word of the option: the kernel takes it as an int. */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, args[0]));
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_NAME,
					    (unsigned char)(allow_at - n - 1), (unsigned char)(trap_at - n - 1));
	n++;
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA));
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	if (n != N_INSNS) {
		snprintf(err, errlen, "seccomp: the filter has %zu instructions, not %zu", n,
			 (size_t)N_INSNS);
		return -EINVAL;
	}

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		snprintf(err, errlen, "seccomp: SIGSYS handler: %s", strerror(errno));
		return -errno;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "seccomp: PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
		return -errno;
	}
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
		int e = errno;

		/* > 0: the id of a thread that could not be synchronised. */
		snprintf(err, errlen, "seccomp: install the filter on every thread: %s",
			 e ? strerror(e) : "a thread refused it");
		return e ? -e : -EBUSY;
	}
	return 0;
#endif
}
