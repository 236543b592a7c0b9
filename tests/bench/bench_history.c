/*
 * Cost of the history document (/api/v1/history) with a full ring: an
 * hour of 5 s steps on two sockets, every series measured.  Prints the
 * document's size and the CPU time to format it once, per step and
 * averaged over the samples of a step at a 1 s interval: what each step
 * costs when a client reads the history (the document is formatted on
 * request, once per step), and what it cost every step before formatting
 * moved there.  Asserts nothing.
 *
 * Usage: bench_history [STEPS]   (steps formatted after the ring is full; default 50)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "history.h"

static double cpu_time_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sample k's readings: temperatures, shares and counter totals that move. */
static void reading(struct history_reading *r, int k)
{
	r->has_hottest_core = r->has_package = r->has_tjmax = true;
	r->hottest_core_celsius = 40 + k % 13;
	r->package_celsius = 41 + k % 7;
	r->tjmax_celsius = 100;
	r->has_dram = r->has_ipc = true;
	r->dram_throttled_cycles += (uint64_t)(k % 3);
	r->clockticks += 2400000000u;
	r->instructions += 123456789u + 7u * (uint64_t)k;
	r->cycles += 98765432u;
	r->has_prochot_share = r->has_frequency_limited_share = true;
	r->prochot_share = (k % 10) / 37.0;
	r->frequency_limited_share = (k % 7) / 13.0;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 50;
	int ids[2] = { 0, 1 };
	int per_step = (int)HISTORY_STEP_S;
	struct history *h = history_new(2, ids, HISTORY_STEP_S, HISTORY_SPAN_S);
	struct history_reading r[2] = { { 0 } };
	size_t len = 0;
	double t = 1000, t0;
	int k = 0;

	if (!h || steps <= 0) {
		fprintf(stderr, "bench_history: %s\n", h ? "STEPS must be positive" : "out of memory");
		return 1;
	}
	/* Fill the ring: one sample per second. */
	while (history_points(h) < (int)(HISTORY_SPAN_S / HISTORY_STEP_S)) {
		for (int s = 0; s < 2; s++)
			reading(&r[s], k);
		history_add(h, t, t + 1.7e9, r);
		t += 1;
		k++;
	}
	t0 = cpu_time_s();
	for (int i = 0; i < steps; i++) {
		struct history_doc *d;
		const char *text;

		for (int j = 0; j < per_step; j++, k++) {
			for (int s = 0; s < 2; s++)
				reading(&r[s], k);
			history_add(h, t, t + 1.7e9, r);
			t += 1;
		}
		d = history_acquire(h);
		if (history_doc_text(d, &text, &len) < 0) {
			fprintf(stderr, "bench_history: out of memory\n");
			return 1;
		}
		history_release(d);
	}
	t0 = cpu_time_s() - t0;
	printf("history: %d points x 2 sockets, document %zu bytes; per step (folding %d samples and "
	       "formatting once) %.0f us CPU, %.0f us per 1 s sample\n",
	       history_points(h), len, per_step, t0 / steps * 1e6, t0 / steps / per_step * 1e6);
	history_free(h);
	return 0;
}
