/*
 * Snapshot and episodes to JSON (SPEC §5a).  Pure.
 */
#ifndef UNCORED_FMT_JSON_H
#define UNCORED_FMT_JSON_H

#include "snapshot.h"
#include "strbuf.h"

#define FMT_JSON_CONTENT_TYPE "application/json"

/* Append the snapshot object of s.  Returns 0 or -ENOMEM. */
int fmt_json_snapshot(const struct snapshot *s, struct strbuf *out);

/* Append {"episodes": [...]} from s, newest first.  Returns 0 or -ENOMEM. */
int fmt_json_episodes(const struct snapshot *s, struct strbuf *out);

#endif
