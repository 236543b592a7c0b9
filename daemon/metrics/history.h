/*
 * History: the last hour of each socket, one point per step (5 s by
 * default), for the web page's charts (/api/v1/history).
 *
 * The sampler hands every sample's per-socket readings to history_add();
 * the module folds them into the open step and, when the step is over,
 * closes it into a fixed-size ring allocated once at history_new().  The
 * ring holds numbers, not text: each sample takes a reference to the
 * current step's document (history_acquire()), a small handle that names
 * the ring as it stood when the step closed, and the JSON is formatted from
 * the ring only when someone reads that handle (history_doc_text()), once
 * per step, for every sample of the step.  With no reader, nothing is
 * formatted.  Reading waits for the sampler at most while it writes one
 * closed point (once per step).
 *
 * A point holds, over its step: the hottest core and the package
 * temperature (highest seen), the margin to TjMax (smallest seen), the
 * DRAM throttled fraction of time, the PROCHOT fraction and the
 * frequency-limited fraction (where a collector measures the throttle
 * family: the mean over the step's samples of its worst series' share of
 * the interval; else, for DRAM, throttled cycles over uncore clock ticks
 * and, for PROCHOT, the share of samples in which it was asserted) and IPC
 * (instructions over core cycles) and the hottest DIMM's temperature.  A
 * value the socket cannot give is null in the JSON, never zero.
 *
 * Where the heat was: each memory place of a socket (a channel, a DIMM
 * slot of it, a die's channel; struct history_place_reading) keeps, per
 * step, its DRAM throttled share, its hottest sensor and its share of
 * samples at twice the refresh rate, packed in 2 bytes each and only for
 * what the place has, so that a page opened after the heat can still say
 * where it was.  The document gives each place's figures over the points
 * it holds (the last hour), not a series per place, which would multiply
 * the document's size by the number of places.
 *
 * Steps end on the monotonic clock; the times in the document are wall
 * clock, for display only.
 */
#ifndef UNCORED_HISTORY_H
#define UNCORED_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HISTORY_STEP_S 5.0
#define HISTORY_SPAN_S 3600.0

/* The most memory places a socket's history keeps; readings of more are ignored. */
#define HISTORY_MAX_PLACES 64

/*
 * One sample's readings of one memory place: die, channel and slot are its
 * label values, -1 where the hardware has no such level (a channel counted
 * as a whole has slot -1).  has_* false: the place has no such reading.
 */
struct history_place_reading {
	int die, channel, slot;
	bool has_dram_share;           /* its share of the interval DRAM-throttled, the worst cause */
	double dram_share;
	bool has_celsius;              /* its hottest sensor (AMD HSMP) */
	double celsius;
	bool has_refresh;              /* whether it ran at twice the refresh rate (hot; AMD HSMP) */
	bool refresh_doubled;
};

/* One sample's readings of one socket.  has_* false: not measured. */
struct history_reading {
	bool has_hottest_core;
	double hottest_core_celsius;
	bool has_package;
	double package_celsius;
	const char *package_sensor;    /* a static name where it is not a package sensor: "Tctl" */
	bool has_tjmax;
	double tjmax_celsius;
	bool has_dram;                 /* both totals below are counted */
	uint64_t dram_throttled_cycles;
	uint64_t clockticks;
	bool has_prochot;
	bool prochot_active;
	/*
	 * The throttle families' worst series share of the interval since the
	 * previous sample (throttle_worst_shares()), where a collector measures
	 * the family: the DRAM share replaces the cycles above, the PROCHOT
	 * share the status bit.
	 */
	bool has_dram_share;
	double dram_share;
	bool has_prochot_share;
	double prochot_share;
	bool has_frequency_limited_share;
	double frequency_limited_share;
	bool has_ipc;                  /* both totals below are counted */
	uint64_t instructions;
	uint64_t cycles;
	/* The socket's memory places this sample, n_places of them (read during history_add only). */
	int n_places;
	const struct history_place_reading *places;
};

/*
 * The history of one step (the ring as it stood when that step closed),
 * reference counted; formatted on first read.
 */
struct history_doc;

struct history;

/*
 * A history for n_sockets sockets whose ids are socket_ids (copied), with
 * one point per step_s seconds kept for span_s seconds (the ring holds
 * ceil(span_s / step_s) points, allocated here once).  NULL on ENOMEM or
 * bad arguments.
 */
struct history *history_new(int n_sockets, const int *socket_ids, double step_s, double span_s);

/* Free h; documents still held by readers stay valid (and readable) until released. */
void history_free(struct history *h);

/*
 * Fold one sample taken at monotonic time mono_s and wall time wall_s:
 * readings[i] belongs to socket_ids[i].  When the open step is over it is
 * closed into the ring and a new document handle becomes current (nothing
 * is formatted here).  Counter totals
 * must not go backwards; a total that does restarts the step's base.
 * Returns true when a point was closed.  Sampler thread only.
 */
bool history_add(struct history *h, double mono_s, double wall_s,
		 const struct history_reading *readings);

/* Number of points in the ring now (0 .. capacity). */
int history_points(const struct history *h);

/*
 * Bytes h has allocated for itself: the ring, the steps and the places
 * (documents and their text not counted).  Sampler thread only.
 */
size_t history_memory_bytes(const struct history *h);

/*
 * The current step's document with a new reference (before the first step
 * has closed: the empty history).  Any thread.
 */
struct history_doc *history_acquire(struct history *h);

/*
 * The JSON text of d (NUL-terminated, len bytes) in *ret_text and
 * *ret_len, valid while the reference to d is held: formatted from the
 * ring on the first call for d's step, the same bytes afterwards.  The
 * same points give the same bytes.  Where the ring has since overwritten
 * some of d's oldest points (a handle read more than an hour after its
 * step), the text has the points still there.  Returns 0 or -ENOMEM.  Any
 * thread.
 */
int history_doc_text(struct history_doc *d, const char **ret_text, size_t *ret_len);

/* Drop a reference from history_acquire; NULL is allowed. */
void history_release(struct history_doc *d);

#endif
