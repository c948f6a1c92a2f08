/* pdata/block_manager: bounded block cache with validators (see block_manager.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/block_manager.h"
#include "util/util.h"

struct bm_block {
	uint64_t b;
	uint8_t *data;
	const struct bm_validator *valid; /* validator that accepted the content, or NULL */
	struct block_manager *bm;
	int readers;
	bool writer, dirty, used;
	int lru_prev, lru_next; /* -1 = none; most recent at the head */
	int hnext;              /* hash chain */
};

struct block_manager {
	struct bdev *bd;
	uint64_t nr_blocks;
	struct bm_block *e;
	/* The blocks' buffers, one allocation: a 4 KiB-aligned allocation of its own per block
	 * costs glibc two pages. Pages are touched as the cache fills. */
	uint8_t *slab;
	size_t n;        /* cache capacity in blocks */
	int *buckets;    /* hash heads, -1 = empty */
	size_t nbuckets; /* power of two */
	int lru_head, lru_tail;
	int free_head; /* unused entries chained by hnext */
	struct bm_stats st;
};

uint32_t pdata_block_csum(const void *data, uint32_t salt)
{
	return crc32c(0xffffffffu, (const uint8_t *)data + 4, PDATA_BLOCK_SIZE - 4) ^ salt;
}

int bm_validate(const struct bm_validator *v, const void *data, uint64_t b, char *why,
                size_t whylen)
{
	le32 stored;
	le64 bn;
	uint32_t want = pdata_block_csum(data, v->salt);

	memcpy(&stored, data, 4);
	if (le32_to_cpu(stored) != want) {
		snprintf(why, whylen, "%s: checksum mismatch (stored 0x%08x, computed 0x%08x)",
		         v->name, le32_to_cpu(stored), want);
		return -EILSEQ;
	}
	memcpy(&bn, (const uint8_t *)data + 8, 8);
	if (le64_to_cpu(bn) != b) {
		snprintf(why, whylen, "%s: block number %" PRIu64 " stored, expected %" PRIu64,
		         v->name, le64_to_cpu(bn), b);
		return -EILSEQ;
	}
	if (v->check) {
		char more[160];
		int r = v->check(data, b, more, sizeof(more));
		if (r) {
			snprintf(why, whylen, "%s: %s", v->name, more);
			return r;
		}
	}
	return 0;
}

void bm_prepare_for_write(const struct bm_validator *v, void *data, uint64_t b)
{
	le64 bn = cpu_to_le64(b);
	le32 c;

	memcpy((uint8_t *)data + 8, &bn, 8);
	c = cpu_to_le32(pdata_block_csum(data, v->salt));
	memcpy(data, &c, 4);
}

int bm_create(struct bdev *bd, size_t cache_bytes, struct block_manager **out)
{
	struct block_manager *bm = calloc(1, sizeof(*bm));
	size_t n = cache_bytes / PDATA_BLOCK_SIZE;

	if (!bm)
		return ulvm_error(-ENOMEM, "out of memory for the metadata block cache");
	if (n < PDATA_MIN_CACHE_BLOCKS)
		n = PDATA_MIN_CACHE_BLOCKS;
	bm->bd = bd;
	bm->nr_blocks = bd->size / PDATA_BLOCK_SIZE;
	bm->n = n;
	bm->nbuckets = 1;
	while (bm->nbuckets < n * 2)
		bm->nbuckets <<= 1;
	bm->e = calloc(n, sizeof(*bm->e));
	bm->buckets = malloc(bm->nbuckets * sizeof(int));
	bm->slab = bdev_alloc_buffer(n * PDATA_BLOCK_SIZE);
	if (!bm->e || !bm->buckets || !bm->slab) {
		bm_destroy(bm);
		return ulvm_error(-ENOMEM, "out of memory for the metadata block cache");
	}
	for (size_t i = 0; i < bm->nbuckets; i++)
		bm->buckets[i] = -1;
	for (size_t i = 0; i < n; i++) {
		bm->e[i].bm = bm;
		bm->e[i].data = bm->slab + i * PDATA_BLOCK_SIZE;
		bm->e[i].hnext = i + 1 < n ? (int)i + 1 : -1;
		bm->e[i].lru_prev = bm->e[i].lru_next = -1;
	}
	bm->free_head = 0;
	bm->lru_head = bm->lru_tail = -1;
	*out = bm;
	return 0;
}

void bm_destroy(struct block_manager *bm)
{
	if (!bm)
		return;
	free(bm->slab);
	free(bm->e);
	free(bm->buckets);
	free(bm);
}

uint64_t bm_nr_blocks(const struct block_manager *bm)
{
	return bm->nr_blocks;
}

struct bdev *bm_bdev(struct block_manager *bm)
{
	return bm->bd;
}

size_t bm_cache_blocks(const struct block_manager *bm)
{
	return bm->n;
}

void bm_get_stats(const struct block_manager *bm, struct bm_stats *st)
{
	*st = bm->st;
}

static size_t hash_of(const struct block_manager *bm, uint64_t b)
{
	return (size_t)((b * 0x9e3779b97f4a7c15ull) >> 20) & (bm->nbuckets - 1);
}

static int lookup(struct block_manager *bm, uint64_t b)
{
	for (int i = bm->buckets[hash_of(bm, b)]; i >= 0; i = bm->e[i].hnext)
		if (bm->e[i].b == b)
			return i;
	return -1;
}

static void lru_unlink(struct block_manager *bm, int i)
{
	struct bm_block *x = &bm->e[i];

	if (x->lru_prev >= 0)
		bm->e[x->lru_prev].lru_next = x->lru_next;
	else
		bm->lru_head = x->lru_next;
	if (x->lru_next >= 0)
		bm->e[x->lru_next].lru_prev = x->lru_prev;
	else
		bm->lru_tail = x->lru_prev;
	x->lru_prev = x->lru_next = -1;
}

static void lru_push_head(struct block_manager *bm, int i)
{
	struct bm_block *x = &bm->e[i];

	x->lru_prev = -1;
	x->lru_next = bm->lru_head;
	if (bm->lru_head >= 0)
		bm->e[bm->lru_head].lru_prev = i;
	bm->lru_head = i;
	if (bm->lru_tail < 0)
		bm->lru_tail = i;
}

static void hash_remove(struct block_manager *bm, int i)
{
	int *p = &bm->buckets[hash_of(bm, bm->e[i].b)];

	while (*p >= 0 && *p != i)
		p = &bm->e[*p].hnext;
	if (*p == i)
		*p = bm->e[i].hnext;
}

static int write_entry(struct block_manager *bm, struct bm_block *x)
{
	int r;

	if (x->valid)
		bm_prepare_for_write(x->valid, x->data, x->b);
	r = bdev_write(bm->bd, x->data, PDATA_BLOCK_SIZE, x->b << PDATA_BLOCK_SHIFT);
	if (r)
		return ulvm_error(r, "metadata block %" PRIu64 ": write failed: %s", x->b,
		                  strerror(-r));
	bm->st.writes++;
	x->dirty = false;
	return 0;
}

/* A free entry, evicting the least recently used unlocked block if the cache is full. */
static int get_entry(struct block_manager *bm, int *out)
{
	int i;

	if (bm->free_head >= 0) {
		i = bm->free_head;
		bm->free_head = bm->e[i].hnext;
	} else {
		for (i = bm->lru_tail; i >= 0; i = bm->e[i].lru_prev)
			if (!bm->e[i].readers && !bm->e[i].writer)
				break;
		if (i < 0)
			return ulvm_error(-ENOMEM,
			                  "metadata block cache: all %zu blocks are locked", bm->n);
		if (bm->e[i].dirty) {
			int r = write_entry(bm, &bm->e[i]);
			if (r)
				return r;
		}
		lru_unlink(bm, i);
		hash_remove(bm, i);
		bm->st.evictions++;
	}
	bm->e[i].used = false;
	bm->e[i].valid = NULL;
	bm->e[i].dirty = false;
	bm->e[i].readers = 0;
	bm->e[i].writer = false;
	*out = i;
	return 0;
}

static void insert_entry(struct block_manager *bm, int i, uint64_t b)
{
	size_t h = hash_of(bm, b);

	bm->e[i].b = b;
	bm->e[i].used = true;
	bm->e[i].hnext = bm->buckets[h];
	bm->buckets[h] = i;
	lru_push_head(bm, i);
}

static void release_entry(struct block_manager *bm, int i)
{
	bm->e[i].used = false;
	bm->e[i].hnext = bm->free_head;
	bm->free_head = i;
}

static int check_range(struct block_manager *bm, uint64_t b)
{
	if (b >= bm->nr_blocks)
		return ulvm_error(-EINVAL,
		                  "metadata block %" PRIu64
		                  ": beyond the end of the metadata device (%" PRIu64 " blocks)",
		                  b, bm->nr_blocks);
	return 0;
}

static int get_block(struct block_manager *bm, uint64_t b, const struct bm_validator *v, bool zero,
                     int *out)
{
	int i = lookup(bm, b), r;

	if ((r = check_range(bm, b)))
		return r;
	if (i >= 0) {
		bm->st.hits++;
		lru_unlink(bm, i);
		lru_push_head(bm, i);
		if (zero) {
			if (bm->e[i].readers || bm->e[i].writer)
				goto busy;
			memset(bm->e[i].data, 0, PDATA_BLOCK_SIZE);
			bm->e[i].valid = v;
		}
	} else {
		if ((r = get_entry(bm, &i)))
			return r;
		if (zero) {
			memset(bm->e[i].data, 0, PDATA_BLOCK_SIZE);
			bm->e[i].valid = v;
		} else {
			r = bdev_read(bm->bd, bm->e[i].data, PDATA_BLOCK_SIZE,
			              b << PDATA_BLOCK_SHIFT);
			if (r) {
				release_entry(bm, i);
				return ulvm_error(r, "metadata block %" PRIu64 ": read failed: %s",
				                  b, strerror(-r));
			}
			bm->st.reads++;
		}
		insert_entry(bm, i, b);
	}
	if (v && bm->e[i].valid != v) {
		char why[256];
		r = bm_validate(v, bm->e[i].data, b, why, sizeof(why));
		if (r)
			return ulvm_error(r, "metadata block %" PRIu64 ": %s", b, why);
		bm->e[i].valid = v;
	}
	*out = i;
	return 0;
busy:
	return ulvm_error(-EBUSY, "metadata block %" PRIu64 ": already locked", b);
}

int bm_read_lock(struct block_manager *bm, uint64_t b, const struct bm_validator *v,
                 struct bm_block **out)
{
	int i, r = get_block(bm, b, v, false, &i);

	if (r)
		return r;
	if (bm->e[i].writer)
		return ulvm_error(-EBUSY, "metadata block %" PRIu64 ": write-locked", b);
	bm->e[i].readers++;
	*out = &bm->e[i];
	return 0;
}

static int wlock(struct block_manager *bm, uint64_t b, const struct bm_validator *v, bool zero,
                 struct bm_block **out)
{
	int i, r;

	if (!v)
		return ulvm_error(-EINVAL, "metadata block %" PRIu64 ": write without a block type",
		                  b);
	r = get_block(bm, b, v, zero, &i);
	if (r)
		return r;
	if (bm->e[i].writer || bm->e[i].readers)
		return ulvm_error(-EBUSY, "metadata block %" PRIu64 ": already locked", b);
	bm->e[i].writer = true;
	*out = &bm->e[i];
	return 0;
}

int bm_write_lock(struct block_manager *bm, uint64_t b, const struct bm_validator *v,
                  struct bm_block **out)
{
	return wlock(bm, b, v, false, out);
}

int bm_write_lock_zero(struct block_manager *bm, uint64_t b, const struct bm_validator *v,
                       struct bm_block **out)
{
	return wlock(bm, b, v, true, out);
}

void bm_unlock(struct bm_block *blk)
{
	if (blk->writer) {
		blk->writer = false;
		blk->dirty = true;
	} else if (blk->readers > 0) {
		blk->readers--;
	}
}

void *bm_block_data(struct bm_block *blk)
{
	return blk->data;
}

uint64_t bm_block_location(const struct bm_block *blk)
{
	return blk->b;
}

static int cmp_entry_block(const void *a, const void *b)
{
	const struct bm_block *x = *(struct bm_block *const *)a, *y = *(struct bm_block *const *)b;

	return x->b < y->b ? -1 : x->b > y->b;
}

int bm_flush(struct block_manager *bm)
{
	struct bm_block **dirty = malloc(bm->n * sizeof(*dirty));
	size_t nd = 0;
	int r = 0;

	if (!dirty)
		return ulvm_error(-ENOMEM, "out of memory flushing the metadata cache");
	for (size_t i = 0; i < bm->n; i++)
		if (bm->e[i].used && bm->e[i].dirty && !bm->e[i].writer)
			dirty[nd++] = &bm->e[i];
	/* In block order: sequential on the device. */
	qsort(dirty, nd, sizeof(*dirty), cmp_entry_block);
	for (size_t i = 0; i < nd && !r; i++)
		r = write_entry(bm, dirty[i]);
	free(dirty);
	if (r)
		return r;
	r = bdev_flush(bm->bd);
	if (r)
		return ulvm_error(r, "metadata device %s: flush failed: %s", bm->bd->path,
		                  strerror(-r));
	return 0;
}

void bm_forget(struct block_manager *bm, uint64_t b)
{
	int i = lookup(bm, b);

	if (i < 0 || bm->e[i].readers || bm->e[i].writer)
		return;
	lru_unlink(bm, i);
	hash_remove(bm, i);
	release_entry(bm, i);
}
