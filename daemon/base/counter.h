/*
 * Wrap-safe accumulation of a hardware counter of a given width into a
 * 64-bit total.  Pure.
 *
 * A counter that wraps more than once between two reads cannot be told
 * apart from one that wrapped once: the sampling interval must stay far
 * below the counter's wrap period (conf.c refuses intervals that are not).
 */
#ifndef UNCORED_COUNTER_H
#define UNCORED_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

struct counter {
	uint64_t total;        /* accumulated since counter_init */
	uint64_t last_raw;     /* last raw reading, masked to width */
	unsigned width_bits;   /* 1..64 */
};

/* The bits a width_bits-wide counter has (all 64 from width 64 up). */
static inline uint64_t counter_width_mask(unsigned width_bits)
{
	return width_bits >= 64 ? UINT64_MAX : (UINT64_C(1) << width_bits) - 1;
}

/* Start accumulating from raw reading raw of a width_bits-wide counter. */
void counter_init(struct counter *c, unsigned width_bits, uint64_t raw);

/* The increase from prev to now modulo 2^width_bits. */
uint64_t counter_delta(uint64_t prev, uint64_t now, unsigned width_bits);

/* Add the delta since the last reading to the total; returns that delta. */
uint64_t counter_add(struct counter *c, uint64_t raw);

/* Re-base on raw without adding anything (after a reset or a lost interval). */
void counter_rebase(struct counter *c, uint64_t raw);

/*
 * Seconds a width_bits-wide counter incrementing at rate_hz takes to wrap
 * once (2^width_bits / rate_hz).  rate_hz must be positive.
 */
double counter_wrap_period_s(unsigned width_bits, double rate_hz);

#endif
