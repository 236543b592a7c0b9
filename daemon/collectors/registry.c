/*
 * The collector registration table: one line per built-in collector, in
 * the order their status and families appear in every output.  Nothing
 * else in the daemon names a collector.
 */
#include <errno.h>
#include <string.h>

#include "collector.h"

extern const struct collector_ops uncore_collector_ops;
extern const struct collector_ops thermal_collector_ops;
extern const struct collector_ops core_collector_ops;
extern const struct collector_ops pcu_collector_ops;
extern const struct collector_ops imc_collector_ops;
extern const struct collector_ops k10temp_collector_ops;
extern const struct collector_ops hsmp_collector_ops;

const struct collector_ops *collector_registry[SNAPSHOT_MAX_COLLECTORS] = {
	&uncore_collector_ops,
	&thermal_collector_ops,
	&core_collector_ops,
	&pcu_collector_ops,
	&imc_collector_ops,
	&k10temp_collector_ops,
	&hsmp_collector_ops,
};

size_t collector_registry_n;

/*
 * Count the table above once, before any COLLECTOR_REGISTER constructor
 * (those run at the default priority, after this one) and before main.
 */
__attribute__((constructor(101))) static void count_built_in(void)
{
	while (collector_registry_n < SNAPSHOT_MAX_COLLECTORS &&
	       collector_registry[collector_registry_n])
		collector_registry_n++;
}

int collector_register(const struct collector_ops *ops)
{
	count_built_in();
	if (collector_find(ops->name))
		return -EEXIST;
	if (ops->conf_section && ops->conf_section->settings_size > CONF_SETTINGS_BYTES)
		return -E2BIG;
	if (collector_registry_n == SNAPSHOT_MAX_COLLECTORS)
		return -ENOSPC;
	collector_registry[collector_registry_n++] = ops;
	return 0;
}

_Static_assert(CONF_MAX_COLLECTORS >= SNAPSHOT_MAX_COLLECTORS,
	       "every registered collector has a settings block");

const void *collector_settings(const struct conf *conf, const struct collector_ops *ops)
{
	for (size_t i = 0; i < collector_registry_n; i++)
		if (collector_registry[i] == ops)
			return conf->settings[i];
	return NULL;
}

bool collector_ops_enabled(const struct collector_ops *ops, const struct conf *conf)
{
	const struct conf_section *sec = ops->conf_section;
	const char *set;

	if (ops->is_enabled)
		return ops->is_enabled(conf);
	set = sec ? collector_settings(conf, ops) : NULL;
	for (size_t k = 0; set && k < sec->n_keys; k++)
		if (sec->keys[k].kind == CONF_KIND_BOOL && strcmp(sec->keys[k].name, "enabled") == 0)
			return *(const bool *)(set + sec->keys[k].offset);
	return true;
}

bool collector_ops_conf_changed(const struct collector_ops *ops, const struct conf *old,
				const struct conf *new)
{
	if (ops->conf_changed)
		return ops->conf_changed(old, new);
	return ops->conf_section && conf_settings_changed(ops->conf_section,
							  collector_settings(old, ops),
							  collector_settings(new, ops));
}

const struct collector_ops *collector_find(const char *name)
{
	for (size_t i = 0; i < collector_registry_n; i++)
		if (strcmp(collector_registry[i]->name, name) == 0)
			return collector_registry[i];
	return NULL;
}

size_t metric_source_count(void)
{
	return collector_registry_n;
}

const char *metric_source_name(size_t i)
{
	return collector_registry[i]->name;
}

const struct metric_family *const *metric_source_families(size_t i, size_t *ret_n)
{
	*ret_n = collector_registry[i]->n_families;
	return collector_registry[i]->families;
}

size_t conf_collector_count(void)
{
	return collector_registry_n;
}

const struct conf_section *conf_collector_section(size_t i)
{
	return collector_registry[i]->conf_section;
}

const char *conf_collector_name(size_t i)
{
	return collector_registry[i]->name;
}

bool conf_collector_enabled(size_t i, const struct conf *conf)
{
	return collector_ops_enabled(collector_registry[i], conf);
}
