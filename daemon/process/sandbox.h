/*
 * The server process's system-call filter (seccomp, SPEC §8): the process
 * that parses HTTP may only do what serving bytes it already holds needs.
 *
 * A raw BPF program (no libseccomp) allows: reading and writing the
 * sockets it holds (read, write, readv, writev, recvfrom, sendto, recvmsg,
 * sendmsg, poll, ppoll, accept4, shutdown, close, setsockopt,
 * getsockopt, getsockname, getpeername), memory management for malloc
 * (brk, munmap, mremap, madvise), threads waiting for each other (futex,
 * sched_yield, rt_sigprocmask, rt_sigreturn, restart_syscall), what a
 * thread does as it starts (rseq, set_robust_list, and for the
 * sanitizers' runtime sigaltstack and sched_getaffinity: the filter may
 * reach a thread before it ran), clocks and sleeps, leaving (exit,
 * exit_group), fstat of an fd and lseek, reads of its own ids, getrandom.
 * Some only with the arguments the server needs, checked by the filter:
 *   - prctl: PR_SET_NAME alone (libmicrohttpd's threads name themselves);
 *   - ioctl: FIONREAD (the acceptor's test for a request in the socket)
 *     and TCGETS (isatty()); never TIOCSTI, which pushes input into a
 *     terminal, or any other request;
 *   - fcntl: F_GETFL, F_GETFD, F_SETFD, and F_SETFL without O_ASYNC;
 *     never F_SETOWN or F_SETSIG, with which a socket's owner gets a
 *     signal of the caller's choice;
 *   - mmap and mprotect: never PROT_EXEC, so an exploit cannot make what
 *     it wrote executable.
 * openat, open, stat, lstat, newfstatat and socket fail with EACCES, so a
 * library that tries to open a file takes its usual error path and no
 * path can be probed; libmicrohttpd needs none of them (glibc's fstat()
 * is newfstatat(fd, "", AT_EMPTY_PATH), which the filter cannot tell from
 * a path, and is used only for stdio buffering, which the server does not
 * use).  Any other call, or an allowed one with other arguments, kills
 * the whole process with SIGSYS, after a
 * handler installed with the filter has logged the call's number (the
 * handler cannot be replaced: rt_sigaction is not allowed): the server was
 * meant never to make it, so it is treated as an attack,
 * and its death makes the hardware side restore every register and exit
 * non-zero, so that systemd restarts the service.  So are calls of another
 * architecture or ABI (x32 on x86-64).
 *
 * Nothing here creates threads, processes or files, sends signals, or
 * changes credentials, mappings of files, or the filter itself.
 */
#ifndef UNCORED_SANDBOX_H
#define UNCORED_SANDBOX_H

#include <stddef.h>

/*
 * Set no-new-privs and install the filter on every thread of the process
 * (SECCOMP_FILTER_FLAG_TSYNC), so that threads started before (the HTTP
 * server's) are filtered too.  Returns 0, or a negative errno with a
 * sentence in err (-ENOSYS: an architecture the filter does not know).
 */
int sandbox_install(char *err, size_t errlen);

#endif
