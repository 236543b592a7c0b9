/*
 * The sampler: runs the collectors once per interval on its own thread,
 * builds and publishes one immutable snapshot per sample, feeds the
 * episode tracker and logs episodes, and applies a reloaded configuration
 * at a sample boundary.  It is the only thread that touches hardware after
 * start-up.
 */
#ifndef UNCORED_SAMPLER_H
#define UNCORED_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "cpu.h"
#include "hw.h"
#include "snapshot.h"

struct sampler;

/*
 * Start every collector for conf on hw (all borrowed; hw, info and topo must
 * outlive the sampler; conf is copied).  A collector that cannot run is
 * logged with its reason and reported down, not fatal.  Returns 0, or
 * -EINVAL when a collector refused the configuration (reason in err), or
 * -ENOMEM.  On error nothing is left changed.
 */
int sampler_new(const struct conf *conf, struct hw *hw, const struct cpu_info *info,
		const struct cpu_topology *topo, struct sampler **ret_sampler,
		char *err, size_t errlen);

/*
 * Stop logging episodes as they start and end: the caller reports them
 * from the snapshots' episode lists (--once prints them in its table).
 */
void sampler_quiet_episodes(struct sampler *s);

/*
 * Take one sample now and publish it.  Returns a new reference to the
 * published snapshot (the caller releases it), or NULL on ENOMEM.
 */
struct snapshot *sampler_sample(struct sampler *s);

/* Run sampler_sample every interval on a new thread.  Returns 0 or -errno. */
int sampler_start(struct sampler *s);

/* Ask the thread to finish its current sample and wait for it. Idempotent. */
void sampler_stop(struct sampler *s);

/* Whether a collector that started counts through perf (its c->engine). */
bool sampler_counts_through_perf(const struct sampler *s);

/* Number of samples taken so far; only grows while the sampler makes progress. */
uint64_t sampler_progress(const struct sampler *s);

/*
 * Hand a new configuration to the sampler thread; it is applied at the next
 * sample boundary (collectors restarted if their settings changed, with
 * every exported total carried over so counters never go backwards).
 */
void sampler_post_conf(struct sampler *s, const struct conf *conf);

/* Stop the thread if running, stop every collector (restoring registers), free. */
void sampler_free(struct sampler *s);

#endif
