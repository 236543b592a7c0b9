/*
 * The server's seccomp filter; see sandbox.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox.h"

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the argument checks read the low word of each argument first in memory"
#endif

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

/* Calls the server may make; the ones an architecture lacks drop out. */
static const int allowed[] = {
	SYS_read, SYS_write, SYS_readv, SYS_writev, SYS_recvfrom, SYS_sendto, SYS_recvmsg,
	SYS_sendmsg, SYS_ppoll, SYS_accept4, SYS_shutdown, SYS_close, SYS_setsockopt,
	SYS_getsockopt, SYS_getsockname, SYS_getpeername,
	SYS_brk, SYS_munmap, SYS_mremap, SYS_madvise,
	SYS_futex, SYS_sched_yield, SYS_rt_sigprocmask, SYS_rt_sigreturn, SYS_restart_syscall,
	SYS_clock_gettime, SYS_clock_getres, SYS_clock_nanosleep, SYS_nanosleep, SYS_gettimeofday,
	SYS_getpid, SYS_gettid, SYS_fstat, SYS_exit, SYS_exit_group,
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

/*
 * Calls that fail with EACCES instead of killing.  newfstatat is here, not
 * allowed: it takes a path, which a filter cannot read, and an absolute
 * one ignores the fd even with AT_EMPTY_PATH.  libmicrohttpd never calls
 * it; glibc's fstat() does (newfstatat(fd, "", AT_EMPTY_PATH)) for stdio
 * buffering on a standard stream, which the server does not use (log.h
 * writes with write(2)), and takes the error path; fstat itself (an fd
 * alone) stays allowed.
 */
static const int refused[] = { SYS_openat, SYS_socket, SYS_newfstatat,
#ifdef SYS_open
	SYS_open,
#endif
#ifdef SYS_stat
	SYS_stat, SYS_lstat,
#endif
};

/* ioctl requests the server makes: FIONREAD (bytes waiting on a socket,
 * the acceptor's test for a request in flight) and TCGETS (isatty(), from
 * stdio; harmless, it only reads terminal settings). */
static const unsigned ioctl_allowed[] = { FIONREAD, TCGETS };

/* fcntl commands: libmicrohttpd's non-blocking and close-on-exec flags.
 * F_SETFL is checked further: no O_ASYNC (which, with F_SETOWN and
 * F_SETSIG, makes the kernel signal another process). */
static const unsigned fcntl_allowed[] = { F_GETFL, F_GETFD, F_SETFD };

#define N_ALLOWED (sizeof(allowed) / sizeof(allowed[0]))
#define N_REFUSED (sizeof(refused) / sizeof(refused[0]))
#define N_IOCTL (sizeof(ioctl_allowed) / sizeof(ioctl_allowed[0]))
#define N_FCNTL (sizeof(fcntl_allowed) / sizeof(fcntl_allowed[0]))
/* Room for the program; sandbox_install checks it is enough. */
#define MAX_INSNS 200

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

/* Where a jump goes: an instruction index, or a label resolved at the end. */
enum label { L_KILL, L_TRAP, L_EACCES, L_ALLOW, L_PRCTL, L_IOCTL, L_FCNTL, L_SETFL, L_PROT, N_LABELS };

/* A program being written; jumps name labels, resolved by prog_finish(). */
struct prog {
	struct sock_filter f[MAX_INSNS];
	int jt[MAX_INSNS], jf[MAX_INSNS];   /* label of a jump's target, -1: next */
	size_t n, at[N_LABELS];
	bool overflow;
};

static void emit(struct prog *p, struct sock_filter insn, int jt, int jf)
{
	if (p->n >= MAX_INSNS) {
		p->overflow = true;
		return;
	}
	p->jt[p->n] = jt;
	p->jf[p->n] = jf;
	p->f[p->n++] = insn;
}

static void load(struct prog *p, unsigned offset)
{
	emit(p, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), -1, -1);
}

/* Go to label when A == k, else on. */
static void jeq(struct prog *p, unsigned k, enum label target)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 0), (int)target, -1);
}

/* Go to label when A & k, else on. */
static void jset(struct prog *p, unsigned k, enum label target)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, k, 0, 0), (int)target, -1);
}

static void jump(struct prog *p, enum label target)
{
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0), (int)target, -1);
}

static void mark(struct prog *p, enum label l)
{
	p->at[l] = p->n;
}

static void ret(struct prog *p, enum label l, unsigned action)
{
	mark(p, l);
	emit(p, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action), -1, -1);
}

/* Resolve every jump; -EINVAL when the program is too long or a jump too far. */
static int prog_finish(struct prog *p)
{
	if (p->overflow)
		return -EINVAL;
	for (size_t i = 0; i < p->n; i++) {
		bool ja = p->f[i].code == (BPF_JMP | BPF_JA);
		size_t t = p->jt[i] >= 0 ? p->at[p->jt[i]] : i + 1;
		size_t f = p->jf[i] >= 0 ? p->at[p->jf[i]] : i + 1;

		if (t <= i || f <= i || (!ja && (t - i - 1 > 255 || f - i - 1 > 255)))
			return -EINVAL;
		if (ja)
			p->f[i].k = (unsigned)(t - i - 1);
		else if (BPF_CLASS(p->f[i].code) == BPF_JMP) {
			p->f[i].jt = (unsigned char)(t - i - 1);
			p->f[i].jf = (unsigned char)(f - i - 1);
		}
	}
	return 0;
}

/* The low word of argument i: the kernel takes each checked one as an int. */
#define ARG_LO(i) ((unsigned)offsetof(struct seccomp_data, args[i]))

/* At label l: load argument word arg and go to L_ALLOW when it is one of list; else on. */
static void allow_arg_in(struct prog *p, enum label l, unsigned arg, const unsigned *list,
			 size_t n)
{
	mark(p, l);
	load(p, arg);
	for (size_t i = 0; i < n; i++)
		jeq(p, list[i], L_ALLOW);
}

/* At label l: trap when argument word arg has any of bits, else allow. */
static void refuse_arg_bits(struct prog *p, enum label l, unsigned arg, unsigned bits)
{
	mark(p, l);
	load(p, arg);
	jset(p, bits, L_TRAP);
	jump(p, L_ALLOW);
}

static void build(struct prog *p)
{
	load(p, offsetof(struct seccomp_data, arch));
	emit(p, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 0, 0), -1,
	     L_KILL);
	load(p, offsetof(struct seccomp_data, nr));
	/* x32 calls are numbered with this bit set; none are allowed. */
	jset(p, __X32_SYSCALL_BIT, L_KILL);
	for (size_t i = 0; i < N_ALLOWED; i++)
		jeq(p, (unsigned)allowed[i], L_ALLOW);
	for (size_t i = 0; i < N_REFUSED; i++)
		jeq(p, (unsigned)refused[i], L_EACCES);
	jeq(p, SYS_prctl, L_PRCTL);
	jeq(p, SYS_ioctl, L_IOCTL);
	jeq(p, SYS_fcntl, L_FCNTL);
	jeq(p, SYS_mmap, L_PROT);
	jeq(p, SYS_mprotect, L_PROT);
	jump(p, L_TRAP);

	/* prctl(PR_SET_NAME) only: libmicrohttpd's threads name themselves as they start. */
	mark(p, L_PRCTL);
	load(p, ARG_LO(0));
	jeq(p, PR_SET_NAME, L_ALLOW);
	jump(p, L_TRAP);

	/* ioctl: the requests above only (no TIOCSTI, no terminal or socket control). */
	allow_arg_in(p, L_IOCTL, ARG_LO(1), ioctl_allowed, N_IOCTL);
	jump(p, L_TRAP);

	/* fcntl: the commands above, and F_SETFL without O_ASYNC (no F_SETOWN, F_SETSIG). */
	allow_arg_in(p, L_FCNTL, ARG_LO(1), fcntl_allowed, N_FCNTL);
	jeq(p, F_SETFL, L_SETFL);
	jump(p, L_TRAP);
	refuse_arg_bits(p, L_SETFL, ARG_LO(2), O_ASYNC);

	/* mmap, mprotect: never executable memory (W^X for an exploit). */
	refuse_arg_bits(p, L_PROT, ARG_LO(2), PROT_EXEC);

	ret(p, L_KILL, SECCOMP_RET_KILL_PROCESS);
	ret(p, L_TRAP, SECCOMP_RET_TRAP);
	ret(p, L_EACCES, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA));
	ret(p, L_ALLOW, SECCOMP_RET_ALLOW);
}

int sandbox_install(char *err, size_t errlen)
{
#ifndef SANDBOX_ARCH
	snprintf(err, errlen, "seccomp: no filter for this architecture");
	return -ENOSYS;
#else
	static struct prog p;   /* before any thread, once: no need for the stack */
	struct sigaction sa = { .sa_sigaction = on_forbidden_call, .sa_flags = SA_SIGINFO };
	struct sock_fprog prog;

	memset(&p, 0, sizeof(p));
	build(&p);
	if (prog_finish(&p) < 0) {
		snprintf(err, errlen, "seccomp: the filter does not fit %d instructions "
			 "of 8-bit jumps", MAX_INSNS);
		return -EINVAL;
	}
	prog = (struct sock_fprog){ .len = (unsigned short)p.n, .filter = p.f };

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
