/*
 * The start-up and stop steps every mode shares: the checks before any
 * register is touched, the machine (the backend chosen here: device files
 * or simulation), the instance lock, the state file, the stop signals.
 * Each logs what goes wrong.
 */
#ifndef UNCORED_STARTUP_H
#define UNCORED_STARTUP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "conf.h"
#include "cpu.h"
#include "hw.h"

struct state_file;
struct sim;

/* Not 1, which the unit takes for a refused start and does not restart. */
#define EXIT_SERVER_DIED 3
/* Stopped, but registers could not be restored (their CPU offline); the state file keeps them. */
#define EXIT_NOT_RESTORED 4

struct machine {
	struct hw hw;
	struct sim *sim;          /* the simulated machine behind hw, or NULL */
	struct cpu_info info;
	struct cpu_topology topo;
};

/* --check-config: every start-up check that needs neither the socket nor the hardware, then what it could not check.  Returns the exit status. */
int check_config(const struct options *o, struct conf *conf);

/* Start-up's own run of the checks, before any register is touched (daemon: the daemon mode, which binds and may drop to a user).  Returns 0, or -1 after logging each failure. */
int check_at_start(const struct options *o, const struct conf *conf, bool daemon);

/*
 * A reload's run of the same checks on fresh, the file it read: those
 * start-up runs (the user, the listen address, and on the device backend
 * root and the state file, as given on the command line or in fresh),
 * and whether the port is free and the fd limit enough for
 * max_connections when fresh changes them from running (unchanged, the
 * socket and the connections are this daemon's own).  Returns 0, or -1
 * after logging each failure ("...; the reload is refused"): the file must
 * then not be applied.
 */
int check_at_reload(const struct options *o, const struct conf *running, const struct conf *fresh);

/* Open the backend, detect the CPU and load the topology.  Returns 0 or -1 after logging. */
int machine_open(const struct options *o, const struct conf *conf, struct machine *m);
void machine_close(struct machine *m);

/*
 * Undo what a killed uncored left programmed and journal this run's
 * register changes to the state file (device backend only).  Sets *ret_lf
 * (NULL: no state file).  Returns -1 after logging when start-up must stop.
 */
int journal_open(const struct options *o, const struct conf *conf, struct hw *hw,
		 struct state_file **ret_lf);

/* After the collectors have stopped: log what was not restored, stop journaling, empty or keep the state file.  Returns how many registers were left. */
size_t journal_close(struct state_file *lf, const char *path);

/* The last line of a stop: every register restored, or how many were not.  Returns the exit status. */
int log_stopped(size_t n_left, bool has_journal, int rc);

/* Ignore the signals a failed write raises.  First thing in main. */
void ignore_write_signals(void);

/* The stop signals (SIGHUP among them, which the daemon takes for a reload), in set. */
void stop_signal_set(sigset_t *set);

/* Block every stop signal and return a signalfd for them, or -1. */
int block_signals(void);

/* Sleep s seconds unless a stop signal arrives on signal_fd first.  Returns 0, or the signal's number. */
int sleep_or_signal(int signal_fd, double s);

/* Take the machine's instance lock (device backend only).  Returns the lock fd, -2 for none needed, or -1 after logging a refusal. */
int lock_instance(const struct options *o, const struct conf *conf);

#endif
