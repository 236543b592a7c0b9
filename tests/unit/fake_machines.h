/*
 * Hand-built machines and snapshots shared by the formatter tests; see
 * fake_machines.c for their shapes.  Snapshots are new references the
 * caller releases.
 */
#ifndef UNCORED_TEST_FAKE_MACHINES_H
#define UNCORED_TEST_FAKE_MACHINES_H

#include <stdbool.h>
#include <stdint.h>

#include "collector.h"
#include "cpu.h"
#include "snapshot.h"
#include "sample_views.h"

extern const struct cpu_info westmere;
extern const struct cpu_info skylake;
extern const struct cpu_topology tiny_topo;

const struct cpu_topology *big_topology(void);
const struct metric_family *thermal_family(const char *json_key);
/* Add v (an integer kind) or seconds v (a double) of the thermal family json_key at where. */
void add_thermal(struct snapshot *s, const char *json_key, int where, int64_t v);
void add_thermal_seconds(struct snapshot *s, const char *json_key, int where, double v);
void fill_thermal(struct snapshot *s);
/* The boolean key of [section] in conf, kept in its collector's settings block. */
bool *conf_setting_bool(struct conf *conf, const char *section, const char *key);
bool conf_setting_is(const struct conf *conf, const char *section, const char *key);
/* The CPUs (bits) fill_core_pmu leaves uncounted; 0 unless a test says otherwise. */
extern unsigned fake_uncounted_cpus;
void fill_core_pmu(struct snapshot *s);
void enable_collectors(struct snapshot *s, bool uncore, bool thermal, bool core);
struct snapshot *westmere_snapshot(void);
struct snapshot *skylake_snapshot(void);
struct snapshot *tiny_snapshot(void);

#endif
