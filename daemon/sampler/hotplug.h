/*
 * CPUs that go offline and come back while uncored runs.  Once per sample
 * the sampler asks hotplug_check to compare every CPU's online state with
 * the previous sample's, from one read of the kernel's online list
 * (/sys/devices/system/cpu/online, parsed only when its text differs from
 * the last one parsed; each CPU's online file only where the backend has
 * no list): each change is logged once and counted.  When
 * registers are left unrestored (engine.h: a stop or a recovery that could
 * not reach their CPU) they are tried again only when that can help: at
 * the first check, after a CPU came online, and when more were left since
 * the last try; so a CPU coming back online gets them put back, and a
 * sample with nothing to put back costs no recovery.  The collectors themselves notice the CPU (an
 * offline CPU's reads fail with -ENXIO and its totals are kept; the msr
 * engine carries its counters on when it is back, hw_dev.h opens the
 * devices of a CPU that was offline at start).  Used from one thread at a
 * time (the sampler's).
 */
#ifndef UNCORED_HOTPLUG_H
#define UNCORED_HOTPLUG_H

#include <stdint.h>

#include "hw.h"

struct hotplug;

/*
 * Take the online state of every CPU of hw now (borrowed; outlives the
 * watch) and log each CPU that is offline (once).  Returns NULL on ENOMEM.
 */
struct hotplug *hotplug_new(struct hw *hw);

/*
 * Compare with the last check: log and count each CPU that went offline
 * or came online, then, when due (see above), try the registers left
 * unrestored again (logging what was put back).  Call before the collectors sample, so a register
 * put back here is free for them in the same sample.
 */
void hotplug_check(struct hotplug *h);

/* CPUs seen going offline, and coming online, since hotplug_new. */
uint64_t hotplug_offline_count(const struct hotplug *h);
uint64_t hotplug_online_count(const struct hotplug *h);

/*
 * Whether cpu was online at the last check (hotplug_new's, before any):
 * 1 or 0, or -1 when the CPU is not known.
 */
int hotplug_cpu_online(const struct hotplug *h, int cpu);

/* NULL is allowed. */
void hotplug_free(struct hotplug *h);

#endif
