/*
 * pdata/u64map: an open-addressing hash map from u64 keys to u32 values, for the sets and
 * maps the persistent-data layers keep (devices touched in a transaction, the checker's counts).
 * UINT64_MAX cannot be a key. Internal to pdata; uses libc only.
 */
#ifndef ULVM_PDATA_U64MAP_H
#define ULVM_PDATA_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap; /* power of two, or 0 */
	size_t n;
};

void u64map_init(struct u64map *m);
void u64map_free(struct u64map *m);
void u64map_clear(struct u64map *m);
/* Pointer to the value of key, or NULL. Valid until the next put. */
uint32_t *u64map_get(const struct u64map *m, uint64_t key);
/* Insert or overwrite: 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val);

#endif

/* Reference counters over a range of blocks: a byte per block when the range is small
 * enough (REFCOUNTS_DENSE_MAX blocks, 64 MiB), with the counts of 255 and more in the map;
 * else the map alone, whose size follows the blocks actually counted. For the checker and
 * thin_ls, which count data blocks of any size. */
#define REFCOUNTS_DENSE_MAX (64ull << 20)
struct refcounts {
	uint8_t *arr;
	struct u64map map;
	uint64_t n;
};
int refcounts_init(struct refcounts *rc, uint64_t n);
void refcounts_free(struct refcounts *rc);
uint32_t refcounts_get(const struct refcounts *rc, uint64_t b);
int refcounts_inc(struct refcounts *rc, uint64_t b); /* saturates; -ENOMEM */
