/* pdata/u64map: open addressing with linear probing, grown at half full. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/u64map.h"

#define EMPTY UINT64_MAX

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	u64map_init(m);
}

void u64map_clear(struct u64map *m)
{
	if (m->cap)
		memset(m->keys, 0xff, m->cap * sizeof(*m->keys));
	m->n = 0;
}

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

uint32_t *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == EMPTY)
			return NULL;
	}
}

static int grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *nk = malloc(ncap * sizeof(*nk));
	uint32_t *nv = malloc(ncap * sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	memset(nk, 0xff, ncap * sizeof(*nk));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->keys[i] == EMPTY)
			continue;
		size_t j = slot_of(m->keys[i], ncap);
		while (nk[j] != EMPTY)
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	uint32_t *v = u64map_get(m, key);

	if (v) {
		*v = val;
		return 0;
	}
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	size_t i = slot_of(key, m->cap);
	while (m->keys[i] != EMPTY)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

int refcounts_init(struct refcounts *rc, uint64_t n)
{
	memset(rc, 0, sizeof(*rc));
	rc->n = n;
	u64map_init(&rc->map);
	if (n <= REFCOUNTS_DENSE_MAX) {
		rc->arr = calloc(n ? n : 1, sizeof(*rc->arr));
		if (!rc->arr)
			return -ENOMEM;
	}
	return 0;
}

void refcounts_free(struct refcounts *rc)
{
	free(rc->arr);
	u64map_free(&rc->map);
	rc->arr = NULL;
}

uint32_t refcounts_get(const struct refcounts *rc, uint64_t b)
{
	if (b >= rc->n)
		return 0;
	if (rc->arr && rc->arr[b] < UINT8_MAX)
		return rc->arr[b];
	uint32_t *v = u64map_get(&rc->map, b);
	return v ? *v : 0;
}

int refcounts_inc(struct refcounts *rc, uint64_t b)
{
	if (b >= rc->n)
		return 0;
	if (rc->arr && rc->arr[b] < UINT8_MAX - 1) {
		rc->arr[b]++;
		return 0;
	}
	if (rc->arr && rc->arr[b] == UINT8_MAX - 1) {
		rc->arr[b] = UINT8_MAX; /* from here on the count is in the map */
		return u64map_put(&rc->map, b, UINT8_MAX);
	}
	uint32_t *v = u64map_get(&rc->map, b);
	if (v) {
		*v += *v < UINT32_MAX;
		return 0;
	}
	return u64map_put(&rc->map, b, 1);
}
