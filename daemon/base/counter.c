/*
 * Wrap-safe counter accumulation.  See counter.h.
 */
#include <math.h>

#include "counter.h"

void counter_init(struct counter *c, unsigned width_bits, uint64_t raw)
{
	c->total = 0;
	c->width_bits = width_bits;
	c->last_raw = raw & counter_width_mask(width_bits);
}

uint64_t counter_delta(uint64_t prev, uint64_t now, unsigned width_bits)
{
	uint64_t mask = counter_width_mask(width_bits);

	return ((now & mask) - (prev & mask)) & mask;
}

uint64_t counter_add(struct counter *c, uint64_t raw)
{
	uint64_t d = counter_delta(c->last_raw, raw, c->width_bits);

	c->last_raw = raw & counter_width_mask(c->width_bits);
	c->total += d;
	return d;
}

void counter_rebase(struct counter *c, uint64_t raw)
{
	c->last_raw = raw & counter_width_mask(c->width_bits);
}

double counter_wrap_period_s(unsigned width_bits, double rate_hz)
{
	return ldexp(1.0, (int)width_bits) / rate_hz;
}
