/*
 * Snapshot and episodes to JSON (SPEC §5a).  Pure.
 *
 * Absent values: a hardware block that is not there or not counted is
 * omitted (a declared group such as a socket's "uncore" and "rapl", a
 * cpu's "events", "unavailable" and "conflicts" while it is not counted:
 * metric.h, json_group and labelled families); a reading
 * that belongs to the shape but has no valid value this sample is null
 * (temperatures, tjmax, status flags, kernel throttle counts, fixed
 * counters).  Collector "reason" is null when empty; episode "core" is
 * null for per-socket episodes and "end" null while ongoing.
 */
#ifndef UNCORED_JSON_H
#define UNCORED_JSON_H

#include "snapshot.h"
#include "strbuf.h"

#define JSON_CONTENT_TYPE "application/json"

/* Append the snapshot object of s.  Returns 0 or -ENOMEM. */
int json_write_snapshot(const struct snapshot *s, struct strbuf *out);

/* Append {"episodes": [...]} from s, newest first.  Returns 0 or -ENOMEM. */
int json_write_episodes(const struct snapshot *s, struct strbuf *out);

/*
 * The same with only the episode whose id is id (none when it has left
 * the bounded list), or all of them for id 0.  Each episode has "id",
 * "kind", "socket", "core", "start", "end", "duration_seconds" (while
 * ongoing, its running length), "place" and "what" (episode_describe());
 * one of the throttle families also "family" (its condition's), "labels"
 * (its place's die and channel), "slots" (those that took part, where
 * series count slots), "levels" (DRAM: "warning", "critical"), "parts"
 * (each series that took part: "family", "labels"; "parts_incomplete"
 * true when more took part than an episode records), "monotonic_start",
 * "monotonic_end", "peak_celsius", "throttled_seconds" and
 * "throttled_share" (SPEC §5a).  Returns 0 or -ENOMEM.
 */
int json_write_episode_by_id(const struct snapshot *s, uint64_t id, struct strbuf *out);

/*
 * From doc (len bytes), an episodes document json_write_episodes() wrote
 * (one episode a line, each opening with its "id"), append the same
 * document holding only the episode whose id is id ({"episodes": []}
 * when it holds none): how the HTTP server, which has the rendered
 * document and not the snapshot, answers /api/v1/episodes?id=.  0,
 * -EINVAL when doc is no episodes document, or -ENOMEM.
 */
int json_episodes_pick(const char *doc, size_t len, uint64_t id, struct strbuf *out);

#endif
