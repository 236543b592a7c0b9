/*
 * pmu-tree MODEL ROOT: write the PMU tree the kernel would show for the
 * simulated MODEL under ROOT/sys/bus/event_source/devices, with the
 * simulator's own writer (sim_write_sysfs), so that the device-file tree
 * of the end-to-end tests (tests/e2e/make_tree.py --pmus) holds exactly
 * what the simulator shows and no second copy of the format tables.
 */
#include <stdio.h>

#include "hw.h"
#include "sim.h"

int main(int argc, char **argv)
{
	char err[512];
	struct sim *sim;
	struct hw hw;
	int r;

	if (argc != 3) {
		fprintf(stderr, "usage: pmu-tree MODEL ROOT\n");
		return 2;
	}
	sim = sim_open(argv[1], NULL, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!sim) {
		fprintf(stderr, "pmu-tree: %s\n", err);
		return 1;
	}
	r = sim_write_sysfs(sim, argv[2], err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "pmu-tree: %s\n", err);
	sim_bind(sim, &hw);
	hw_close(&hw);   /* frees the sim */
	return r < 0 ? 1 : 0;
}
