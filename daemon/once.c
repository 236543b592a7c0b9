/*
 * --once: two samples one interval apart, printed, every register restored
 * before anything is printed (once.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "json.h"
#include "prom.h"
#include "table.h"
#include "log.h"
#include "once.h"
#include "sampler.h"
#include "sim.h"
#include "snapshot.h"
#include "startup.h"
#include "strbuf.h"

/* Simulated seconds from start-up to the first sample of --once --simulate. */
#define ONCE_SIM_STARTUP_S 0.01

/*
 * Turn the totals of s into counts over the interval since first (SPEC §5a:
 * for --once, counters cover its one interval).  Both are private to
 * --once by now: the sampler is gone and nothing else reads them.
 */
static void subtract_totals(struct snapshot *s, const struct snapshot *first)
{
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct collector_ops *ops = collector_registry[i];

		snapshot_add_sample_totals(s, first, ops->families, ops->n_families,
					   collector_source(ops), -1);
	}
}

static int print_once(enum once_format format, bool verbose, struct snapshot *first,
		      struct snapshot *second)
{
	struct strbuf out;
	int r;

	strbuf_init(&out);
	if (format == ONCE_TEXT) {
		r = table_write_brief(first, second, verbose, &out);
	} else {
		subtract_totals(second, first);
		r = format == ONCE_JSON ? json_write_snapshot(second, &out) : prom_write(second, &out);
		if (format == ONCE_JSON)
			strbuf_append(&out, "\n");
	}
	if (r == 0 && !out.failed)
		fwrite(out.buf, 1, out.len, stdout);
	strbuf_free(&out);
	return r == 0 ? 0 : 1;
}

int run_once(const struct options *o, const struct conf *conf)
{
	struct machine m;
	struct sampler *sampler;
	struct snapshot *first, *second;
	struct state_file *journal;
	char err[512];
	int rc, sig, signal_fd, lock_fd;
	size_t n_left;

	if (check_at_start(o, conf, false) < 0)
		return 1;
	signal_fd = block_signals();
	lock_fd = lock_instance(o, conf);
	if (signal_fd < 0 || lock_fd == -1)
		return 1;
	if (machine_open(o, conf, &m) < 0)
		return 1;
	if (journal_open(o, conf, &m.hw, &journal) < 0) {
		machine_close(&m);
		return 1;
	}
	if (sampler_new(conf, &m.hw, &m.info, &m.topo, &sampler, err, sizeof(err)) < 0) {
		log_error("%s", err);
		journal_close(journal, conf->state_file);
		machine_close(&m);
		return 1;
	}
	if (o->format == ONCE_TEXT)
		sampler_quiet_episodes(sampler);   /* the table lists them */
	/*
	 * On the simulator the clock is stepped: a moment for start-up (the
	 * counters have run when the first sample reads them, as on a real
	 * host), then the interval, with no real sleep.
	 */
	if (m.sim)
		sim_advance(m.sim, ONCE_SIM_STARTUP_S);
	first = sampler_sample(sampler);
	if (m.sim) {
		/* No stop signal can fall inside a stepped interval. */
		sim_advance(m.sim, conf->interval_s);
		sig = 0;
	} else {
		sig = sleep_or_signal(signal_fd, conf->interval_s);
	}
	second = sig ? NULL : sampler_sample(sampler);
	if (second && first && m.sim)
		second->time = first->time + conf->interval_s;   /* the interval the table shows */
	sampler_free(sampler);   /* restores every register before anything is printed */
	if (sig)
		log_notice("received SIG%s, stopping", sigabbrev_np(sig));
	n_left = journal_close(journal, conf->state_file);
	rc = first && second ? print_once(o->format, o->verbose, first, second) : 1;
	if (n_left)
		rc = log_stopped(n_left, journal != NULL, rc);
	snapshot_release(first);
	snapshot_release(second);
	snapshot_clear();
	machine_close(&m);
	close(signal_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	return rc;
}

