/*
 * The start-up and stop steps every mode shares (startup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf_check.h"
#include "conf_file.h"
#include "hw_dev.h"
#include "instance.h"
#include "ledger.h"
#include "log.h"
#include "perf_sys_linux.h"
#include "recovery.h"
#include "sim.h"
#include "startup.h"
#include "state_file.h"
#include "trusted_dir.h"

/*
 * The checks of what that failed on conf, printed, or logged followed by
 * "; " and to_log; conf holds the command-line overrides.
 */
static int print_check_errors(const struct options *o, const struct conf *conf, unsigned what,
			      const char *to_log)
{
	struct conf_errors errs;
	unsigned from_options = (o->listen ? CONF_CHECK_LISTEN : 0) | (o->root ? CONF_CHECK_ROOT : 0);
	char line[1024];
	int n;

	/* Only the count: zeroing all 54 KiB would keep those stack pages resident for good. */
	errs.n = 0;
	n = conf_check(conf, conf_path(o), what, from_options, &errs);

	for (int i = 0; i < errs.n && i < CONF_MAX_ERRORS; i++) {
		conf_error_format(&errs.list[i], line, sizeof(line));
		if (to_log)
			log_error("%s; %s", line, to_log);
		else
			fprintf(stderr, "%s\n", line);
	}
	return n;
}

/*
 * --check-config: every start-up check that needs neither the socket nor
 * the hardware, then what it could not check.  Returns the exit status.
 */
int check_config(const struct options *o, struct conf *conf)
{
	const char *root = o->root ? o->root : conf->root;

	if (o->root)
		snprintf(conf->root, sizeof(conf->root), "%s", o->root);
	if (print_check_errors(o, conf, CONF_CHECK_ALL, NULL) > 0)
		return 1;
	printf("%s: configuration ok\n", o->config);
	printf("%s: not checked: the CPU and its msr and cpuid devices under %s (start-up opens "
	       "them)\n", o->config, root);
	printf("%s: not checked: whether another uncored holds the machine or %s (start-up takes "
	       "their locks)\n", o->config, conf->state_file);
	return 0;
}

/*
 * Start-up's own run of the checks, before any register is touched: what
 * a mode uses (root and the state file on the device backend; the user
 * when it will drop to it; the listen address unless systemd passes the
 * socket).  Returns 0, or -1 after logging each failure.
 */
int check_at_start(const struct options *o, const struct conf *conf, bool daemon)
{
	struct conf c = *conf;
	unsigned what = 0;

	if (!o->simulate)
		what |= CONF_CHECK_ROOT | CONF_CHECK_STATE_FILE;
	if (daemon && geteuid() == 0)
		what |= CONF_CHECK_USER | CONF_CHECK_SERVER_USER;
	if (daemon && !getenv("LISTEN_FDS"))
		what |= CONF_CHECK_LISTEN | CONF_CHECK_PORT;
	if (daemon)
		what |= CONF_CHECK_FDS;
	if (o->root)
		snprintf(c.root, sizeof(c.root), "%s", o->root);
	return print_check_errors(o, &c, what, "refusing to start") > 0 ? -1 : 0;
}

int check_at_reload(const struct options *o, const struct conf *running, const struct conf *fresh)
{
	unsigned what = CONF_CHECK_USER | CONF_CHECK_SERVER_USER | CONF_CHECK_LISTEN;
	struct conf c = *fresh;

	if (!o->simulate)
		what |= CONF_CHECK_ROOT | CONF_CHECK_STATE_FILE;
	if (getenv("LISTEN_FDS"))
		what &= ~(unsigned)CONF_CHECK_LISTEN;
	/* Unchanged, the socket and the connection table are this daemon's own. */
	if (strcmp(running->listen, fresh->listen) != 0 && !getenv("LISTEN_FDS"))
		what |= CONF_CHECK_PORT;
	if (running->max_connections != fresh->max_connections)
		what |= CONF_CHECK_FDS;
	if (o->root)
		snprintf(c.root, sizeof(c.root), "%s", o->root);
	return print_check_errors(o, &c, what, "the reload is refused") > 0 ? -1 : 0;
}

/*
 * The real kernel's perf_event interface beside the device files, its PMU
 * tree under the same root.  Opens nothing.  Returns 0 or -1 after logging.
 */
static int attach_linux_perf(struct hw *hw, const char *root)
{
	struct perf_sys *ps = calloc(1, sizeof(*ps));

	if (!ps || perf_sys_linux_init(ps, root) < 0) {
		free(ps);
		log_error("perf: out of memory");
		return -1;
	}
	hw_set_perf(hw, ps);
	return 0;
}

/*
 * Say once that perf_event_paranoid cannot be read, and what follows: every
 * choice that depends on it takes the strictest level (perf_sys.h).
 */
static void note_paranoid(const struct perf_sys *ps)
{
	int r, level;

	if (!ps || (r = perf_sys_read_paranoid(ps, &level)) == 0)
		return;
	log_warning("perf: %s/proc/sys/kernel/perf_event_paranoid cannot be read (%s): taken as "
		    "the strictest level, above 2, where only CAP_SYS_ADMIN opens perf events (a "
		    "sandbox that hides /proc/sys, such as ProcSubset=pid, does this)",
		    perf_sys_root(ps), r == -EINVAL ? "not an integer" : strerror(-r));
}

/* Open the backend, detect the CPU and load the topology.  Returns 0 or -1 after logging. */
int machine_open(const struct options *o, const struct conf *conf, struct machine *m)
{
	char err[512];
	int r;

	memset(m, 0, sizeof(*m));
	if (o->simulate) {
		/* --once steps simulated time over its interval instead of sleeping it. */
		enum sim_clock clock = o->mode == MODE_ONCE ? SIM_CLOCK_STEPPED : SIM_CLOCK_REAL;
		struct sim *sim = sim_open(o->simulate, scenario_dir(o), clock, err, sizeof(err));

		if (!sim) {
			log_error("--simulate '%s': %s", o->simulate, err);
			return -1;
		}
		for (int i = 0; sim_note(sim, i); i++)
			log_notice("--simulate '%s': %s", o->simulate, sim_note(sim, i));
		sim_bind(sim, &m->hw);
		m->sim = sim;
		/* The simulator's kernel: the collectors count through it as through Linux. */
		if (sim_attach_perf(sim, &m->hw, err, sizeof(err)) < 0) {
			log_error("--simulate '%s': %s", o->simulate, err);
			hw_close(&m->hw);
			return -1;
		}
	} else {
		r = hwdev_open(o->root ? o->root : conf->root, &m->hw, err, sizeof(err));
		if (r < 0) {
			const char *path = conf_path(o);
			char where[4400];

			/* Located when root was chosen (the default "/" is the machine itself). */
			if (o->root || (path && conf_file_key_line(path, "daemon", "root") > 0))
				log_error("%s: %s", conf_check_where(path, "root", o->root != NULL, where,
								     sizeof(where)), err);
			else
				log_error("%s", err);
			return -1;
		}
		if (attach_linux_perf(&m->hw, o->root ? o->root : conf->root) < 0) {
			hw_close(&m->hw);
			return -1;
		}
	}
	note_paranoid(m->hw.perf);
	r = cpu_detect(&m->hw, &m->info, err, sizeof(err));
	if (r == 0)
		r = cpu_topology_load(&m->hw, &m->topo, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		hw_close(&m->hw);
		return -1;
	}
	log_info("cpu: %s family %u model 0x%x (%s), %d sockets, %d cpus, %s backend",
		 m->info.vendor, m->info.family, m->info.model, m->info.microarch,
		 m->topo.n_sockets, m->topo.n_cpus, m->hw.ops->name);
	return 0;
}

void machine_close(struct machine *m)
{
	cpu_topology_free(&m->topo);
	hw_close(&m->hw);
}

/*
 * Create the state file's directory (one level) if it is missing, in a
 * parent reached as the state file's own directory is (trusted_dir.h):
 * never through a symbolic link.
 */
static void make_parent_dir(const char *path)
{
	char dir[PATH_MAX], err[512];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	fd = trusted_dir_open(slash == dir ? "/" : dir, err, sizeof(err));
	if (fd < 0)
		return;   /* opening the state file says why */
	if (mkdirat(fd, slash + 1, 0755) < 0 && errno != EEXIST)
		log_debug("state file: cannot create %s/%s: %s", dir, slash + 1, strerror(errno));
	close(fd);
}

/* Log what recovery found damaged or refused in the state file. */
static void log_damage(const char *path, const struct ledger_recovery *rec)
{
	if (rec->header_damaged)
		log_error("state file %s: its header is damaged; replayed the records whose checksums "
			  "hold, as this machine's", path);
	if (rec->damaged)
		log_error("state file %s: %u damaged records (the first on line %u) could not be read; "
			  "the registers they describe may still hold what the previous uncored wrote",
			  path, rec->damaged, rec->first_damaged_line);
	if (rec->refused)
		log_error("state file %s: %u records name registers uncored never changes (the first: "
			  "cpu %d MSR 0x%x); not replayed", path, rec->refused, rec->refused_cpu,
			  rec->refused_msr);
	if (rec->kept)
		log_notice("state file %s: the damaged file is kept as %s.damaged", path, path);
}

/* Each register recovery could not reach: it stays in the state file until it can be. */
static void log_left_found(struct state_file *lf, const char *path)
{
	const struct ledger_record *v;
	const int *errs;
	size_t n = state_file_left(lf, &v, &errs);

	for (size_t i = 0; i < n; i++)
		log_warning("state file %s: cpu %d MSR 0x%x could not be restored yet: %s; kept, and "
			    "put back when its CPU comes online", path, v[i].cpu, v[i].msr,
			    hw_hint(errs[i], HW_OP_WRITE));
}

/*
 * Undo what a killed uncored left programmed and journal this run's
 * register changes to [daemon] state_file (SPEC §8).  Device backend only:
 * a simulated machine dies with the process.  Runs before the privilege
 * drop: the file is created and locked as root and kept open, and every
 * later append and the final emptying go through that descriptor, so the
 * unprivileged user needs no access to the file or its directory.  Sets
 * *ret_lf to the state file, or NULL when running without one (logged):
 * with state_file = none registers are programmed unjournaled; when the
 * file cannot be set up (a full disk, a file too large) none is programmed.
 * Returns -1 after logging when start-up must stop: a file or directory
 * that is not trusted, a file that is not a state file, a file in use.
 */
int journal_open(const struct options *o, const struct conf *conf, struct hw *hw,
			struct state_file **ret_lf)
{
	struct ledger_recovery rec;
	struct state_file *lf;
	char err[512] = "", where[4400];
	int r;

	*ret_lf = NULL;
	if (o->simulate)
		return 0;
	if (strcmp(conf->state_file, "none") == 0) {
		log_warning("%s = none: registers are programmed without a journal, so those a crash "
			    "leaves programmed are not cleaned up at the next start (they count on "
			    "until a reboot, and the next start sees them as another agent's)",
			    conf_check_where(conf_path(o), "state_file", 0, where, sizeof(where)));
		ledger_set_no_journal(0);
		return 0;
	}
	make_parent_dir(conf->state_file);
	r = recovery_open(conf->state_file, o->root ? o->root : conf->root, hw, &lf, &rec,
			     err, sizeof(err));
	if (r == -EPERM || r == -EBADMSG || r == -EBUSY) {
		log_error("%s: %s; refusing to start",
			  conf_check_where(conf_path(o), "state_file", 0, where, sizeof(where)), err);
		return -1;
	}
	if (r < 0) {
		/* Programming without a journal would leave a crash's registers to no one. */
		log_error("%s: %s; no state file to journal register changes in, so the msr engine "
			  "programs nothing (read-only collectors and perf still run; "
			  "uncored_journal_up 0)",
			  conf_check_where(conf_path(o), "state_file", 0, where, sizeof(where)), err);
		ledger_set_no_journal(r);
		return 0;
	}
	log_damage(conf->state_file, &rec);
	if (rec.found)
		log_notice("state file %s: the previous uncored did not stop cleanly; cleaned up %u "
			   "registers it left programmed, left %u untouched that another agent took over",
			   conf->state_file, rec.cleaned, rec.left);
	log_left_found(lf, conf->state_file);
	ledger_set_journal(lf);
	*ret_lf = lf;
	return 0;
}

/*
 * After the collectors have stopped: log every register that could not be
 * restored, stop journaling, and empty the state file, or keep it when
 * registers were left so that the next start (or the CPU coming back
 * online, while it runs) finishes the job.  Returns how many were left.
 */
size_t journal_close(struct state_file *lf, const char *path)
{
	const struct ledger_record *v;
	const int *errs;
	size_t n = ledger_left(&v, &errs);

	for (size_t i = 0; i < n; i++) {
		char what[64];

		if (v[i].kind == LEDGER_BITS)
			snprintf(what, sizeof(what), "uncored's bits 0x%llx",
				 (unsigned long long)v[i].bits);
		else
			snprintf(what, sizeof(what), "original value 0x%llx",
				 (unsigned long long)v[i].original);
		log_error("cpu %d MSR 0x%x: not restored (%s): %s; %s%s", v[i].cpu, v[i].msr, what,
			  hw_hint(errs[i], HW_OP_WRITE),
			  lf ? "kept in the state file " : "there is no state file to keep it",
			  lf ? path : "");
	}
	if (!lf)
		return n;
	ledger_set_journal(NULL);
	if (state_file_error(lf))
		log_warning("state file: a write failed (%s); the journal was incomplete",
			    strerror(-state_file_error(lf)));
	if (n)
		state_file_keep(lf);
	else
		state_file_close(lf);
	return n;
}

/* The last line of a stop: every register restored, or how many were not. */
int log_stopped(size_t n_left, bool has_journal, int rc)
{
	if (n_left) {
		log_error("stopped; %zu registers could not be restored%s", n_left,
			  has_journal ? " and stay in the state file: the next start, or their CPU "
			  "coming back online while uncored runs, puts them back" : "");
		return rc ? rc : EXIT_NOT_RESTORED;
	}
	if (rc == 0)
		log_notice("stopped, every register restored");
	return rc;
}


/*
 * Every signal whose default action ends the process and that is sent
 * rather than caused by a fault is received through a signalfd, so the
 * process ends through the restore path: SIGHUP (a reload for the
 * daemon), SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU,
 * SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT and the real-time signals.
 * SIGPIPE (a log line once stderr's reader is gone, a client gone) and
 * SIGXFSZ (a file size limit) are ignored: the write then fails with
 * EPIPE or EFBIG, which the writer handles.  Faults (SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP) cannot be deferred and leave
 * the registers to the next start's recovery.
 */
static const int stop_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGVTALRM,
	SIGPROF, SIGIO, SIGPWR, SIGSTKFLT,
};

/* Ignore the signals a failed write raises.  First thing in main. */
void ignore_write_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
}

/* Block every stop signal and return a signalfd for them, or -1. */
void stop_signal_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(set, stop_signals[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(set, sig);
}

int block_signals(void)
{
	sigset_t set;

	stop_signal_set(&set);
	/* Before any thread exists, so every thread inherits the mask. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

/*
 * Sleep s seconds unless a stop signal arrives on signal_fd first.
 * Returns 0, or the signal's number.
 */
int sleep_or_signal(int signal_fd, double s)
{
	struct timespec end, now;
	struct signalfd_siginfo si;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)s;
	end.tv_nsec += (long)((s - floor(s)) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		struct pollfd p = { .fd = signal_fd, .events = POLLIN };
		double left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (double)(end.tv_sec - now.tv_sec) + (double)(end.tv_nsec - now.tv_nsec) / 1e9;
		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)ceil(left * 1000)) > 0 &&
		    read(signal_fd, &si, sizeof(si)) == sizeof(si))
			return (int)si.ssi_signo;
	}
}

/*
 * Take the machine's instance lock (device backend only).  Returns the
 * lock fd, -2 for none needed, or -1 after logging a refusal.
 */
int lock_instance(const struct options *o, const struct conf *conf)
{
	char err[512];
	int fd;

	if (o->simulate)
		return -2;
	fd = instance_lock(o->root ? o->root : conf->root, err, sizeof(err));
	if (fd == -EBUSY || fd == -EPERM) {
		log_error("%s", err);
		return -1;
	}
	if (fd < 0) {
		/* Not root, or no such tree: opening the devices fails next, with a better reason. */
		log_debug("%s", err);
		return -2;
	}
	return fd;
}

