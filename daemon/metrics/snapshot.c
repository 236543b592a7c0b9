/*
 * Snapshots: allocation shaped after the topology, lookups, and the one
 * shared "current snapshot" pointer.  The pointer is swapped under a small
 * mutex that is held only for the swap or for taking a reference, never
 * while anything is formatted; the reference count decides when a
 * snapshot and everything hanging off it (arrays, episodes, cached
 * /metrics text) is freed.  It does not fill in values or format them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cpu.h"
#include "history.h"
#include "snapshot.h"

/* Blocks hold a snapshot's strings; most fit in one. */
#define BLOCK_MIN_BYTES 4096

struct snapshot_block {
	struct snapshot_block *next;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

/* Buckets of the strings' hash table (label values, reasons: a few per CPU). */
#define STRING_BUCKETS 512

/* One distinct text of a snapshot, in the chain of its bucket. */
struct snapshot_string {
	struct snapshot_string *next;
	uint32_t hash;
	char text[];
};

static pthread_mutex_t current_lock = PTHREAD_MUTEX_INITIALIZER;
static struct snapshot *current;

static void snapshot_free(struct snapshot *s)
{
	for (struct snapshot_block *b = s->blocks, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	if (s->sockets)
		for (int i = 0; i < s->n_sockets; i++)
			free(s->sockets[i].cores);
	free(s->sockets);
	free(s->cpus);
	free(s->episodes);
	free(s->values);
	free(s->value_index);
	free(s->string_buckets);
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++)
		free(atomic_load(&s->rendered[i]));
	history_release(s->history);
	free(s);
}

static int fill_socket(struct snapshot_socket *dst, const struct cpu_socket *src)
{
	dst->socket = src->socket;
	if (src->n_cores <= 0)
		return 0;
	dst->cores = calloc((size_t)src->n_cores, sizeof(*dst->cores));
	if (!dst->cores)
		return -1;
	dst->n_cores = src->n_cores;
	for (int i = 0; i < src->n_cores; i++) {
		const struct cpu_core *c = &src->cores[i];
		struct snapshot_core *sc = &dst->cores[i];

		sc->core = c->core;
		sc->n_cpus = c->n_cpus < SNAPSHOT_MAX_CORE_CPUS ? c->n_cpus : SNAPSHOT_MAX_CORE_CPUS;
		memcpy(sc->cpus, c->cpus, (size_t)sc->n_cpus * sizeof(sc->cpus[0]));
	}
	return 0;
}

static int fill_shape(struct snapshot *s, const struct cpu_topology *topo)
{
	if (topo->n_sockets > 0) {
		s->sockets = calloc((size_t)topo->n_sockets, sizeof(*s->sockets));
		if (!s->sockets)
			return -1;
		s->n_sockets = topo->n_sockets;
		for (int i = 0; i < topo->n_sockets; i++)
			if (fill_socket(&s->sockets[i], &topo->sockets[i]) < 0)
				return -1;
	}
	if (topo->n_cpus > 0) {
		s->cpus = calloc((size_t)topo->n_cpus, sizeof(*s->cpus));
		if (!s->cpus)
			return -1;
		s->n_cpus = topo->n_cpus;
		for (int i = 0; i < topo->n_cpus; i++) {
			s->cpus[i].cpu = topo->cpus[i].cpu;
			s->cpus[i].socket = topo->cpus[i].socket;
			s->cpus[i].core = topo->cpus[i].core;
			s->cpus[i].online = topo->cpus[i].online;
		}
	}
	return 0;
}

/* src into dst (size bytes), truncated and NUL-terminated as snprintf "%s" would. */
static void copy_text(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static void copy_cpu_id(struct snapshot_cpu_id *dst, const struct cpu_info *info)
{
	copy_text(dst->vendor, sizeof(dst->vendor), info->vendor);
	dst->family = info->family;
	dst->model = info->model;
	dst->stepping = info->stepping;
	copy_text(dst->microarch, sizeof(dst->microarch), info->microarch ? info->microarch : "");
}

struct snapshot *snapshot_new(const struct cpu_topology *topo, const struct cpu_info *info)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	for (int i = 0; i < SNAPSHOT_N_RENDERED; i++)
		atomic_init(&s->rendered[i], NULL);
	copy_text(s->version, sizeof(s->version), UNCORED_VERSION);
	if (info)
		copy_cpu_id(&s->cpu_id, info);
	if (topo && fill_shape(s, topo) < 0) {
		snapshot_free(s);
		return NULL;
	}
	return s;
}

/* size bytes from s's blocks, aligned for any type, or NULL on ENOMEM. */
static void *snapshot_alloc(struct snapshot *s, size_t size)
{
	struct snapshot_block *b = s->blocks;
	void *p;

	size = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
	if (!b || b->size - b->used < size) {
		size_t cap = size > BLOCK_MIN_BYTES ? size : BLOCK_MIN_BYTES;

		b = malloc(sizeof(*b) + cap);
		if (!b) {
			s->is_short_of_memory = true;
			return NULL;
		}
		b->used = 0;
		b->size = cap;
		/* A block made for one large array goes behind the current one. */
		if (s->blocks && cap > BLOCK_MIN_BYTES) {
			b->next = s->blocks->next;
			s->blocks->next = b;
		} else {
			b->next = s->blocks;
			s->blocks = b;
		}
	}
	p = b->data + b->used;
	b->used += size;
	return p;
}

/* FNV-1a: cheap to compare before the bytes. */
static uint32_t hash_text(const char *text)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		h = (h ^ *p) * 16777619u;
	return h;
}

const char *snapshot_intern(struct snapshot *s, const char *text)
{
	uint32_t h = hash_text(text);
	size_t len = strlen(text);
	struct snapshot_string *str;

	if (!s->string_buckets) {
		s->string_buckets = calloc(STRING_BUCKETS, sizeof(*s->string_buckets));
		if (!s->string_buckets) {
			s->is_short_of_memory = true;
			return NULL;
		}
	}
	for (str = s->string_buckets[h % STRING_BUCKETS]; str; str = str->next)
		if (str->hash == h && strcmp(str->text, text) == 0)
			return str->text;
	str = snapshot_alloc(s, sizeof(*str) + len + 1);
	if (!str)
		return NULL;
	str->hash = h;
	memcpy(str->text, text, len + 1);
	str->next = s->string_buckets[h % STRING_BUCKETS];
	s->string_buckets[h % STRING_BUCKETS] = str;
	return str->text;
}

struct snapshot_socket *snapshot_socket(struct snapshot *s, int socket)
{
	for (int i = 0; i < s->n_sockets; i++)
		if (s->sockets[i].socket == socket)
			return &s->sockets[i];
	return NULL;
}

struct snapshot_core *snapshot_core(struct snapshot *s, int socket, int core)
{
	struct snapshot_socket *sock = snapshot_socket(s, socket);

	if (!sock)
		return NULL;
	for (int i = 0; i < sock->n_cores; i++)
		if (sock->cores[i].core == core)
			return &sock->cores[i];
	return NULL;
}

struct snapshot_cpu *snapshot_cpu(struct snapshot *s, int cpu)
{
	for (int i = 0; i < s->n_cpus; i++)
		if (s->cpus[i].cpu == cpu)
			return &s->cpus[i];
	return NULL;
}

static void (*publish_hook)(struct snapshot *s, void *arg);
static void *publish_hook_arg;

void snapshot_set_publish_hook(void (*hook)(struct snapshot *s, void *arg), void *arg)
{
	publish_hook = hook;
	publish_hook_arg = arg;
}

void snapshot_publish(struct snapshot *s)
{
	struct snapshot *old;

	if (s && publish_hook)
		atomic_fetch_add(&s->refs, 1);   /* the hook's, as current may change meanwhile */
	pthread_mutex_lock(&current_lock);
	old = current;
	current = s;
	pthread_mutex_unlock(&current_lock);
	snapshot_release(old);
	if (s && publish_hook) {
		publish_hook(s, publish_hook_arg);
		snapshot_release(s);
	}
}

static void (*refresh_hook)(void);

void snapshot_set_refresh_hook(void (*hook)(void))
{
	refresh_hook = hook;
}

struct snapshot *snapshot_acquire(void)
{
	struct snapshot *s;

	if (refresh_hook)
		refresh_hook();
	pthread_mutex_lock(&current_lock);
	s = current;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&current_lock);
	return s;
}

void snapshot_release(struct snapshot *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		snapshot_free(s);
}

void snapshot_clear(void)
{
	snapshot_publish(NULL);
}

struct snapshot_collector *snapshot_add_collector(struct snapshot *s, const char *name)
{
	struct snapshot_collector *c;

	for (int i = 0; i < s->n_collectors; i++)
		if (strcmp(s->collectors[i].name, name) == 0)
			return &s->collectors[i];
	if (s->n_collectors == SNAPSHOT_MAX_COLLECTORS)
		return NULL;
	c = &s->collectors[s->n_collectors++];
	*c = (struct snapshot_collector){ .name = name, .reason = "" };
	return c;
}

const struct snapshot_collector *snapshot_find_collector(const struct snapshot *s,
							 const char *name)
{
	for (int i = 0; i < s->n_collectors; i++)
		if (strcmp(s->collectors[i].name, name) == 0)
			return &s->collectors[i];
	return NULL;
}

const char *snapshot_collector_state(const struct snapshot_collector *c)
{
	if (!c->enabled)
		return "disabled";
	if (c->not_applicable)
		return "not_applicable";
	if (c->up)
		return "up";
	return c->units_counting > 0 ? "partial" : "down";
}
