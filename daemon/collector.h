/*
 * The collector interface.  A collector owns the hardware state it
 * programs and the totals it accumulates; each sample it writes its values
 * into the snapshot being built.  Collectors know nothing of each other,
 * of HTTP or of systemd; they report an up/down status and a reason, and
 * the sampler decides what to log.
 *
 * Only the sampler thread calls sample(); start() and stop() run before the
 * sampler starts and after it has finished.
 */
#ifndef UNCORED_COLLECTOR_H
#define UNCORED_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "cpu.h"
#include "hw.h"
#include "snapshot.h"

struct collector;

struct collector_ops {
	const char *name;                 /* "uncore", "thermal", "core" */
	enum snapshot_collector_id id;

	/*
	 * Allocate state, check the facility, claim counters.  Returns 0 when
	 * the collector runs (possibly degraded: reason set), -ENOTSUP when the
	 * machine lacks the facility, or another negative errno; in both error
	 * cases reason says why in one sentence and stop() is still safe.
	 * A config error detected here (too many events, say) is -EINVAL.
	 */
	int (*start)(struct collector *c);

	/* One sample: read hardware, accumulate, fill s. Never fails as a whole. */
	void (*sample)(struct collector *c, struct snapshot *s);

	/* Restore every register changed to the value found; free state. */
	void (*stop)(struct collector *c);
};

struct collector {
	const struct collector_ops *ops;
	struct hw *hw;
	const struct cpu_info *info;
	const struct cpu_topology *topo;
	const struct conf *conf;
	void *state;                      /* the collector's own */

	bool up;
	bool started;                     /* start() returned 0, stop() not run yet; collector.c's */
	char reason[192];
	uint64_t errors;                  /* failed hardware reads since start */
};

extern const struct collector_ops uncore_collector_ops;
extern const struct collector_ops thermal_collector_ops;
extern const struct collector_ops core_collector_ops;

/*
 * Set up c for ops with the shared context (borrowed; must outlive c) and
 * call ops->start.  Returns what start returned; c->up and c->reason tell
 * the result.
 */
int collector_start(struct collector *c, const struct collector_ops *ops, struct hw *hw,
		    const struct cpu_info *info, const struct cpu_topology *topo,
		    const struct conf *conf);

/* Run one sample and copy the status into s->collectors[ops->id]. */
void collector_sample(struct collector *c, struct snapshot *s);

/*
 * Append a note to c->reason, "; "-separated from what is there; silently
 * truncated when the reason is full.
 */
void collector_note(struct collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Stop c (restore) if it was started; idempotent. */
void collector_stop(struct collector *c);

#endif
