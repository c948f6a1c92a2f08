/* pdata/space_map: metadata and disk space maps (format and rules in space_map.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/space_map.h"
#include "pdata/u64map.h"

const struct bm_validator sm_bitmap_validator = {"space map bitmap", SM_BITMAP_SALT, NULL};
const struct bm_validator sm_index_validator = {"metadata space map index", SM_INDEX_SALT, NULL};

struct index_cpu {
	uint64_t blocknr; /* 0: no bitmap written yet (all free) */
	uint32_t nr_free, none_free_before;
};

struct delta {
	uint64_t b;
	uint32_t cur, committed;
	uint32_t tree; /* the count the ref-count tree holds for b (0: no entry) */
};

struct space_map {
	enum sm_kind kind;
	struct transaction_manager *tm;
	uint64_t nr_blocks, nr_allocated;
	uint64_t nr_bitmaps;
	struct index_cpu *idx; /* committed index */
	uint64_t index_root;   /* metadata: index block; data: index btree root */
	uint64_t ref_root;
	struct delta *delta;
	size_t ndelta, cap;
	struct u64map dmap; /* block -> position in delta */
	uint64_t cursor;
	uint64_t rewrite_from; /* bitmaps from here on are rewritten at the commit (grown) */
	const char *what;      /* "metadata" or "data" */
};

static const struct btree_value_type ref_vt = {4, NULL, NULL, NULL};
static const struct btree_value_type index_vt = {sizeof(struct disk_index_entry), NULL, NULL, NULL};

static uint64_t bitmaps_for(uint64_t nr_blocks)
{
	return (nr_blocks + SM_ENTRIES_PER_BITMAP - 1) / SM_ENTRIES_PER_BITMAP;
}

static int sm_alloc(enum sm_kind kind, struct transaction_manager *tm, uint64_t nr_blocks,
                    struct space_map **out)
{
	struct space_map *sm = calloc(1, sizeof(*sm));

	if (!sm)
		return ulvm_error(-ENOMEM, "out of memory for a space map");
	sm->kind = kind;
	sm->tm = tm;
	sm->what = kind == SM_METADATA ? "metadata" : "data";
	sm->nr_blocks = nr_blocks;
	sm->nr_bitmaps = bitmaps_for(nr_blocks);
	if (kind == SM_METADATA && sm->nr_bitmaps > SM_MAX_METADATA_BITMAPS) {
		free(sm);
		return ulvm_error(-EINVAL,
		                  "metadata space map: %" PRIu64
		                  " blocks, more than the %llu one index "
		                  "block can describe",
		                  nr_blocks, SM_MAX_METADATA_BLOCKS);
	}
	sm->idx = calloc(sm->nr_bitmaps ? sm->nr_bitmaps : 1, sizeof(*sm->idx));
	if (!sm->idx) {
		free(sm);
		return ulvm_error(-ENOMEM, "out of memory for a space map index");
	}
	u64map_init(&sm->dmap);
	sm->rewrite_from = UINT64_MAX;
	*out = sm;
	return 0;
}

void sm_destroy(struct space_map *sm)
{
	if (!sm)
		return;
	free(sm->idx);
	free(sm->delta);
	u64map_free(&sm->dmap);
	free(sm);
}

static int check_data_size(struct transaction_manager *tm, uint64_t nr_blocks);

/* ---- counts ---------------------------------------------------------------------------- */

static int committed_count(struct space_map *sm, uint64_t b, uint32_t *count)
{
	struct bm_block *blk;
	uint64_t bi = b / SM_ENTRIES_PER_BITMAP;
	int r;

	if (b >= sm->nr_blocks)
		return ulvm_error(-EINVAL,
		                  "%s space map: block %" PRIu64 " beyond its %" PRIu64 " blocks",
		                  sm->what, b, sm->nr_blocks);
	if (!sm->idx[bi].blocknr) {
		*count = 0;
		return 0;
	}
	if ((r = tm_read_lock(sm->tm, sm->idx[bi].blocknr, &sm_bitmap_validator, &blk)))
		return r;
	*count = sm_bitmap_entry(bm_block_data(blk), (uint32_t)(b % SM_ENTRIES_PER_BITMAP));
	tm_unlock(sm->tm, blk);
	if (*count == 3) {
		le32 v;
		r = btree_lookup(sm->tm, 4, sm->ref_root, b, &v);
		if (r == -ENODATA)
			return ulvm_error(
			    -EILSEQ,
			    "%s space map: block %" PRIu64
			    " has count 3+ in its bitmap but no entry in the ref-count tree",
			    sm->what, b);
		if (r)
			return r;
		*count = le32_to_cpu(v);
	}
	return 0;
}

/* Position of b in the delta, adding it with its committed count if needed. */
static int delta_of(struct space_map *sm, uint64_t b, size_t *pos)
{
	uint32_t *p = u64map_get(&sm->dmap, b), c;
	int r;

	if (p) {
		*pos = *p;
		return 0;
	}
	if ((r = committed_count(sm, b, &c)))
		return r;
	if (sm->ndelta == sm->cap) {
		size_t ncap = sm->cap ? sm->cap * 2 : 256;
		struct delta *nd = realloc(sm->delta, ncap * sizeof(*nd));
		if (!nd)
			return ulvm_error(-ENOMEM, "out of memory in the %s space map", sm->what);
		sm->delta = nd;
		sm->cap = ncap;
	}
	if (sm->ndelta >= UINT32_MAX || u64map_put(&sm->dmap, b, (uint32_t)sm->ndelta))
		return ulvm_error(-ENOMEM, "out of memory in the %s space map", sm->what);
	sm->delta[sm->ndelta] = (struct delta){b, c, c, c >= 3 ? c : 0};
	*pos = sm->ndelta++;
	return 0;
}

int sm_get_count(struct space_map *sm, uint64_t b, uint32_t *count)
{
	uint32_t *p = u64map_get(&sm->dmap, b);

	if (p) {
		*count = sm->delta[*p].cur;
		return 0;
	}
	return committed_count(sm, b, count);
}

static void set_cur(struct space_map *sm, size_t pos, uint32_t c)
{
	struct delta *e = &sm->delta[pos];

	if (!e->cur && c)
		sm->nr_allocated++;
	else if (e->cur && !c)
		sm->nr_allocated--;
	e->cur = c;
}

int sm_inc(struct space_map *sm, uint64_t b)
{
	size_t pos = 0;
	int r = delta_of(sm, b, &pos);

	if (r)
		return r;
	if (sm->delta[pos].cur == UINT32_MAX)
		return ulvm_error(-EOVERFLOW, "%s space map: block %" PRIu64 ": count overflows",
		                  sm->what, b);
	set_cur(sm, pos, sm->delta[pos].cur + 1);
	return 0;
}

int sm_dec(struct space_map *sm, uint64_t b)
{
	size_t pos = 0;
	int r = delta_of(sm, b, &pos);

	if (r)
		return r;
	if (!sm->delta[pos].cur)
		return ulvm_error(-EILSEQ,
		                  "%s space map: block %" PRIu64 ": releasing a block that is free",
		                  sm->what, b);
	set_cur(sm, pos, sm->delta[pos].cur - 1);
	return 0;
}

/* ---- allocation ------------------------------------------------------------------------ */

/* First entry >= e0 of bitmap bi free at the last commit and untouched since. */
static int scan_bitmap(struct space_map *sm, uint64_t bi, uint32_t e0, uint32_t e_end,
                       uint64_t *found)
{
	struct bm_block *blk = NULL;
	const uint64_t *w = NULL;
	int r;

	if (sm->idx[bi].blocknr) {
		if (sm->idx[bi].nr_free == 0)
			return -ENOSPC;
		if ((r = tm_read_lock(sm->tm, sm->idx[bi].blocknr, &sm_bitmap_validator, &blk)))
			return r;
		w = (const uint64_t *)((const uint8_t *)bm_block_data(blk) + SM_BITMAP_HEADER_SIZE);
	}
	for (uint32_t wi = e0 / 32; wi * 32 < e_end; wi++) {
		uint64_t v = 0, freemask;
		if (w) {
			v = w[wi];
			if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
				v = __builtin_bswap64(v);
		}
		freemask = ~(v | (v >> 1)) & 0x5555555555555555ull;
		if (wi == e0 / 32)
			freemask &= ~0ull << (2 * (e0 % 32));
		while (freemask) {
			uint32_t e = wi * 32 + (uint32_t)__builtin_ctzll(freemask) / 2;
			freemask &= freemask - 1;
			if (e >= e_end)
				break;
			uint64_t b = bi * SM_ENTRIES_PER_BITMAP + e;
			if (!u64map_get(&sm->dmap, b)) {
				if (blk)
					tm_unlock(sm->tm, blk);
				*found = b;
				return 0;
			}
		}
	}
	if (blk)
		tm_unlock(sm->tm, blk);
	return -ENOSPC;
}

static int find_free(struct space_map *sm, uint64_t from, uint64_t to, uint64_t *found)
{
	while (from < to) {
		uint64_t bi = from / SM_ENTRIES_PER_BITMAP;
		uint64_t base = bi * SM_ENTRIES_PER_BITMAP;
		uint64_t end = MIN(to, base + SM_ENTRIES_PER_BITMAP);
		int r = scan_bitmap(sm, bi, (uint32_t)(from - base), (uint32_t)(end - base), found);
		if (r != -ENOSPC)
			return r;
		from = end;
	}
	return -ENOSPC;
}

int sm_new_block(struct space_map *sm, uint64_t *b)
{
	size_t pos = 0;
	int r;

	if (sm->cursor >= sm->nr_blocks)
		sm->cursor = 0;
	r = find_free(sm, sm->cursor, sm->nr_blocks, b);
	if (r == -ENOSPC)
		r = find_free(sm, 0, sm->cursor, b);
	if (r == -ENOSPC)
		return ulvm_error(-ENOSPC, "%s space map: no free block (%" PRIu64 " blocks)",
		                  sm->what, sm->nr_blocks);
	if (r)
		return r;
	sm->cursor = *b + 1;
	if ((r = delta_of(sm, *b, &pos)))
		return r;
	set_cur(sm, pos, 1);
	return 0;
}

/* ---- commit ---------------------------------------------------------------------------- */

static int commit_ref_tree(struct space_map *sm)
{
	bool again = true;
	int r;

	while (again) {
		again = false;
		for (size_t p = 0; p < sm->ndelta; p++) {
			uint32_t want = sm->delta[p].cur >= 3 ? sm->delta[p].cur : 0;
			uint64_t b = sm->delta[p].b;
			if (want == sm->delta[p].tree)
				continue;
			if (want) {
				le32 v = cpu_to_le32(want);
				r = btree_insert(sm->tm, &ref_vt, sm->ref_root, b, &v,
				                 &sm->ref_root, NULL);
			} else {
				r = btree_remove(sm->tm, &ref_vt, sm->ref_root, b, &sm->ref_root);
			}
			if (r)
				return r;
			sm->delta[p].tree = want; /* re-read: the call may have grown the delta */
			again = true;
		}
	}
	return 0;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	return x->b < y->b ? -1 : x->b > y->b;
}

static bool bitmap_changes(const struct delta *e)
{
	return MIN(e->cur, 3u) != MIN(e->committed, 3u);
}

int sm_commit(struct space_map *sm)
{
	struct transaction_manager *tm = sm->tm;
	uint64_t *newloc = calloc(sm->nr_bitmaps ? sm->nr_bitmaps : 1, sizeof(*newloc));
	uint64_t index_loc = 0;
	uint8_t *buf = NULL;
	bool again = true;
	int r;

	if (!newloc)
		return ulvm_error(-ENOMEM, "out of memory committing the %s space map", sm->what);
	if ((r = commit_ref_tree(sm)))
		goto out;
	if (sm->kind == SM_METADATA) {
		if ((r = tm_alloc_block(tm, &index_loc)))
			goto out;
		if (sm->index_root && (r = tm_dec(tm, sm->index_root)))
			goto out;
	}
	/* New locations for every bitmap that changes (and for new ones), until the
	 * allocations themselves change nothing more. */
	while (again) {
		again = false;
		for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++) {
			if (newloc[bi] || (sm->idx[bi].blocknr && bi < sm->rewrite_from))
				continue;
			if ((r = tm_alloc_block(tm, &newloc[bi])))
				goto out;
			if (sm->idx[bi].blocknr && (r = tm_dec(tm, sm->idx[bi].blocknr)))
				goto out;
			again = true;
		}
		for (size_t p = 0; p < sm->ndelta; p++) {
			uint64_t bi = sm->delta[p].b / SM_ENTRIES_PER_BITMAP;
			if (!bitmap_changes(&sm->delta[p]) || newloc[bi])
				continue;
			if ((r = tm_alloc_block(tm, &newloc[bi])))
				goto out;
			if ((r = tm_dec(tm, sm->idx[bi].blocknr)))
				goto out;
			again = true;
		}
	}
	/* No allocation from here on: render the bitmaps. */
	if (sm->ndelta)
		qsort(sm->delta, sm->ndelta, sizeof(*sm->delta), cmp_delta);
	buf = malloc(PDATA_BLOCK_SIZE);
	if (!buf) {
		r = ulvm_error(-ENOMEM, "out of memory committing the %s space map", sm->what);
		goto out;
	}
	size_t p = 0;
	for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++) {
		uint64_t base = bi * SM_ENTRIES_PER_BITMAP;
		uint32_t valid =
		    (uint32_t)MIN((uint64_t)SM_ENTRIES_PER_BITMAP, sm->nr_blocks - base);
		struct bm_block *blk;

		while (p < sm->ndelta && sm->delta[p].b < base)
			p++;
		if (!newloc[bi])
			continue;
		if (sm->idx[bi].blocknr) {
			if ((r = tm_read_lock(tm, sm->idx[bi].blocknr, &sm_bitmap_validator, &blk)))
				goto out;
			memcpy(buf, bm_block_data(blk), PDATA_BLOCK_SIZE);
			tm_unlock(tm, blk);
		} else {
			memset(buf, 0, PDATA_BLOCK_SIZE);
		}
		for (; p < sm->ndelta && sm->delta[p].b < base + SM_ENTRIES_PER_BITMAP; p++)
			sm_bitmap_set(buf, (uint32_t)(sm->delta[p].b - base),
			              MIN(sm->delta[p].cur, 3u));
		/* Entries past the end stay zero; the hints are exact. */
		uint32_t nr_free = 0, nfb = valid;
		for (uint32_t e = 0; e < valid; e++)
			if (!sm_bitmap_entry(buf, e)) {
				if (!nr_free)
					nfb = e;
				nr_free++;
			}
		if ((r = tm_lock_new(tm, newloc[bi], &sm_bitmap_validator, &blk)))
			goto out;
		memcpy(bm_block_data(blk), buf, PDATA_BLOCK_SIZE);
		tm_unlock(tm, blk);
		sm->idx[bi] = (struct index_cpu){newloc[bi], nr_free, nfb};
		if (sm->kind == SM_DATA) {
			struct disk_index_entry ie = {cpu_to_le64(newloc[bi]), cpu_to_le32(nr_free),
			                              cpu_to_le32(nfb)};
			if ((r = btree_insert(tm, &index_vt, sm->index_root, bi, &ie,
			                      &sm->index_root, NULL)))
				goto out;
		}
	}
	if (sm->kind == SM_METADATA) {
		struct bm_block *blk;
		if ((r = tm_lock_new(tm, index_loc, &sm_index_validator, &blk)))
			goto out;
		struct disk_metadata_index *mi = bm_block_data(blk);
		for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++)
			mi->index[bi] = (struct disk_index_entry){
			    cpu_to_le64(sm->idx[bi].blocknr), cpu_to_le32(sm->idx[bi].nr_free),
			    cpu_to_le32(sm->idx[bi].none_free_before)};
		tm_unlock(tm, blk);
		sm->index_root = index_loc;
	}
	sm->ndelta = 0;
	u64map_clear(&sm->dmap);
	sm->rewrite_from = UINT64_MAX;
	r = 0;
out:
	free(buf);
	free(newloc);
	return r;
}

void sm_root(const struct space_map *sm, struct disk_sm_root *out)
{
	out->nr_blocks = cpu_to_le64(sm->nr_blocks);
	out->nr_allocated = cpu_to_le64(sm->nr_allocated);
	out->bitmap_root = cpu_to_le64(sm->index_root);
	out->ref_count_root = cpu_to_le64(sm->ref_root);
}

uint64_t sm_nr_blocks(const struct space_map *sm)
{
	return sm->nr_blocks;
}

uint64_t sm_nr_allocated(const struct space_map *sm)
{
	return sm->nr_allocated;
}

int sm_extend(struct space_map *sm, uint64_t nr_blocks)
{
	uint64_t nb = bitmaps_for(nr_blocks);

	if (nr_blocks < sm->nr_blocks)
		return ulvm_error(
		    -EINVAL, "%s space map: cannot shrink from %" PRIu64 " to %" PRIu64 " blocks",
		    sm->what, sm->nr_blocks, nr_blocks);
	if (sm->kind == SM_METADATA && nb > SM_MAX_METADATA_BITMAPS)
		return ulvm_error(-EINVAL, "metadata space map: at most %llu blocks",
		                  SM_MAX_METADATA_BLOCKS);
	if (sm->kind == SM_DATA) {
		int r = check_data_size(sm->tm, nr_blocks);
		if (r)
			return r;
	}
	if (nb > sm->nr_bitmaps) {
		struct index_cpu *ni = realloc(sm->idx, nb * sizeof(*ni));
		if (!ni)
			return ulvm_error(-ENOMEM, "out of memory growing the %s space map",
			                  sm->what);
		memset(ni + sm->nr_bitmaps, 0, (nb - sm->nr_bitmaps) * sizeof(*ni));
		sm->idx = ni;
	}
	/* The last old bitmap gains entries: rewrite it so that its hints cover them. */
	if (sm->nr_blocks % SM_ENTRIES_PER_BITMAP && nr_blocks > sm->nr_blocks)
		sm->rewrite_from = MIN(sm->rewrite_from, sm->nr_bitmaps - 1);
	sm->nr_bitmaps = nb;
	sm->nr_blocks = nr_blocks;
	return 0;
}

/* ---- creation and opening -------------------------------------------------------------- */

static int sm_md_new_block(void *sm, uint64_t *b)
{
	return sm_new_block(sm, b);
}
static int sm_md_inc(void *sm, uint64_t b)
{
	return sm_inc(sm, b);
}
static int sm_md_dec(void *sm, uint64_t b)
{
	return sm_dec(sm, b);
}
static int sm_md_get_count(void *sm, uint64_t b, uint32_t *c)
{
	return sm_get_count(sm, b, c);
}
static int sm_md_commit(void *sm)
{
	return sm_commit(sm);
}
static const struct tm_space_map_ops metadata_sm_ops = {sm_md_new_block, sm_md_inc, sm_md_dec,
                                                        sm_md_get_count, sm_md_commit};

int sm_metadata_create(struct transaction_manager *tm, uint64_t nr_blocks, struct space_map **out)
{
	struct space_map *sm = NULL;
	int r = sm_alloc(SM_METADATA, tm, nr_blocks, &sm);

	if (r)
		return r;
	tm_set_space_map(tm, &metadata_sm_ops, sm);
	if ((r = sm_inc(sm, 0)) || (r = btree_empty(tm, &ref_vt, &sm->ref_root))) {
		tm_set_space_map(tm, NULL, NULL);
		sm_destroy(sm);
		return r;
	}
	*out = sm;
	return 0;
}

/* Every bitmap is a metadata block of its own: refuse a data size the metadata device
 * cannot hold the bitmaps of, before allocating an index for it. */
static int check_data_size(struct transaction_manager *tm, uint64_t nr_blocks)
{
	uint64_t nb = bitmaps_for(nr_blocks), max = bm_nr_blocks(tm_bm(tm));

	if (nb > max)
		return ulvm_error(-ENOSPC,
		                  "data space map: %" PRIu64 " blocks need %" PRIu64
		                  " bitmaps, more than the %" PRIu64
		                  " blocks of the metadata device",
		                  nr_blocks, nb, max);
	return 0;
}

int sm_disk_create(struct transaction_manager *tm, uint64_t nr_blocks, struct space_map **out)
{
	struct space_map *sm = NULL;
	int r = check_data_size(tm, nr_blocks);

	if (r)
		return r;
	r = sm_alloc(SM_DATA, tm, nr_blocks, &sm);

	if (r)
		return r;
	if ((r = btree_empty(tm, &ref_vt, &sm->ref_root)) ||
	    (r = btree_empty(tm, &index_vt, &sm->index_root))) {
		sm_destroy(sm);
		return r;
	}
	*out = sm;
	return 0;
}

int sm_metadata_open(struct transaction_manager *tm, const struct disk_sm_root *root,
                     struct space_map **out)
{
	struct space_map *sm = NULL;
	struct bm_block *blk;
	int r = sm_alloc(SM_METADATA, tm, le64_to_cpu(root->nr_blocks), &sm);

	if (r)
		return r;
	sm->nr_allocated = le64_to_cpu(root->nr_allocated);
	sm->index_root = le64_to_cpu(root->bitmap_root);
	sm->ref_root = le64_to_cpu(root->ref_count_root);
	if ((r = tm_read_lock(tm, sm->index_root, &sm_index_validator, &blk))) {
		sm_destroy(sm);
		return r;
	}
	const struct disk_metadata_index *mi = bm_block_data(blk);
	for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++) {
		sm->idx[bi].blocknr = le64_to_cpu(mi->index[bi].blocknr);
		sm->idx[bi].nr_free = le32_to_cpu(mi->index[bi].nr_free);
		sm->idx[bi].none_free_before = le32_to_cpu(mi->index[bi].none_free_before);
		if (!sm->idx[bi].blocknr)
			r = ulvm_error(-EILSEQ,
			               "metadata block %" PRIu64 ": index entry %" PRIu64
			               " has no bitmap",
			               sm->index_root, bi);
	}
	tm_unlock(tm, blk);
	if (r) {
		sm_destroy(sm);
		return r;
	}
	tm_set_space_map(tm, &metadata_sm_ops, sm);
	*out = sm;
	return 0;
}

struct load_index {
	struct space_map *sm;
	uint64_t next;
};

static int load_index_entry(void *arg, uint64_t key, const void *value)
{
	struct load_index *li = arg;
	struct disk_index_entry ie;

	if (key != li->next || key >= li->sm->nr_bitmaps)
		return ulvm_error(-EILSEQ, "data space map index: unexpected bitmap %" PRIu64, key);
	memcpy(&ie, value, sizeof(ie));
	li->sm->idx[key].blocknr = le64_to_cpu(ie.blocknr);
	li->sm->idx[key].nr_free = le32_to_cpu(ie.nr_free);
	li->sm->idx[key].none_free_before = le32_to_cpu(ie.none_free_before);
	li->next++;
	return 0;
}

int sm_disk_open(struct transaction_manager *tm, const struct disk_sm_root *root,
                 struct space_map **out)
{
	struct space_map *sm = NULL;
	struct load_index li;
	uint64_t nr = le64_to_cpu(root->nr_blocks);
	int r;

	if ((r = check_data_size(tm, nr)))
		return r;
	r = sm_alloc(SM_DATA, tm, nr, &sm);

	if (r)
		return r;
	sm->nr_allocated = le64_to_cpu(root->nr_allocated);
	sm->index_root = le64_to_cpu(root->bitmap_root);
	sm->ref_root = le64_to_cpu(root->ref_count_root);
	li = (struct load_index){sm, 0};
	r = btree_walk(tm, sizeof(struct disk_index_entry), sm->index_root, load_index_entry, &li);
	if (!r && li.next != sm->nr_bitmaps)
		r = ulvm_error(-EILSEQ,
		               "data space map index: %" PRIu64 " bitmaps, expected %" PRIu64,
		               li.next, sm->nr_bitmaps);
	if (r) {
		sm_destroy(sm);
		return r;
	}
	*out = sm;
	return 0;
}
