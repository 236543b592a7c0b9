/*
 * Cost of the history document (/api/v1/history) with a full ring: an
 * hour of 5 s steps on two sockets, every series measured.  Prints the
 * document's size and the CPU time to format it once, per step and
 * averaged over the samples of a step at a 1 s interval: what each step
 * costs when a client reads the history (the document is formatted on
 * request, once per step), and what it cost every step before formatting
 * moved there.  Also prints the memory the history holds: its own count
 * (history_memory_bytes()) and the heap it took from malloc (mallinfo2),
 * for the memory places of a server model's shape: "big" (Westmere-EP
 * shaped: DRAM counted per socket, no places), "granite-rapids-2s" (12
 * channels counted per channel and per slot of 2: 36 places of shares)
 * and "genoa-2s" (12 DIMMs with temperatures and refresh).  Asserts
 * nothing.
 *
 * Usage: bench_history [STEPS [SHAPE]]   (steps formatted after the ring is full,
 *                                         default 50; SHAPE default big)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "history.h"

static double cpu_time_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What a model's sockets have as memory places (see the top). */
struct shape {
	const char *name;
	int channels, slots;           /* channels counted per channel and per slot */
	int dimms;                     /* DIMMs with temperature and refresh (slot 0 of each channel) */
};

static const struct shape shapes[] = {
	{ .name = "big" },
	{ .name = "granite-rapids-2s", .channels = 12, .slots = 2 },
	{ .name = "genoa-2s", .dimms = 12 },
};

static struct history_place_reading places[2][HISTORY_MAX_PLACES];

/* Sample k's place readings of one socket, by shape; returns how many. */
static int place_readings(const struct shape *sh, struct history_place_reading *p, int k)
{
	int n = 0;

	for (int ch = 0; ch < sh->channels; ch++)
		for (int slot = -1; slot < sh->slots; slot++)
			p[n++] = (struct history_place_reading){
				.die = -1, .channel = ch, .slot = slot, .has_dram_share = true,
				.dram_share = ch == 2 ? (k % 3) / 3.0 : 0,
			};
	for (int ch = 0; ch < sh->dimms; ch++)
		p[n++] = (struct history_place_reading){
			.die = -1, .channel = ch, .slot = 0, .has_celsius = true,
			.celsius = 40 + (k + ch) % 50 / 4.0, .has_refresh = true,
			.refresh_doubled = ch == 3 && k % 2,
		};
	return n;
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

/* Both sockets' readings of sample k. */
static void readings(const struct shape *sh, struct history_reading r[2], int k)
{
	for (int s = 0; s < 2; s++) {
		reading(&r[s], k);
		r[s].places = places[s];
		r[s].n_places = place_readings(sh, places[s], k);
	}
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 50;
	const char *shape_name = argc > 2 ? argv[2] : "big";
	const struct shape *sh = NULL;
	int ids[2] = { 0, 1 };
	int per_step = (int)HISTORY_STEP_S;
	struct history *h;
	struct history_reading r[2] = { { 0 } };
	size_t len = 0, heap0;
	double t = 1000, t0;
	int k = 0;

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (strcmp(shapes[i].name, shape_name) == 0)
			sh = &shapes[i];
	if (!sh || steps <= 0) {
		fprintf(stderr, "bench_history: %s\n", sh ? "STEPS must be positive" :
			"SHAPE must be big, granite-rapids-2s or genoa-2s");
		return 1;
	}
	heap0 = mallinfo2().uordblks;
	h = history_new(2, ids, HISTORY_STEP_S, HISTORY_SPAN_S);
	if (!h) {
		fprintf(stderr, "bench_history: out of memory\n");
		return 1;
	}
	/* Fill the ring: one sample per second. */
	while (history_points(h) < (int)(HISTORY_SPAN_S / HISTORY_STEP_S)) {
		readings(sh, r, k);
		history_add(h, t, t + 1.7e9, r);
		t += 1;
		k++;
	}
	t0 = cpu_time_s();
	for (int i = 0; i < steps; i++) {
		struct history_doc *d;
		const char *text;

		for (int j = 0; j < per_step; j++, k++) {
			readings(sh, r, k);
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
	printf("history (%s): %zu bytes held (history_memory_bytes), heap in use %zu bytes "
	       "with the current document\n", sh->name, history_memory_bytes(h),
	       mallinfo2().uordblks - heap0);
	printf("history: %d points x 2 sockets, document %zu bytes; per step (folding %d samples and "
	       "formatting once) %.0f us CPU, %.0f us per 1 s sample\n",
	       history_points(h), len, per_step, t0 / steps * 1e6, t0 / steps / per_step * 1e6);
	history_free(h);
	return 0;
}
